package scheduler

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// write sets status.schedule (unless schedule is nil: keep what is there) and the Scheduled
// condition on u, and writes the status only when one of them changed. It reports whether it
// wrote. Other loops' status fields are left as they are; a Conflict (another loop wrote
// meanwhile) is returned for a retry.
func (s *Scheduler) write(ctx context.Context, u *unstructured.Unstructured, schedule *federation.Schedule, cond metav1.Condition) (bool, error) {
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	var old struct {
		Schedule   *federation.Schedule `json:"schedule,omitempty"`
		Conditions []metav1.Condition   `json:"conditions,omitempty"`
	}
	if status != nil {
		// A status that does not decode is replaced field by field below.
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(status, &old)
	}
	conditions, changedCond := fedcond.Set(old.Conditions, cond, s.opts.Clock.Now())
	changedSchedule := schedule != nil && !apiequality.Semantic.DeepEqual(old.Schedule, schedule)
	if !changedCond && !changedSchedule {
		return false, nil
	}

	out := u.DeepCopy()
	if changedSchedule {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(schedule)
		if err != nil {
			return false, fmt.Errorf("scheduler: encode schedule: %w", err)
		}
		if err := unstructured.SetNestedMap(out.Object, m, "status", "schedule"); err != nil {
			return false, fmt.Errorf("scheduler: set status.schedule: %w", err)
		}
	}
	list := make([]any, 0, len(conditions))
	for i := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i])
		if err != nil {
			return false, fmt.Errorf("scheduler: encode condition: %w", err)
		}
		list = append(list, m)
	}
	if err := unstructured.SetNestedSlice(out.Object, list, "status", "conditions"); err != nil {
		return false, fmt.Errorf("scheduler: set status.conditions: %w", err)
	}
	if _, err := s.host.UpdateStatus(ctx, s.typ.FederatedGVR(), out); err != nil {
		return false, fmt.Errorf("scheduler: write status of %s %s/%s: %w", s.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}
