package fake

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The tables below hold what a real API server's REST strategies decide per built-in
// resource and a fake cannot learn from discovery: which resources track metadata.generation
// and which keep the status they are created with. What is served, with its scope and
// subresources, comes from builtin_resources.txt and the cluster's CRDs (served.go); the
// per-type rules of names, unconditional updates and generation bumps are in strategy.go.
// They are functions, not package variables, so nothing global can be mutated.

// tracksGeneration reports whether objects of the built-in resource gr carry
// metadata.generation (custom resources always do). Only the types whose strategy sets it do
// (Kubernetes 1.37); ConfigMaps, Secrets, Services, Namespaces and Nodes, for instance, never
// have a generation.
func tracksGeneration(gr schema.GroupResource) bool {
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

// resourceConfig is a cluster's overrides of what it serves (see servedLocked) and of
// unconditionalUpdate.
type resourceConfig struct {
	namespaced    map[schema.GroupResource]bool
	status        map[schema.GroupResource]bool
	unconditional map[schema.GroupResource]bool
}

func (rc *resourceConfig) allowsUnconditionalUpdate(gr schema.GroupResource, custom bool) bool {
	if v, ok := rc.unconditional[gr]; ok {
		return v
	}
	return !custom && unconditionalUpdate(gr)
}
