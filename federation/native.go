package federation

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// hostAnnotations are prefixes of the annotations a host's clients and controllers keep on a
// native object. They say nothing about a member's copy, and fedkit's own never travel.
var hostAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"deployment.kubernetes.io/revision",
	"deprecated.daemonset.template.generation",
	"pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/",
	"federation.k8s.io/",
}

// NativeTemplate returns a native host object as a Federated<Kind>'s spec.template: its
// content with labels and annotations, and nothing the host's servers or controllers gave it.
// Gone are apiVersion and kind (the type gives them), status, server metadata (uid,
// resourceVersion, generation, timestamps, owners, finalizers, managedFields), the host's
// bookkeeping annotations and fedkit's own, a Service's clusterIP(s), a Job's generated
// selector and labels, a ServiceAccount's token secrets and a PVC's bound volume. Package
// propagation (policies) and package dependencies both federate native objects through it.
func NativeTemplate(native *unstructured.Unstructured) map[string]any {
	t := runtime.DeepCopyJSON(native.Object)
	delete(t, "apiVersion")
	delete(t, "kind")
	delete(t, "status")
	meta := map[string]any{}
	if l := native.GetLabels(); len(l) > 0 {
		labels := make(map[string]any, len(l))
		for k, v := range l {
			labels[k] = v
		}
		meta["labels"] = labels
	}
	ann := map[string]any{}
	for k, v := range native.GetAnnotations() {
		if !slices.ContainsFunc(hostAnnotations, func(p string) bool { return strings.HasPrefix(k, p) }) {
			ann[k] = v
		}
	}
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	delete(t, "metadata")
	if len(meta) > 0 {
		t["metadata"] = meta
	}
	switch native.GroupVersionKind().GroupKind().String() {
	case "Service":
		unstructured.RemoveNestedField(t, "spec", "clusterIP")
		unstructured.RemoveNestedField(t, "spec", "clusterIPs")
	case "Job.batch":
		if manual, _, _ := unstructured.NestedBool(t, "spec", "manualSelector"); !manual {
			unstructured.RemoveNestedField(t, "spec", "selector")
			for _, k := range []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"} {
				unstructured.RemoveNestedField(t, "spec", "template", "metadata", "labels", k)
			}
		}
	case "ServiceAccount":
		delete(t, "secrets")
	case "PersistentVolumeClaim":
		unstructured.RemoveNestedField(t, "spec", "volumeName")
	}
	return t
}

// WithTemplate returns a copy of native with the content of template, a spec.template that
// [NativeTemplate] made from a version of it: what NativeTemplate keeps (content, labels,
// annotations) is template's; what it leaves out stays native's (server metadata, status,
// the host's bookkeeping and fedkit's annotations, a Service's cluster IPs, a Job's
// generated selector and labels, a ServiceAccount's token secrets, a PVC's bound volume).
// NativeTemplate(WithTemplate(native, t)) is t. sync's Rollback of a generated
// Federated<Kind> restores the native object the user owns with it.
func WithTemplate(native *unstructured.Unstructured, template map[string]any) *unstructured.Unstructured {
	out := native.DeepCopy()
	for k := range out.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
		default:
			delete(out.Object, k)
		}
	}
	t := runtime.DeepCopyJSON(template)
	for k, v := range t {
		if k != "metadata" {
			out.Object[k] = v
		}
	}
	labels, _, _ := unstructured.NestedStringMap(t, "metadata", "labels")
	out.SetLabels(labels)
	ann, _, _ := unstructured.NestedStringMap(t, "metadata", "annotations")
	for k, v := range native.GetAnnotations() {
		if slices.ContainsFunc(hostAnnotations, func(p string) bool { return strings.HasPrefix(k, p) }) {
			if ann == nil {
				ann = map[string]string{}
			}
			ann[k] = v
		}
	}
	out.SetAnnotations(ann)
	// What NativeTemplate leaves out of a kind's content stays native's.
	var kept [][]string
	switch native.GroupVersionKind().GroupKind().String() {
	case "Service":
		kept = [][]string{{"spec", "clusterIP"}, {"spec", "clusterIPs"}}
	case "Job.batch":
		if manual, _, _ := unstructured.NestedBool(t, "spec", "manualSelector"); !manual {
			kept = [][]string{{"spec", "selector"}}
			for _, k := range []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"} {
				kept = append(kept, []string{"spec", "template", "metadata", "labels", k})
			}
		}
	case "ServiceAccount":
		kept = [][]string{{"secrets"}}
	case "PersistentVolumeClaim":
		kept = [][]string{{"spec", "volumeName"}}
	}
	for _, f := range kept {
		if v, ok, _ := unstructured.NestedFieldCopy(native.Object, f...); ok {
			_ = unstructured.SetNestedField(out.Object, v, f...) // a non-object on the way: the template's stays
		}
	}
	return out
}
