package federation

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/fedkit/fedkit/internal/labelselector"
)

// ValidateMember checks a member object of a workload kind (apps/v1 Deployment, StatefulSet,
// DaemonSet, ReplicaSet; batch/v1 Job) by the rules its API server refuses every create
// for, with the server's field paths and messages: a selector (required, not empty, valid)
// that matches the pod template's labels, containers with a name and an image, and a Job's
// restartPolicy (OnFailure or Never). A template that fails them fails in every cluster, and
// no retry helps. Other kinds return nil: their server's rules are its own.
func ValidateMember(obj *unstructured.Unstructured) field.ErrorList {
	gk := obj.GroupVersionKind().GroupKind()
	job := gk.Group == "batch" && gk.Kind == "Job"
	switch {
	case job:
	case gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet" || gk.Kind == "ReplicaSet"):
	default:
		return nil
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	podLabels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "labels")
	raw, hasSelector, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	switch {
	case !hasSelector && !job: // a Job's selector is generated from its uid
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	case hasSelector:
		var sel metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
			errs = append(errs, field.Invalid(spec.Child("selector"), raw, err.Error()))
			break
		}
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 && !job {
			errs = append(errs, field.Invalid(spec.Child("selector"), raw, "empty selector is invalid for "+strings.ToLower(gk.Kind)))
			break
		}
		if verrs := labelselector.Validate(&sel, spec.Child("selector")); len(verrs) > 0 {
			errs = append(errs, verrs...)
			break
		}
		s, err := labelselector.Parse(&sel, spec.Child("selector"))
		if err == nil && !s.Matches(labels.Set(podLabels)) {
			errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), podLabels, "`selector` does not match template `labels`"))
		}
	}
	pod := spec.Child("template", "spec")
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		errs = append(errs, field.Required(pod.Child("containers"), ""))
	}
	for i, c := range containers {
		m, _ := c.(map[string]any)
		for _, f := range []string{"name", "image"} {
			if s, _ := m[f].(string); s == "" {
				errs = append(errs, field.Required(pod.Child("containers").Index(i).Child(f), ""))
			}
		}
	}
	if job {
		switch p, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "restartPolicy"); p {
		case "OnFailure", "Never":
		case "":
			errs = append(errs, field.Required(pod.Child("restartPolicy"), `valid values: "OnFailure", "Never"`))
		default:
			errs = append(errs, field.NotSupported(pod.Child("restartPolicy"), p, []string{"OnFailure", "Never"}))
		}
	}
	return errs
}

// UnknownFields returns the paths of the fields of obj, an object of a built-in kind (one
// client-go's scheme knows: every kind a kube-apiserver serves), that its Go type does not
// have ("spec.template.spec.containers[0].imagePullPolicyy"), sorted. It finds them as that
// server does, by decoding obj strictly into the type of its apiVersion and kind. A field of
// a kind's older version is one too (an Ingress's serviceName in networking.k8s.io/v1).
// Other kinds (custom resources) return nil: their schema is their CRD's.
//
// A member's API server drops such fields (its field validation "Warn", the default) and
// answers with a Warning for each, worded as [UnknownFieldWarning] words it.
func UnknownFields(obj *unstructured.Unstructured) []string {
	typed, err := clientscheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return nil
	}
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, typed, true)
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil // none, or not decodable at all: the server refuses it, with its own error
	}
	var out []string
	for _, e := range strict.Errors() {
		if p, ok := strings.CutPrefix(e.Error(), `unknown field "`); ok {
			out = append(out, strings.TrimSuffix(p, `"`))
		}
	}
	return out
}

// UnknownFieldWarning is the Warning a kube-apiserver answers with when it drops the field at
// path: `unknown field "spec.x"`.
func UnknownFieldWarning(path string) string {
	return fmt.Sprintf("unknown field %q", path)
}
