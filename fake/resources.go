package fake

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// The tables below hold what a real API server learns from its REST storage and CRDs: which
// resources are cluster-scoped, which have a status subresource, and which track
// metadata.generation. A fake cluster has no discovery, so it uses these defaults; scope and
// the status subresource can be overridden per cluster with [Cluster.SetNamespaced] and
// [Cluster.SetStatusSubresource]. The per-type rules of the real server's REST strategies
// (names, unconditional updates, generation bumps) are in strategy.go.
// They are functions, not package variables, so nothing global can be mutated.

// clusterScoped lists the common cluster-scoped resources. Every other resource is namespaced.
func clusterScoped(gr schema.GroupResource) bool {
	switch gr.Group {
	case "":
		return gr.Resource == "namespaces" || gr.Resource == "nodes" ||
			gr.Resource == "persistentvolumes" || gr.Resource == "componentstatuses"
	case "rbac.authorization.k8s.io":
		return gr.Resource == "clusterroles" || gr.Resource == "clusterrolebindings"
	case "apiextensions.k8s.io":
		return gr.Resource == "customresourcedefinitions"
	case "apiregistration.k8s.io":
		return gr.Resource == "apiservices"
	case "storage.k8s.io":
		return gr.Resource == "storageclasses" || gr.Resource == "csidrivers" ||
			gr.Resource == "csinodes" || gr.Resource == "volumeattachments"
	case "scheduling.k8s.io":
		return gr.Resource == "priorityclasses"
	case "admissionregistration.k8s.io":
		return gr.Resource == "mutatingwebhookconfigurations" ||
			gr.Resource == "validatingwebhookconfigurations" ||
			gr.Resource == "validatingadmissionpolicies" ||
			gr.Resource == "validatingadmissionpolicybindings"
	case "certificates.k8s.io":
		return gr.Resource == "certificatesigningrequests"
	case "networking.k8s.io":
		return gr.Resource == "ingressclasses"
	case "node.k8s.io":
		return gr.Resource == "runtimeclasses"
	case "core.federation.k8s.io":
		return gr.Resource == "clusters"
	}
	return false
}

// statusSubresource reports whether gr has a status subresource. Custom resources are assumed
// to have one (fedkit's CRDs all do); among built-ins, these are the resources whose REST
// storage serves /status in Kubernetes 1.37.
func statusSubresource(gr schema.GroupResource) bool {
	if !builtin(gr) {
		return true
	}
	switch gr.Group {
	case "":
		switch gr.Resource {
		case "namespaces", "nodes", "persistentvolumes", "persistentvolumeclaims", "pods",
			"replicationcontrollers", "resourcequotas", "services":
			return true
		}
	case "apps":
		return gr.Resource != "controllerrevisions"
	case "autoscaling":
		return gr.Resource == "horizontalpodautoscalers"
	case "batch":
		return gr.Resource == "jobs" || gr.Resource == "cronjobs"
	case "certificates.k8s.io":
		return gr.Resource == "certificatesigningrequests" || gr.Resource == "podcertificaterequests"
	case "networking.k8s.io":
		return gr.Resource == "ingresses" || gr.Resource == "servicecidrs"
	case "policy":
		return gr.Resource == "poddisruptionbudgets"
	case "flowcontrol.apiserver.k8s.io":
		return true
	case "admissionregistration.k8s.io":
		return gr.Resource == "validatingadmissionpolicies"
	case "resource.k8s.io":
		return gr.Resource == "resourceclaims" || gr.Resource == "devicetaintrules"
	case "storage.k8s.io":
		return gr.Resource == "volumeattachments"
	case "apiextensions.k8s.io", "apiregistration.k8s.io":
		return true
	}
	return false
}

// builtin reports whether gr is served by the API server's own REST storage rather than a CRD.
// Built-in types follow per-type rules for generation; custom resources follow the CRD rule.
func builtin(gr schema.GroupResource) bool {
	switch gr.Group {
	case "apiextensions.k8s.io", "apiregistration.k8s.io":
		return true
	}
	return scheme.Scheme.IsGroupRegistered(gr.Group)
}

// tracksGeneration reports whether objects of gr carry metadata.generation. Custom resources
// always do. Among built-ins only the types whose strategy sets it do (Kubernetes 1.37);
// ConfigMaps, Secrets, Services, Namespaces and Nodes, for instance, never have a generation.
func tracksGeneration(gr schema.GroupResource) bool {
	if !builtin(gr) {
		return true
	}
	switch gr.Group {
	case "":
		return gr.Resource == "pods" || gr.Resource == "podtemplates" || gr.Resource == "replicationcontrollers"
	case "apps":
		return gr.Resource != "controllerrevisions"
	case "autoscaling":
		return gr.Resource == "horizontalpodautoscalers"
	case "batch":
		return gr.Resource == "jobs" || gr.Resource == "cronjobs"
	case "discovery.k8s.io":
		return gr.Resource == "endpointslices"
	case "networking.k8s.io":
		return gr.Resource == "ingresses" || gr.Resource == "ingressclasses" || gr.Resource == "networkpolicies"
	case "policy":
		return gr.Resource == "poddisruptionbudgets"
	case "scheduling.k8s.io":
		return gr.Resource == "priorityclasses"
	case "resource.k8s.io":
		return gr.Resource == "deviceclasses" || gr.Resource == "devicetaintrules" || gr.Resource == "resourceslices"
	case "admissionregistration.k8s.io", "flowcontrol.apiserver.k8s.io":
		return true
	case "apiextensions.k8s.io":
		return gr.Resource == "customresourcedefinitions"
	}
	return false
}

// keepsStatusOnCreate reports whether Create stores the status it is given. Real servers drop
// it for resources with a status subresource (it must be written through /status), except for
// Nodes, whose kubelet registers them with a status.
func keepsStatusOnCreate(gr schema.GroupResource) bool {
	return gr.Group == "" && gr.Resource == "nodes"
}

// resourceConfig is a cluster's overrides of the tables above and of unconditionalUpdate.
type resourceConfig struct {
	namespaced    map[schema.GroupResource]bool
	status        map[schema.GroupResource]bool
	unconditional map[schema.GroupResource]bool
}

func (rc *resourceConfig) isNamespaced(gr schema.GroupResource) bool {
	if v, ok := rc.namespaced[gr]; ok {
		return v
	}
	return !clusterScoped(gr)
}

func (rc *resourceConfig) hasStatus(gr schema.GroupResource) bool {
	if v, ok := rc.status[gr]; ok {
		return v
	}
	return statusSubresource(gr)
}

func (rc *resourceConfig) allowsUnconditionalUpdate(gr schema.GroupResource) bool {
	if v, ok := rc.unconditional[gr]; ok {
		return v
	}
	return unconditionalUpdate(gr)
}
