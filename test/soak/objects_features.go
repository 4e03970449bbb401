package soak

import (
	"encoding/base64"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// The objects of the features beyond Federated<Kind> objects (see [Features]).

// Names and labels the features use.
const (
	// teamLabel is a native Deployment's team: "shop" (the policies' own), "other" (another
	// team's, in the same namespaces) or "system" (kube-system's).
	teamLabel = "soak.fedkit.io/team"
	// everyDeployment is the ClusterPropagationPolicy that federates every Deployment, as a
	// platform team's first policy often does: it must not reach kube-system.
	everyDeployment = "every-deployment"
	// kubeFedManagedLabel marks the member objects KubeFed v0.10 made.
	kubeFedManagedLabel = "kubefed.io/managed"
	// systemNamespace is where the host and every member run their own Deployments.
	systemNamespace = "kube-system"
)

// Resources of the native kinds.
var (
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsGVR     = federation.SecretType.TargetGVR()
	claimsGVR      = federation.PersistentVolumeClaimType.TargetGVR()
	deploymentsGVR = federation.DeploymentType.TargetGVR()
)

// depNames are the dependencies of dependency set k: a ConfigMap, a Secret, the Secret an
// override points some clusters' pods at instead, and a PersistentVolumeClaim.
func depNames(k int64) (cm, secret, alt, claim string) {
	return fmt.Sprintf("settings-%d", k), fmt.Sprintf("creds-%d", k), fmt.Sprintf("creds-%d-alt", k), fmt.Sprintf("data-%d", k)
}

// depSets is how many dependency sets each plain namespace has.
func depSets(objects int) int64 { return int64(max(2, objects/100)) }

// withDependencies makes a Deployment template (spec.template's metadata and spec, as
// template returns it) refer to dependency set k: the ConfigMap as envFrom, the Secret as
// env (the path altSecretPath overrides), the claim as a volume.
func withDependencies(tmpl map[string]any, k int64) {
	cm, secret, _, claim := depNames(k)
	pod, _, _ := unstructured.NestedMap(tmpl, "spec", "template", "spec")
	containers, _, _ := unstructured.NestedSlice(pod, "containers")
	c := containers[0].(map[string]any)
	c["envFrom"] = []any{map[string]any{"configMapRef": map[string]any{"name": cm}}}
	c["env"] = []any{map[string]any{"name": "PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": secret, "key": "password"}}}}
	c["volumeMounts"] = []any{map[string]any{"name": "data", "mountPath": "/data"}}
	pod["containers"] = containers
	pod["volumes"] = []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": claim}}}
	_ = unstructured.SetNestedMap(tmpl, pod, "spec", "template", "spec")
}

// altSecretPath is the override path that points a cluster's pods at another Secret.
const altSecretPath = "/spec/template/spec/containers/0/env/0/valueFrom/secretKeyRef/name"

// nativeObject is a native object on the host: a Deployment of the policies (labelled with
// its team, referring to dependency set deps when deps > 0), or a dependency.
func nativeObject(kind string, key federation.Key, v, deps int64, team string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	switch kind {
	case "Deployment":
		tmpl := template(federation.DeploymentType.Federated.Kind, key.Name, v)
		if deps > 0 {
			withDependencies(tmpl, deps)
		}
		u.Object = tmpl
		u.SetAPIVersion("apps/v1")
		u.SetLabels(map[string]string{"app": key.Name, teamLabel: team})
	case "ConfigMap":
		u.Object["data"] = map[string]any{"value": fmt.Sprint(v)}
		u.SetAPIVersion("v1")
	case "Secret":
		u.Object["type"] = "Opaque"
		u.Object["data"] = map[string]any{"password": base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "pw-%d", v))}
		u.SetAPIVersion("v1")
	case "PersistentVolumeClaim":
		u.Object["spec"] = map[string]any{
			"accessModes": []any{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]any{"storage": "1Gi"}},
		}
		u.SetAPIVersion("v1")
	}
	u.SetKind(kind)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return u
}

// nativeGVR is the host resource of a native kind.
func nativeGVR(kind string) schema.GroupVersionResource {
	switch kind {
	case "Deployment":
		return deploymentsGVR
	case "Secret":
		return secretsGVR
	case "PersistentVolumeClaim":
		return claimsGVR
	}
	return configMapsGVR
}

// Policy kinds, as events name them.
const (
	kindPP  = "PropagationPolicy"
	kindCPP = "ClusterPropagationPolicy"
)

// policyGVR is the resource of a policy kind.
func policyGVR(kind string) schema.GroupVersionResource {
	if kind == kindCPP {
		return federation.ClusterPropagationPolicyGVR
	}
	return federation.PropagationPolicyGVR
}

