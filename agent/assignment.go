package agent

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/fedkit/fedkit/federation"
)

// leaseGVR addresses coordination.k8s.io/v1 Leases.
var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// decodeAssignment decodes an Assignment read from the host.
func decodeAssignment(u *unstructured.Unstructured) (*federation.Assignment, error) {
	a := &federation.Assignment{}
	if err := federation.FromUnstructured(u, a); err != nil {
		return nil, fmt.Errorf("agent: Assignment %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return a, nil
}

// present is the member object as its Assignment shows it to the host's loops:
//
//   - the agent's report of it (status.object), status included; until the agent has
//     reported, the manifest;
//   - while a Delete is not carried out, marked as being deleted (deletionTimestamp);
//   - while an Orphan is not carried out, the manifest (the object without the
//     federation's labels: no longer the federation's);
//   - its resourceVersion and uid are the Assignment's, so writes locked on them
//     (Update's version, Delete's preconditions) are locked on the Assignment.
func present(a *federation.Assignment) *unstructured.Unstructured {
	src := a.Status.Object.Object
	if src == nil || a.Spec.Change == federation.AssignmentOrphan {
		src = a.Spec.Manifest.Object
	}
	obj := &unstructured.Unstructured{Object: deepCopy(src)}
	if obj.Object == nil {
		obj.Object = map[string]any{}
	}
	obj.SetResourceVersion(a.ResourceVersion)
	obj.SetUID(a.UID)
	if a.Spec.Change == federation.AssignmentDelete && obj.GetDeletionTimestamp() == nil {
		at := a.CreationTimestamp
		obj.SetDeletionTimestamp(&at)
	}
	return obj
}

// done reports whether the agent has carried out a's Delete or Orphan: the member object
// is gone, or no longer the federation's, and the Assignment may go.
func done(a *federation.Assignment) bool {
	if a.Spec.Change == federation.AssignmentApply || a.Status.ObservedGeneration != a.Generation {
		return false
	}
	return meta.IsStatusConditionTrue(a.Status.Conditions, federation.ConditionApplied)
}

// failure returns the agent's report that it could not carry out a's current spec (the
// member refused a write, or the Assignment is invalid), nil when it did not report one.
// Reasons sync decides itself from the reported object (AlreadyExists, ManagedByOther,
// WaitingForRemoval) are not failures.
func failure(a *federation.Assignment) error {
	if a.Status.ObservedGeneration != a.Generation {
		return nil
	}
	c := meta.FindStatusCondition(a.Status.Conditions, federation.ConditionApplied)
	if c == nil || c.Status != metav1.ConditionFalse || (c.Reason != ReasonFailed && c.Reason != ReasonInvalidAssignment) {
		return nil
	}
	return fmt.Errorf("the agent of the pull cluster could not carry out %s: %s", a.Name, c.Message)
}

// absent reports whether the agent reported that it could not create a's object: the member
// has none.
func absent(a *federation.Assignment) bool {
	return a.Spec.Change == federation.AssignmentApply && a.Status.Object.Object == nil && failure(a) != nil
}

// manifestOf is obj as an Assignment carries it: without status and without what its
// server sets (resourceVersion, uid, generation, creation and deletion times, managed
// fields), which are the member's.
func manifestOf(obj *unstructured.Unstructured) map[string]any {
	m := deepCopy(obj.Object)
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, f := range []string{"resourceVersion", "uid", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"} {
			delete(md, f)
		}
	}
	return m
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// parseFields parses a field selector of equalities.
func parseFields(s string) (map[string]string, error) {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range sel.Requirements() {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			return nil, fmt.Errorf("field selector %q: only equalities are served for a pull cluster", s)
		}
		out[r.Field] = r.Value
	}
	return out, nil
}

// leaseTimes returns a Lease's renew time and duration (zero when absent).
func leaseTimes(u *unstructured.Unstructured) (renewed time.Time, duration time.Duration) {
	if s, ok, _ := unstructured.NestedString(u.Object, "spec", "renewTime"); ok {
		var t metav1.MicroTime
		if err := t.UnmarshalQueryParameter(s); err == nil {
			renewed = t.Time
		}
	}
	if d, ok, _ := unstructured.NestedInt64(u.Object, "spec", "leaseDurationSeconds"); ok {
		duration = time.Duration(d) * time.Second
	}
	return renewed, duration
}
