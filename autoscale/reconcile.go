package autoscale

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Reasons of the ScalingActive condition the loop sets besides [Decide]'s.
const (
	// ReasonInvalidPreference: the preference is invalid; the total holds.
	ReasonInvalidPreference = "InvalidPreference"
	// ReasonUnsupportedTarget: spec.targetKind names no type whose replicas are divided.
	ReasonUnsupportedTarget = "UnsupportedTarget"
	// ReasonTargetNotFound: the federated object does not exist (yet).
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonSucceededRescale is the reason of the Event of a changed total.
	ReasonSucceededRescale = "SuccessfulRescale"
)

// errReadTimeout is the cause of a member read that did not answer within ReadTimeout.
var errReadTimeout = errors.New("autoscale: member read timed out")

// Reconcile makes one pass over the preference of key: it reads the preference, its
// federated object and the Clusters from the host, samples the members the workload is
// scheduled in (Options.Source), decides ([Decide]) and writes status.autoscale when it
// changed, guarded by the resourceVersion read (a Conflict is retried). In Distributed mode
// it writes the members' HorizontalPodAutoscalers instead of a total.
//
// A preference without spec.autoscale has its status.autoscale cleared (and its
// HorizontalPodAutoscalers deleted). An invalid preference, or a targetKind the Autoscaler
// does not know, is reported in the ScalingActive condition and an Event; the total holds
// and the error is terminal. The Result asks for a pass after Options.ResyncPeriod while the
// preference is autoscaled; it is ignored when the error is not nil.
func (a *Autoscaler) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return a.reconcileFrom(ctx, a.host, key)
}

// reconcileFrom is Reconcile reading the host through r: the host itself, or Run's caches.
func (a *Autoscaler) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	p := loop.Pass{Loop: fedmetrics.LoopAutoscale, Type: kindRSP, Clock: a.opts.Clock, Logger: a.opts.Logger, Observe: a.reconciles.Observe}
	return p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) {
		return a.pass(ctx, r, key)
	})
}

// pass is one pass; it returns the metrics outcome.
func (a *Autoscaler) pass(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, string, error) {
	u, err := r.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	switch {
	case apierrors.IsNotFound(err):
		return federation.Result{}, fedmetrics.OutcomeGone, a.gone(ctx, key)
	case err != nil:
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeInvalid, federation.Terminal(fmt.Errorf("autoscale: ReplicaSchedulingPreference %s: %w", key, err))
	}
	if rsp.DeletionTimestamp != nil {
		return federation.Result{}, fedmetrics.OutcomeGone, a.gone(ctx, key)
	}
	if rsp.Spec.Autoscale == nil {
		return a.off(ctx, rsp)
	}
	st := a.decide(ctx, r, key, rsp)
	wrote, err := a.write(ctx, rsp, st)
	res := federation.Result{RequeueAfter: a.opts.ResyncPeriod}
	switch {
	case err != nil:
		return res, fedmetrics.OutcomeError, err
	case st.terminal != nil:
		return res, fedmetrics.OutcomeInvalid, federation.Terminal(st.terminal)
	case st.err != nil:
		return res, fedmetrics.OutcomeError, st.err
	case wrote:
		return res, fedmetrics.OutcomeWritten, nil
	}
	return res, fedmetrics.OutcomeUnchanged, nil
}

// outcome is what a pass decided for one preference, before it writes.
type outcome struct {
	// status is the new status.autoscale, conditions without their timestamps.
	status federation.AutoscaleStatus
	conds  []metav1.Condition
	// changed reports a new total, with the message of its Event.
	changed bool
	message string
	// history is the memory to keep once the status is written.
	history *History
	// terminal is invalid input (the key waits for a change); err a failure to retry.
	terminal, err error
}

