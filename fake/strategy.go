package fake

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The functions in this file stand in for the per-type REST strategies of a real API server
// (k8s.io/kubernetes/pkg/registry/<group>/<resource>/strategy.go and the custom resource
// strategy of k8s.io/apiextensions-apiserver), as of Kubernetes 1.37: which rule
// metadata.name follows, whether an update may omit its resourceVersion, and when
// metadata.generation bumps. Like the tables in resources.go they are functions, not
// package variables, so nothing global can be mutated.

// nameRule returns the rule an object's metadata.name (and its generateName, as a prefix)
// must follow on Create:
//
//   - a DNS label (RFC 1123: at most 63 lower-case alphanumerics and '-') for namespaces,
//     services and statefulsets;
//   - a path segment only (not "." or "..", no '/' or '%') for RBAC roles and bindings,
//     certificatesigningrequests, clustertrustbundles, ipaddresses and apiservices, whose
//     real rules are either that or type-specific (an IP address, "<version>.<group>");
//   - a DNS subdomain (RFC 1123: at most 253 lower-case alphanumerics, '-' and '.') for
//     everything else, custom resources included.
func nameRule(gr schema.GroupResource) apivalidation.ValidateNameFunc {
	switch gr {
	case schema.GroupResource{Resource: "namespaces"},
		schema.GroupResource{Resource: "services"},
		schema.GroupResource{Group: "apps", Resource: "statefulsets"}:
		return apivalidation.NameIsDNSLabel
	case schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
		schema.GroupResource{Group: "certificates.k8s.io", Resource: "clustertrustbundles"},
		schema.GroupResource{Group: "networking.k8s.io", Resource: "ipaddresses"},
		schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}:
		return validatePathSegmentName
	}
	if gr.Group == "rbac.authorization.k8s.io" {
		return validatePathSegmentName
	}
	return apivalidation.NameIsDNSSubdomain
}

// unconditionalUpdate reports whether an update of the built-in resource gr may omit
// metadata.resourceVersion (the strategy's AllowUnconditionalUpdate): the update then applies
// to whatever is stored. Most built-in types allow it. Custom resources (never passed here),
// CRDs and APIServices do not, nor do the built-ins below, whose updates must name the
// resourceVersion they read or fail with 422 Invalid (metadata.resourceVersion: must be
// specified for an update).
func unconditionalUpdate(gr schema.GroupResource) bool {
	switch gr.Group {
	case "apiextensions.k8s.io", "apiregistration.k8s.io", "admissionregistration.k8s.io",
		"coordination.k8s.io", "storagemigration.k8s.io", "internal.apiserver.k8s.io":
		return false
	case "policy":
		return gr.Resource != "poddisruptionbudgets"
	case "storage.k8s.io":
		switch gr.Resource {
		case "csidrivers", "csinodes", "csistoragecapacities", "volumeattachments":
			return false
		}
	case "node.k8s.io":
		return gr.Resource != "runtimeclasses"
	case "certificates.k8s.io":
		return gr.Resource != "clustertrustbundles" && gr.Resource != "podcertificaterequests"
	case "scheduling.k8s.io":
		return gr.Resource == "priorityclasses"
	case "resource.k8s.io":
		return gr.Resource != "resourcepoolstatusrequests" && gr.Resource != "devicetaintrules"
	}
	return true
}

// bumpRule says which changes an update must make to bump metadata.generation.
type bumpRule int

const (
	// bumpNever: updates never bump it (types without a generation, and PriorityClasses, whose
	// strategy sets 1 on create and nothing on update).
	bumpNever bumpRule = iota
	// bumpDesired: any change outside metadata, with status not counting when the resource
	// has a status subresource. This is the custom resource rule verbatim; built-ins compare
	// their desired-state fields (.spec, .template for PodTemplates, .webhooks for webhook
	// configurations), which comes to the same.
	bumpDesired
	// bumpDesiredOrAnnotations: bumpDesired, or an annotation change (Deployments, whose
	// annotations the deployment controller copies to their ReplicaSets).
	bumpDesiredOrAnnotations
	// bumpDesiredOrLabels: bumpDesired, or a label change (EndpointSlices).
	bumpDesiredOrLabels
)

// generationBump returns the bump rule of gr: bumpDesired for custom resources. A built-in
// resource that does not track generation (see tracksGeneration) has bumpNever, except
// CSIDrivers: their strategy sets no generation on create but bumps it, from 0, on a spec
// change.
func generationBump(gr schema.GroupResource, custom bool) bumpRule {
	if custom {
		return bumpDesired
	}
	switch gr {
	case schema.GroupResource{Group: "apps", Resource: "deployments"}:
		return bumpDesiredOrAnnotations
	case schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}:
		return bumpDesiredOrLabels
	case schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:
		return bumpNever
	case schema.GroupResource{Group: "storage.k8s.io", Resource: "csidrivers"}:
		return bumpDesired
	}
	if tracksGeneration(gr) {
		return bumpDesired
	}
	return bumpNever
}

