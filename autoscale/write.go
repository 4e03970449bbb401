package autoscale

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// write writes o's status.autoscale to the preference when it differs from what was read,
// locked on the resourceVersion read, then keeps o's memory and records its events. It
// reports whether it wrote.
func (a *Autoscaler) write(ctx context.Context, rsp *federation.ReplicaSchedulingPreference, o outcome) (bool, error) {
	now := a.opts.Clock.Now()
	st := o.status
	st.ObservedGeneration = rsp.Generation
	for _, c := range o.conds {
		c.Message = fedcond.Truncate(c.Message, fedcond.MaxMessage)
		c.ObservedGeneration = rsp.Generation
		st.Conditions, _ = fedcond.Set(st.Conditions, c, now)
	}
	key := federation.Key{Namespace: rsp.Namespace, Name: rsp.Name}
	mem := a.memoryOf(key)
	wrote := false
	if old := rsp.Status.Autoscale; old == nil || !apiequality.Semantic.DeepEqual(*old, st) {
		if err := a.updateStatus(ctx, rsp, &st); err != nil {
			return false, err
		}
		wrote = true
	}
	if o.history != nil {
		mem.history = *o.history
	}
	a.events(ctx, rsp, mem, o, st)
	return wrote, nil
}

// updateStatus writes st as rsp's status.autoscale (nil: none), keeping the rest of its
// status, guarded by rsp's resourceVersion.
func (a *Autoscaler) updateStatus(ctx context.Context, rsp *federation.ReplicaSchedulingPreference, st *federation.AutoscaleStatus) error {
	next := rsp.DeepCopy()
	next.Status.Autoscale = st
	u, err := federation.ToUnstructured(next)
	if err != nil {
		return fmt.Errorf("autoscale: ReplicaSchedulingPreference %s/%s: %w", rsp.Namespace, rsp.Name, err)
	}
	if st != nil {
		// What the converter drops (empty slices) stays dropped; the rest as set.
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, m, "status", "autoscale")
	}
	if _, err := a.host.UpdateStatus(ctx, federation.ReplicaSchedulingPreferenceGVR, u); err != nil {
		return fmt.Errorf("autoscale: write the status of ReplicaSchedulingPreference %s/%s: %w", rsp.Namespace, rsp.Name, err)
	}
	return nil
}

// events records a changed total (Normal) and a total that cannot be computed (Warning,
// once per reason until it can again).
func (a *Autoscaler) events(ctx context.Context, rsp *federation.ReplicaSchedulingPreference, mem *memory, o outcome, st federation.AutoscaleStatus) {
	if o.changed {
		loop.Event(ctx, a.opts.Events, rsp, federation.EventTypeNormal, ReasonSucceededRescale, o.message)
	}
	active := meta.FindStatusCondition(st.Conditions, federation.ConditionScalingActive)
	switch {
	case active == nil || active.Status == metav1.ConditionTrue:
		mem.warned = ""
	case active.Reason != mem.warned:
		mem.warned = active.Reason
		loop.Event(ctx, a.opts.Events, rsp, federation.EventTypeWarning, active.Reason, active.Message)
	}
}

// off handles a preference without spec.autoscale: its HorizontalPodAutoscalers go and its
// status.autoscale is cleared.
func (a *Autoscaler) off(ctx context.Context, rsp *federation.ReplicaSchedulingPreference) (federation.Result, string, error) {
	key := federation.Key{Namespace: rsp.Namespace, Name: rsp.Name}
	if err := a.removeHPAs(ctx, key, rsp.UID, hpaClusters(rsp.Status.Autoscale, nil)); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	a.forget(key)
	if rsp.Status.Autoscale == nil {
		return federation.Result{}, fedmetrics.OutcomeUnchanged, nil
	}
	if err := a.updateStatus(ctx, rsp, nil); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	return federation.Result{}, fedmetrics.OutcomeWritten, nil
}

// gone handles a preference that is gone or being deleted: the HorizontalPodAutoscalers it
// is known to have written go, and its memory.
func (a *Autoscaler) gone(ctx context.Context, key federation.Key) error {
	mem := a.memoryOf(key)
	if err := a.removeHPAs(ctx, key, mem.owner, mem.hpas); err != nil {
		return err
	}
	a.forget(key)
	return nil
}
