package autoscale

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
)

// Reasons of Distributed mode's conditions.
const (
	// ReasonDistributed: the members' HorizontalPodAutoscalers scale the workload; the
	// message shows their bounds and sum.
	ReasonDistributed = "MemberAutoscalers"
	// ReasonRetainReplicasRequired: the federated object does not keep the members'
	// replicas (spec.retainReplicas), so sync would undo what the members' HPAs do; no HPA
	// runs until it does.
	ReasonRetainReplicasRequired = "RetainReplicasRequired"
)

// ErrNotOurs is returned by an [HPAWriter] for a HorizontalPodAutoscaler of the workload's
// name that the autoscaler did not write: it is never changed or deleted.
var ErrNotOurs = errors.New("autoscale: the HorizontalPodAutoscaler is not the autoscaler's")

// HPAWriter writes the HorizontalPodAutoscalers of Distributed mode in the members. [Members]
// writes through each member's ClusterClient: a push member's own, a pull member's
// agent.HubClient, whose write is an Assignment the member's agent applies.
type HPAWriter interface {
	// ApplyHPA creates hpa in cluster, or updates the one there when it is the autoscaler's
	// (federation.ManagedByLabel and federation.AutoscalerAnnotation naming the same owner)
	// and differs. One that is not the autoscaler's is left alone: an error wrapping
	// [ErrNotOurs].
	ApplyHPA(ctx context.Context, cluster string, hpa *autoscalingv2.HorizontalPodAutoscaler) error
	// DeleteHPA deletes the HorizontalPodAutoscaler namespace/name in cluster when it is the
	// autoscaler's for owner, with its uid and resourceVersion as preconditions. Absent (or
	// not the autoscaler's) is success: nothing of someone else's is deleted.
	DeleteHPA(ctx context.Context, cluster, namespace, name string, owner types.UID) error
}

// distribute is Distributed mode: each scheduled member gets a HorizontalPodAutoscaler with
// its share of the fleet's bounds ([SplitBounds]), the members that left the schedule lose
// theirs, and the status shows the members' sum.
func (a *Autoscaler) distribute(ctx context.Context, w *world, rsp *federation.ReplicaSchedulingPreference) outcome {
	mem := a.memoryOf(w.key)
	mem.owner = rsp.UID
	st := statusOf(rsp)
	st.DesiredReplicas, st.CurrentMetrics = nil, nil
	before := hpaClusters(rsp.Status.Autoscale, mem.hpas)
	if !w.fed.Spec.RetainReplicas {
		err := a.removeHPAs(ctx, w.key, rsp.UID, before)
		st.Clusters = nil
		o := held(&st, ReasonRetainReplicasRequired, fmt.Sprintf(
			"%s %s does not keep its members' replicas (spec.retainReplicas): sync would undo what member HorizontalPodAutoscalers do, so none runs", w.typ.Federated.Kind, w.key))
		o.status, o.err = st, err
		return o
	}
	spec := w.rsp.Spec.Autoscale
	split, err := SplitBounds(SplitInput{
		Key: w.key.String(), Min: *spec.MinReplicas, Max: spec.MaxReplicas, Clusters: names(w.scheduled),
		Preferences: w.rsp.Spec.Clusters, Algorithm: w.rsp.Spec.Algorithm,
	})
	if err != nil {
		o := held(&st, ReasonInvalidPreference, err.Error())
		o.status, o.terminal = st, err
		return o
	}
	var errs []error
	st.Clusters, st.CurrentReplicas = nil, 0
	var lines []string
	for i, b := range split.Clusters {
		e, line, err := a.member(ctx, w, rsp.UID, b, w.samples[i])
		errs = append(errs, err)
		st.Clusters = append(st.Clusters, e)
		st.CurrentReplicas = recommend.AddReplicas(st.CurrentReplicas, *e.CurrentReplicas)
		lines = append(lines, line)
		delete(before, b.Cluster)
	}
	errs = append(errs, a.removeHPAs(ctx, w.key, rsp.UID, before))
	msg := fmt.Sprintf("member HorizontalPodAutoscalers run %d replicas: %s", st.CurrentReplicas, strings.Join(lines, "; "))
	if len(split.Notes) > 0 {
		msg += "; " + strings.Join(split.Notes, "; ")
	}
	return outcome{status: st, err: errors.Join(errs...), conds: []metav1.Condition{
		{Type: federation.ConditionScalingActive, Status: metav1.ConditionTrue, Reason: ReasonDistributed, Message: msg},
	}}
}

// member makes one member's HorizontalPodAutoscaler what its bounds say and reports the
// member: what it runs (never 0 for an HPA that cannot compute its metrics: what runs, as
// last read), its HPA's bounds and wish, and a line for the condition.
func (a *Autoscaler) member(ctx context.Context, w *world, owner types.UID, b Bounds, s Sample) (federation.AutoscaleCluster, string, error) {
	mem := a.memoryOf(w.key)
	n := s.Replicas
	e := federation.AutoscaleCluster{Name: b.Cluster, CurrentReplicas: &n, Message: s.Message}
	e.Stale = s.Message != "" || !s.ClusterReady
	line := fmt.Sprintf("%s %d", b.Cluster, n)
	if b.Max == 0 {
		return e, line + " (no share of maxReplicas)", a.hpas().DeleteHPA(ctx, b.Cluster, w.key.Namespace, w.key.Name, owner)
	}
	lo, hi := b.Min, b.Max
	e.MinReplicas, e.MaxReplicas = &lo, &hi
	line += fmt.Sprintf(" (%d..%d", lo, hi)
	if h := s.HPA; h != nil {
		want := h.Desired
		if !h.Active {
			want = n // an HPA that cannot compute its metrics asks for 0: what runs holds
			line += ", its HPA cannot compute its metrics: " + h.Message
		}
		e.DesiredReplicas = &want
	}
	line += ")"
	if !s.ClusterReady || s.Message != "" {
		return e, line + ", not reached", nil // its HPA stays as it is
	}
	err := a.hpas().ApplyHPA(ctx, b.Cluster, a.hpaFor(w, owner, b))
	switch {
	case errors.Is(err, ErrNotOurs):
		e.Message = err.Error()
		return e, line + ", " + err.Error(), nil
	case err == nil:
		mem.hpas[b.Cluster] = true
	}
	return e, line, err
}