// held is an outcome where the total holds for reason.
func held(st *federation.AutoscaleStatus, reason, msg string) outcome {
	o := outcome{conds: []metav1.Condition{{Type: federation.ConditionScalingActive, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}}
	if st != nil {
		o.status = *st.DeepCopy()
	}
	return o
}

// decide reads what the preference needs and decides its status.
func (a *Autoscaler) decide(ctx context.Context, r federation.Reader, key federation.Key, rsp *federation.ReplicaSchedulingPreference) outcome {
	work := rsp.DeepCopy()
	federation.DefaultReplicaSchedulingPreference(work)
	if errs := federation.ValidateReplicaSchedulingPreference(work); len(errs) > 0 {
		err := federation.NewInvalidError(kindRSP, key, errs)
		o := held(rsp.Status.Autoscale, ReasonInvalidPreference, err.Error()+"; the total holds")
		o.terminal = err
		return o
	}
	typ, ok := a.opts.typeFor(work.Spec.TargetKind)
	if !ok {
		err := fmt.Errorf("spec.targetKind %q is none of the types whose replicas the autoscaler scales (%s)", work.Spec.TargetKind, a.kinds())
		o := held(rsp.Status.Autoscale, ReasonUnsupportedTarget, err.Error())
		o.terminal = fmt.Errorf("autoscale: ReplicaSchedulingPreference %s: %w", key, err)
		return o
	}
	fu, err := r.Get(ctx, typ.FederatedGVR(), key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		return held(rsp.Status.Autoscale, ReasonTargetNotFound, fmt.Sprintf("no %s %s: the total holds", typ.Federated.Kind, key))
	}
	if err != nil {
		return outcome{status: statusOf(rsp), err: err}
	}
	fed, err := federation.FederatedObjectFromUnstructured(fu)
	if err != nil {
		o := held(rsp.Status.Autoscale, ReasonTargetNotFound, err.Error())
		o.terminal = err
		return o
	}
	clusters, err := a.cl.List(ctx, r, logr.FromContextOrDiscard(ctx))
	if err != nil {
		return outcome{status: statusOf(rsp), err: err}
	}
	w := world{key: key, rsp: work, typ: typ, fed: fed, scheduled: scheduledOf(fed), ready: readyOf(clusters), pull: pullOf(clusters)}
	distributed := work.Spec.Autoscale.Mode == federation.AutoscaleDistributed
	w.samples = a.gather(ctx, &w, distributed)
	if distributed {
		return a.distribute(ctx, &w, rsp)
	}
	o := a.central(&w, rsp)
	// Back from Distributed mode: the members' HorizontalPodAutoscalers would fight the total.
	o.err = a.removeHPAs(ctx, key, rsp.UID, hpaClusters(rsp.Status.Autoscale, a.memoryOf(key).hpas))
	return o
}

// world is what one pass read about a preference.
type world struct {
	key       federation.Key
	rsp       *federation.ReplicaSchedulingPreference // defaulted
	typ       federation.TypeConfig
	fed       *federation.FederatedObject
	scheduled []scheduled
	ready     map[string]bool
	pull      map[string]bool
	samples   []Sample
}

// scheduled is one cluster the workload is scheduled in, with its share.
type scheduled struct {
	name     string
	replicas int32
}

// scheduledOf returns the clusters status.schedule gives replicas, in name order.
func scheduledOf(fed *federation.FederatedObject) []scheduled {
	var out []scheduled
	if fed.Status.Schedule == nil {
		return nil
	}
	for _, c := range fed.Status.Schedule.Clusters {
		if c.Replicas > 0 {
			out = append(out, scheduled{name: c.Name, replicas: int32(c.Replicas)})
		}
	}
	slices.SortFunc(out, func(a, b scheduled) int { return strings.Compare(a.name, b.name) })
	return out
}

func readyOf(clusters []federation.Cluster) map[string]bool {
	out := make(map[string]bool, len(clusters))
	for i := range clusters {
		out[clusters[i].Name] = meta.IsStatusConditionTrue(clusters[i].Status.Conditions, federation.ConditionReady)
	}
	return out
}

func pullOf(clusters []federation.Cluster) map[string]bool {
	out := map[string]bool{}
	for i := range clusters {
		if clusters[i].Spec.Mode == federation.ClusterModePull {
			out[clusters[i].Name] = true
		}
	}
	return out
}

// gather samples every scheduled cluster, in parallel, each read bounded by ReadTimeout. A
// cluster that is not Ready is not read; one whose read fails keeps its last good sample
// (freshness then decides whether it counts) or, without one, holds at its scheduled share.
func (a *Autoscaler) gather(ctx context.Context, w *world, hpa bool) []Sample {
	mem := a.memoryOf(w.key)
	now := a.opts.Clock.Now()
	out := make([]Sample, len(w.scheduled))
	errs := make([]error, len(w.scheduled))
	var wg sync.WaitGroup
	for i, sc := range w.scheduled {
		if !w.ready[sc.name] {
			errs[i] = errors.New("the Cluster is not Ready")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := loop.WithTimeout(ctx, a.opts.Clock, a.opts.ReadTimeout, errReadTimeout)
			defer cancel()
			out[i], errs[i] = a.opts.Source.Sample(rctx, SampleRequest{
				Cluster: sc.name, Type: w.typ, Key: w.key, Metrics: w.rsp.Spec.Autoscale.Metrics, HPA: hpa, Pull: w.pull[sc.name], Now: now,
			})
		}()
	}
	wg.Wait()
	for i, sc := range w.scheduled {
		if errs[i] == nil {
			mem.samples[sc.name] = out[i]
		} else if last, ok := mem.samples[sc.name]; ok {
			out[i] = last
			out[i].Message = errs[i].Error()
		} else {
			out[i] = Sample{Cluster: sc.name, Replicas: sc.replicas, Message: errs[i].Error()}
		}
		out[i].Cluster, out[i].ClusterReady = sc.name, w.ready[sc.name]
	}
	for name := range mem.samples {
		if !slices.ContainsFunc(w.scheduled, func(s scheduled) bool { return s.name == name }) {
			delete(mem.samples, name)
		}
	}
	return out
}

// central is Central mode: Decide, and the status that carries its total.
func (a *Autoscaler) central(w *world, rsp *federation.ReplicaSchedulingPreference) outcome {
	mem := a.memoryOf(w.key)
	now := a.opts.Clock.Now()
	d := Decide(DecideInput{Input: Input{
		Autoscale: *w.rsp.Spec.Autoscale, Current: int32(federation.FleetTotal(w.rsp)), Samples: w.samples,
		Now: now, StaleAfter: a.opts.StaleAfter,
		CPUInitializationPeriod: a.opts.CPUInitializationPeriod, InitialReadinessDelay: a.opts.InitialReadinessDelay,
	}, History: mem.history})
	st := statusOf(rsp)
	if desired, ok := d.Total(); ok {
		st.DesiredReplicas = &desired
	}
	if d.Changed() {
		st.LastScaleTime = &metav1.Time{Time: now.Truncate(1e9)}
	}
	st.CurrentMetrics = d.CurrentMetrics
	st.CurrentReplicas, st.Clusters = membersOf(d.Recommendation, w.samples)
	h := d.History
	return outcome{status: st, conds: d.Conditions, changed: d.Changed(), message: d.Message, history: &h}
}

// membersOf sums what the members run and lists them.
func membersOf(rec Recommendation, samples []Sample) (int32, []federation.AutoscaleCluster) {
	var sum int32
	out := make([]federation.AutoscaleCluster, 0, len(samples))
	fresh := map[string]bool{}
	for _, c := range rec.Clusters {
		fresh[c.Name] = c.Fresh
	}
	for _, s := range samples {
		n := s.Replicas
		sum = recommend.AddReplicas(sum, n)
		e := federation.AutoscaleCluster{Name: s.Cluster, CurrentReplicas: &n, Message: fedcond.Truncate(s.Message, 256)}
		if f, ok := fresh[s.Cluster]; ok && !f {
			e.Stale = true
		}
		out = append(out, e)
	}
	return sum, out
}

// statusOf returns a copy of the preference's status.autoscale (empty when absent).
func statusOf(rsp *federation.ReplicaSchedulingPreference) federation.AutoscaleStatus {
	if rsp.Status.Autoscale == nil {
		return federation.AutoscaleStatus{}
	}
	return *rsp.Status.Autoscale.DeepCopy()
}

// kinds lists the federated kinds the Autoscaler scales.
func (a *Autoscaler) kinds() string {
	var out []string
	for _, t := range a.opts.Types {
		out = append(out, t.Federated.Kind)
	}
	return strings.Join(out, ", ")
}
