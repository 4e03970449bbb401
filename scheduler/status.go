package scheduler

import (
	"context"
	"fmt"
	"maps"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// write sets status.schedule (unless schedule is nil: keep what is there) and the Scheduled
// condition on u, and writes the status only when one of them changed. It reports whether it
// wrote. Other loops' status fields are left as they are; a Conflict (another loop wrote
// meanwhile) is returned for a retry. With Options.StatusWriter the change is handed to it,
// merged with the other loops' changes to the object.
func (s *Scheduler) write(ctx context.Context, u *unstructured.Unstructured, schedule *federation.Schedule, cond metav1.Condition) (bool, error) {
	old, _ := u.Object["status"].(map[string]any)
	status := maps.Clone(old)
	if status == nil {
		status = map[string]any{}
	}
	mutate := func(status map[string]any) error { _, err := s.setStatus(status, schedule, cond); return err }
	changed, err := s.setStatus(status, schedule, cond)
	if err != nil || !changed {
		return false, err
	}
	if w := s.opts.StatusWriter; w != nil {
		if err := w.WriteStatus(fedmetrics.LoopScheduler, s.typ.FederatedGVR(), u, mutate); err != nil {
			return false, fmt.Errorf("scheduler: status of %s %s/%s: %w", s.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
		}
		return true, nil
	}
	out := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
	out.Object["status"] = status
	if _, err := s.host.UpdateStatus(ctx, s.typ.FederatedGVR(), out); err != nil {
		return false, fmt.Errorf("scheduler: write status of %s %s/%s: %w", s.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}

// setStatus sets the scheduler's fields in status, a copy it may change (its maps and lists
// are replaced, never changed in place): status.schedule unless schedule is nil, and the
// Scheduled condition, every other condition kept. It reports whether either changed.
func (s *Scheduler) setStatus(status map[string]any, schedule *federation.Schedule, cond metav1.Condition) (bool, error) {
	var old struct {
		Schedule   *federation.Schedule `json:"schedule,omitempty"`
		Conditions []metav1.Condition   `json:"conditions,omitempty"`
	}
	// A status that does not decode is replaced field by field below.
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(status, &old)
	conditions, changedCond := fedcond.Set(old.Conditions, cond, s.opts.Clock.Now())
	changedSchedule := schedule != nil && !apiequality.Semantic.DeepEqual(old.Schedule, schedule)
	if !changedCond && !changedSchedule {
		return false, nil
	}
	if changedSchedule {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(schedule)
		if err != nil {
			return false, fmt.Errorf("scheduler: encode schedule: %w", err)
		}
		status["schedule"] = m
	}
	list := make([]any, 0, len(conditions))
	for i := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i])
		if err != nil {
			return false, fmt.Errorf("scheduler: encode condition: %w", err)
		}
		list = append(list, m)
	}
	status["conditions"] = list
	return true, nil
}