// policyObject is the policy an OpPolicy event writes. e.Value chooses its priority (0 to 3)
// and its selector: by kind only, by the shop team's label, or by the name e.Target; a
// policy named everyDeployment selects every Deployment at priority 0. It places as
// e.Placement says, divides e.Total replicas when set, propagates the dependencies, and
// overrides one cluster's image when e.Cluster is set.
func policyObject(e Event) *unstructured.Unstructured {
	sel := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}
	priority := e.Value % 4
	switch {
	case e.Key.Name == everyDeployment:
		priority = 0
	case (e.Value/4)%3 == 1:
		sel["labelSelector"] = map[string]any{"matchLabels": map[string]any{teamLabel: "shop"}}
	case (e.Value/4)%3 == 2 && e.Target != "":
		sel["name"] = e.Target
	}
	spec := map[string]any{
		"resourceSelectors":     []any{sel},
		"priority":              priority,
		"placement":             e.Placement.render(),
		"propagateDependencies": true,
	}
	if e.Total > 0 {
		spec["scheduling"] = map[string]any{"totalReplicas": e.Total}
	}
	if e.Cluster != "" {
		spec["overrides"] = []any{map[string]any{"clusterName": e.Cluster, "clusterOverrides": []any{overrideOp(federation.DeploymentType.Federated.Kind, e.Value)}}}
	}
	gvr := policyGVR(e.Kind)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": e.Kind,
		"metadata": map[string]any{"name": e.Key.Name},
		"spec":     spec,
	}}
	if e.Kind == kindPP {
		u.SetNamespace(e.Key.Namespace)
	}
	return u
}

// breakPolicy makes policy u invalid in a way the API server's schema accepts and fedkit's
// validation refuses: an override path without its leading slash (how), or a label selector
// operator In without values.
func breakPolicy(u *unstructured.Unstructured, how int64) {
	if how%2 == 0 {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"clusterName": "c-00", "clusterOverrides": []any{
			map[string]any{"op": "replace", "path": "spec/replicas", "value": int64(3)},
		}}}, "spec", "overrides")
		return
	}
	sels, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceSelectors")
	for i := range sels {
		m := sels[i].(map[string]any)
		delete(m, "name")
		m["labelSelector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": teamLabel, "operator": "In"}}}
	}
	_ = unstructured.SetNestedSlice(u.Object, sels, "spec", "resourceSelectors")
}

// kubeFedObject is a KubeFed v0.10 Federated<Kind> (types.kubefed.io) as `kubectl get -o
// yaml` shows it, placed in clusters, for `kubectl fed migrate` to convert.
func kubeFedObject(kind string, key federation.Key, v int64, clusters []string) *unstructured.Unstructured {
	list := make([]any, 0, len(clusters))
	for _, c := range clusters {
		list = append(list, map[string]any{"name": c})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "types.kubefed.io/v1beta1", "kind": kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "generation": int64(3)},
		"spec": map[string]any{
			"template":  template(kind, key.Name, v),
			"placement": map[string]any{"clusters": list},
		},
	}}
}

// kubeFedMember is the member object KubeFed made of a Federated<Kind> (typ) with value v:
// the template, labelled kubefed.io/managed.
func kubeFedMember(typ federation.TypeConfig, key federation.Key, v int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: template(typ.Federated.Kind, key.Name, v)}
	u.SetAPIVersion(typ.Target.GroupVersion().String())
	u.SetKind(typ.Target.Kind)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[kubeFedManagedLabel] = "true"
	u.SetLabels(labels)
	return u
}

// lookalike is an object no federation manages, of kind (a target kind: Deployment or
// ConfigMap) and key, as another team or the cluster's own installer made it.
func lookalike(kind string, key federation.Key, owner string) *unstructured.Unstructured {
	if kind == "ConfigMap" {
		return configMap(key.Namespace, key.Name, map[string]any{"owner": owner})
	}
	u := nativeObject("Deployment", key, 7, 0, owner)
	return u
}

// workloadTemplate is the spec.template an event writes: template's, referring to the
// event's dependency set when it has one.
func workloadTemplate(e Event) map[string]any {
	t := template(e.Kind, e.Key.Name, e.Value)
	if e.Deps > 0 && e.Kind == federation.DeploymentType.Federated.Kind {
		withDependencies(t, e.Deps)
	}
	return t
}

// pointAtAltSecret adds to cluster's override of u the operation that points its pods at
// dependency set k's other Secret.
func pointAtAltSecret(u *unstructured.Unstructured, cluster string, k int64) {
	_, _, alt, _ := depNames(k)
	list, _, _ := unstructured.NestedSlice(u.Object, "spec", "overrides")
	for i, x := range list {
		m, _ := x.(map[string]any)
		if m["clusterName"] != cluster {
			continue
		}
		ops, _ := m["clusterOverrides"].([]any)
		m["clusterOverrides"] = append(slices.Clone(ops), map[string]any{"op": "replace", "path": altSecretPath, "value": alt})
		list[i] = m
	}
	_ = unstructured.SetNestedSlice(u.Object, list, "spec", "overrides")
}

// stagedRollout is the spec.rollout of a workload with a staged rollout: the gold clusters
// first, as a canary that must be ready for 20s within two minutes, then every cluster; a
// revision that fails is rolled back.
func stagedRollout() map[string]any {
	return map[string]any{
		"autoRollback": true,
		"stages": []any{
			map[string]any{"name": "canary", "clusterSelector": map[string]any{"matchLabels": map[string]any{tierLabel: "gold"}},
				"minReadySeconds": int64(20), "progressDeadlineSeconds": int64(120)},
			map[string]any{"name": "everyone", "percentage": int64(100)},
		},
	}
}