// bumpsGeneration reports whether replacing old by next bumps metadata.generation under rule.
func bumpsGeneration(rule bumpRule, hasStatus bool, old, next *unstructured.Unstructured) bool {
	switch rule {
	case bumpNever:
		return false
	case bumpDesiredOrAnnotations:
		if !equality.Semantic.DeepEqual(old.GetAnnotations(), next.GetAnnotations()) {
			return true
		}
	case bumpDesiredOrLabels:
		if !equality.Semantic.DeepEqual(old.GetLabels(), next.GetLabels()) {
			return true
		}
	}
	return desiredStateChanged(hasStatus, old, next)
}

// desiredStateChanged reports whether anything but metadata changed between old and next;
// status does not count when the resource has a status subresource.
func desiredStateChanged(hasStatus bool, old, next *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		m := make(map[string]any, len(u.Object))
		for k, v := range u.Object {
			switch k {
			case "metadata", "apiVersion", "kind":
				continue
			case "status":
				if hasStatus {
					continue
				}
			}
			m[k] = v
		}
		return m
	}
	return !equality.Semantic.DeepEqual(strip(old), strip(next))
}

// isDaemonSet reports whether gr is apps DaemonSets, which carry their template generation.
func isDaemonSet(gr schema.GroupResource) bool {
	return gr == schema.GroupResource{Group: "apps", Resource: "daemonsets"}
}

// templateGeneration reads a DaemonSet's spec.templateGeneration, which apps/v1 serves as the
// annotation deprecated.daemonset.template.generation; 0 when absent. A value that is not
// an integer fails as the real server's conversion does, with a BadRequest.
func templateGeneration(obj *unstructured.Unstructured) (int64, error) {
	v, ok := obj.GetAnnotations()[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("DaemonSet %q: annotation %s: %v", obj.GetName(), appsv1.DeprecatedTemplateGeneration, err))
	}
	return n, nil
}

func setTemplateGeneration(obj *unstructured.Unstructured, n int64) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(n, 10)
	obj.SetAnnotations(a)
}

// prepareDaemonSetCreate sets the template generation to 1 unless the client gave a higher one.
func prepareDaemonSetCreate(obj *unstructured.Unstructured) error {
	n, err := templateGeneration(obj)
	if err != nil {
		return err
	}
	setTemplateGeneration(obj, max(n, 1))
	return nil
}

// prepareDaemonSetUpdate keeps the stored template generation, whatever the client sent, and
// bumps it when spec.template changes, as the DaemonSet strategy does.
func prepareDaemonSetUpdate(old, next *unstructured.Unstructured) error {
	if _, err := templateGeneration(next); err != nil {
		return err
	}
	n, err := templateGeneration(old)
	if err != nil {
		return err
	}
	oldTemplate, _, _ := unstructured.NestedFieldNoCopy(old.Object, "spec", "template")
	nextTemplate, _, _ := unstructured.NestedFieldNoCopy(next.Object, "spec", "template")
	if !equality.Semantic.DeepEqual(oldTemplate, nextTemplate) {
		n++
	}
	setTemplateGeneration(next, n)
	return nil
}

// nodesGVR is the core Node resource.
func nodesGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
}

// taintNewNode does what kube-apiserver's TaintNodesByCondition admission does to a Node
// created through the API: it adds node.kubernetes.io/not-ready:NoSchedule, unless the Node
// has it already. The node lifecycle controller takes it off once the kubelet reports Ready;
// the fake runs no such controller, so a test that creates a Node takes it off itself (or
// seeds the Node, as a running cluster's). Updates are left alone.
func taintNewNode(obj *unstructured.Unstructured) {
	taints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taints")
	for _, t := range taints {
		if m, ok := t.(map[string]any); ok && m["key"] == "node.kubernetes.io/not-ready" && m["effect"] == "NoSchedule" {
			return
		}
	}
	taints = append(taints, map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
	_ = unstructured.SetNestedSlice(obj.Object, taints, "spec", "taints")
}

// validatePathSegmentName is the name rule of the resources whose names are path segments
// (no "." or "..", no "/" or "%"), as kube-apiserver's path.ValidatePathSegmentName, which
// apimachinery deprecated in favour of a local function.
func validatePathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