// hpaFor is the HorizontalPodAutoscaler of one member.
func (a *Autoscaler) hpaFor(w *world, owner types.UID, b Bounds) *autoscalingv2.HorizontalPodAutoscaler {
	spec := w.rsp.Spec.Autoscale
	lo := b.Min
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta: metav1.TypeMeta{APIVersion: autoscalingv2.SchemeGroupVersion.String(), Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{
			Name: w.key.Name, Namespace: w.key.Namespace,
			Labels: map[string]string{
				federation.ManagedByLabel: a.opts.Identity, federation.FederatedNameLabel: w.key.Name,
				federation.FederatedNamespaceLabel: w.key.Namespace,
			},
			Annotations: map[string]string{federation.AutoscalerAnnotation: string(owner)},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				APIVersion: w.typ.Target.GroupVersion().String(), Kind: w.typ.Target.Kind, Name: w.key.Name,
			},
			MinReplicas: &lo, MaxReplicas: b.Max,
			Metrics: spec.Metrics, Behavior: spec.Behavior,
		},
	}
}

// hpas is the HPAWriter: Options.Source when it is one, else the push members.
func (a *Autoscaler) hpas() HPAWriter {
	if w, ok := a.opts.Source.(HPAWriter); ok {
		return w
	}
	return Members{Clusters: a.clusters, Identity: a.opts.Identity, Gate: a.opts.Gate}
}

// removeHPAs deletes the autoscaler's HorizontalPodAutoscalers of key in clusters.
func (a *Autoscaler) removeHPAs(ctx context.Context, key federation.Key, owner types.UID, clusters map[string]bool) error {
	var errs []error
	mem := a.memoryOf(key)
	for _, c := range sortedNames(clusters) {
		err := a.hpas().DeleteHPA(ctx, c, key.Namespace, key.Name, owner)
		if err == nil {
			delete(mem.hpas, c)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// hpaClusters is the clusters where the autoscaler's HPAs may be: those status.autoscale
// lists with bounds, and those remembered.
func hpaClusters(st *federation.AutoscaleStatus, remembered map[string]bool) map[string]bool {
	out := map[string]bool{}
	for c := range remembered {
		out[c] = true
	}
	if st != nil {
		for _, c := range st.Clusters {
			if c.MaxReplicas != nil {
				out[c.Name] = true
			}
		}
	}
	return out
}

func names(s []scheduled) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].name
	}
	return out
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ApplyHPA implements [HPAWriter] for push members.
func (m Members) ApplyHPA(ctx context.Context, cluster string, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	c, err := m.Clusters.Client(cluster)
	if err != nil {
		return err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hpa)
	if err != nil {
		return err
	}
	cur, err := c.Get(ctx, HPAGVR, hpa.Namespace, hpa.Name)
	if apierrors.IsNotFound(err) {
		_, err = c.Create(ctx, HPAGVR, &unstructured.Unstructured{Object: obj})
		return err
	}
	if err != nil {
		return err
	}
	if !m.ours(cur.GetLabels(), cur.GetAnnotations(), types.UID(hpa.Annotations[federation.AutoscalerAnnotation])) {
		return fmt.Errorf("%w: %s/%s in cluster %s", ErrNotOurs, hpa.Namespace, hpa.Name, cluster)
	}
	if apiequality.Semantic.DeepEqual(cur.Object["spec"], obj["spec"]) {
		return nil
	}
	next := cur.DeepCopy()
	next.Object["spec"] = obj["spec"]
	_, err = c.Update(ctx, HPAGVR, next)
	return err
}

// DeleteHPA implements [HPAWriter] for push members.
func (m Members) DeleteHPA(ctx context.Context, cluster, namespace, name string, owner types.UID) error {
	c, err := m.Clusters.Client(cluster)
	if err != nil {
		return err
	}
	cur, err := c.Get(ctx, HPAGVR, namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case !m.ours(cur.GetLabels(), cur.GetAnnotations(), owner):
		return nil
	}
	uid, rv := cur.GetUID(), cur.GetResourceVersion()
	// The evidence: ours checked the federation's label and the owner's annotation.
	err = m.Gate.Delete(ctx, c, gate.Write{
		Verb: gate.Delete, Cluster: cluster, Resource: HPAGVR, Object: cur,
		Evidence: gate.Evidence{Mark: gate.Mark{Annotation: federation.AutoscalerAnnotation, Value: string(owner)}},
	}, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// ours reports whether an HPA with these labels and annotations is the autoscaler's for
// owner: the federation's label with this identity, and the owner's uid.
func (m Members) ours(labels, annotations map[string]string, owner types.UID) bool {
	id := m.Identity
	if id == "" {
		id = federation.ManagedByValue
	}
	return labels[federation.ManagedByLabel] == id && owner != "" && annotations[federation.AutoscalerAnnotation] == string(owner)
}
