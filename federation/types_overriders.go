package federation

import (
	corev1 "k8s.io/api/core/v1"
)

// The typed overriders are fields of [ClusterOverride] for the changes users make most often
// (Karmada offers most of them). Each is rendered by package override into RFC 6902
// operations against the object being rendered, so there is one way changes are applied and
// one set of errors. In YAML:
//
//	overrides:
//	- clusterSelector: {matchLabels: {region: eu}}
//	  images:
//	  - registry: mirror.eu.example.com       # every container and init container
//	  labels:
//	    set: {example.com/region: eu}
//	- clusterName: cluster-gcp-eu-west
//	  replicas: 4
//	  images:
//	  - {containerName: app, tag: "2.15.0-rc1"}
//	  containers:
//	  - name: app
//	    args: [--region=eu-west]
//	    env: [{name: LOG_LEVEL, value: debug}]
//	    removeEnv: [FEATURE_X]
//	  annotations:
//	    remove: [example.com/canary]

// ImageOverride rewrites parts of the image reference of containers and init containers
// (those of the pod template: spec.template.spec for workloads, spec.jobTemplate.spec.
// template.spec for CronJobs, spec for Pods). Each non-empty field replaces that part; the
// others are kept. Image references follow the Docker rules: "nginx" is
// docker.io/library/nginx:latest, a first component with a "." or ":" or equal to
// "localhost" is a registry (which may have a port), and a digest pins the content.
//
// Setting Tag drops a digest the image had, and setting Digest drops its tag, unless both
// are set (then the image is repository:tag@digest). Changing the registry of a Docker Hub
// image spells out its repository ("nginx" with registry mirror.example.com becomes
// mirror.example.com/library/nginx). An image that cannot be parsed is an error.
type ImageOverride struct {
	// ContainerName selects the container or init container of that name; empty selects
	// every container and init container.
	// +optional
	ContainerName string `json:"containerName,omitempty"`
	// Registry replaces the registry host, with its port if any, e.g. mirror.example.com:5000.
	// +optional
	Registry string `json:"registry,omitempty"`
	// Repository replaces the path within the registry, e.g. library/nginx.
	// +optional
	Repository string `json:"repository,omitempty"`
	// Tag replaces the tag, e.g. 1.27.2.
	// +optional
	Tag string `json:"tag,omitempty"`
	// Digest replaces the digest, e.g. sha256:<64 hex digits>.
	// +optional
	Digest string `json:"digest,omitempty"`
}

// ContainerOverride changes one container (or init container) of the pod template, by name.
// A container that does not exist is an error.
type ContainerOverride struct {
	// Name of the container or init container.
	Name string `json:"name"`
	// Command replaces the container's command (empty keeps it; to clear it use a remove
	// operation in ClusterOverrides).
	// +optional
	Command []string `json:"command,omitempty"`
	// Args replaces the container's args (empty keeps them).
	// +optional
	Args []string `json:"args,omitempty"`
	// Env sets environment variables: a variable of the same name is replaced in place,
	// others are appended in this order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`
	// RemoveEnv removes environment variables by name; absent ones are ignored.
	// +optional
	RemoveEnv []string `json:"removeEnv,omitempty"`
}

// MapOverride sets and removes keys of a string map (labels or annotations). Set wins over
// what the template has; removing a key the object does not have is not an error. A key may
// not be both set and removed.
type MapOverride struct {
	// Set adds the keys, or replaces their values.
	// +optional
	Set map[string]string `json:"set,omitempty"`
	// Remove deletes the keys.
	// +optional
	Remove []string `json:"remove,omitempty"`
}
