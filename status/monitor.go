package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Reconcile probes one cluster (key.Name; key.Namespace is ignored) once and brings its
// Cluster object in line with what the probes say:
//
//  1. Probe: federation.HealthChecker's Healthy (GET /readyz) when the member's client has
//     it, else a List of one namespace, bounded by Options.Timeout. No answer (refused, reset,
//     timed out) is "unreachable"; an answer other than ready is "not ready"; no client from
//     the ClusterSet is "client unavailable".
//  2. Count: Ready turns False after FailureThreshold failures in a row and True after
//     SuccessThreshold successes in a row (more for a cluster that flaps; see
//     MonitorOptions.SuccessThreshold); a single failure never flips it. Offline is True
//     while Ready is False because the cluster is unreachable. The time not Ready within
//     ReadinessWindow, as this monitor observed it, decides the taints' effect.
//  3. Read, after a successful probe when HeartbeatInterval has passed since the last time
//     (or Ready turns True): the version, the nodes and the pods, each request bounded by
//     Timeout, for status.kubernetesVersion, region, zones, capacity and available (see the
//     package documentation for their meaning). A failure there is logged and the old values
//     stay.
//  4. Stage: the Failover condition names the cluster's failover stage (NoSchedule,
//     NoExecute, Recovered; see the package documentation). A change of stage is an event,
//     or part of the Ready event when Ready changes with it.
//  5. Credentials: the CredentialsExpiring condition says when the member client's
//     credentials expire (federation.CredentialsExpiryGetter), True with a Warning event
//     within CredentialsWarning of that time and once it has passed.
//  6. Write only what changed: the monitor's taints in spec.taints first when some are added
//     (so there is never a moment where placement sees Ready not True without them), then
//     the status, then taints being removed. status.lastHeartbeatTime moves on a transition,
//     or when HeartbeatInterval has passed: a probe that changes nothing writes nothing.
//
// A Cluster that is gone has its counters released; one being deleted is probed as long as
// finalizers hold it (sync cleans up only in Ready clusters). The Result asks for
// the next probe after Period (sooner when a taint's eviction delay ends first). Writes that
// fail return an error, and the Result is then ignored.
func (m *ClusterMonitor) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return m.reconcileFrom(ctx, m.host, key)
}

func (m *ClusterMonitor) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	p := loop.Pass{Loop: fedmetrics.LoopMonitor, KeyName: "cluster", Clock: m.opts.Clock, Logger: m.opts.Logger, Observe: m.metrics.reconciles.Observe}
	return p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) { return m.reconcile(ctx, r, key.Name) })
}

func (m *ClusterMonitor) reconcile(ctx context.Context, r federation.Reader, name string) (federation.Result, string, error) {
	log := logr.FromContextOrDiscard(ctx)
	u, err := r.Get(ctx, federation.ClusterGVR, "", name)
	if apierrors.IsNotFound(err) {
		m.release(name)
		return federation.Result{}, fedmetrics.OutcomeGone, nil
	}
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("status: get Cluster %q: %w", name, err)
	}
	// A Cluster being deleted is still probed while finalizers hold it: sync cleans up only in
	// clusters that are Ready, so a member that recovers must be seen to.
	cluster, err := loop.DecodeCluster(r, u) // shared with the other loops: copied below
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeInvalid, federation.Terminal(fmt.Errorf("status: Cluster %q: %w", name, err))
	}
	cluster = cluster.DeepCopy() // the monitor builds its write from it

	now := m.opts.Clock.Now()
	res := m.probe(ctx, name)
	st := m.count(name, res)
	need := st.seen.successesNeeded(m.opts.SuccessThreshold, now, m.opts.ReadinessWindow)
	h := decideHealth(cluster.Status.Conditions, st, res, m.opts.FailureThreshold, need, now)
	fleet, err := m.judgeFleet(ctx, r, name, h.ready, now, log)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	wasReady := meta.IsStatusConditionTrue(cluster.Status.Conditions, federation.ConditionReady)
	isReady := h.ready.Status == metav1.ConditionTrue
	seen := st.seen.observe(isReady, wasReady && !isReady, now, m.opts.ReadinessWindow)
	notReadyFor := seen.notReadyFor()
	if h.ready.Status == metav1.ConditionTrue {
		m.metrics.ready.WithLabelValues(name).Set(1)
	} else {
		m.metrics.ready.WithLabelValues(name).Set(0)
	}

	var info *clusterInfo
	if res.kind == probeOK && (h.transition || st.infoAt.IsZero() || now.Sub(st.infoAt) >= m.opts.HeartbeatInterval) {
		i, err := m.readInfo(ctx, name)
		if err != nil {
			log.Info("Reading the cluster's version, nodes or pods failed; keeping the old values", "error", err.Error())
		} else {
			info = &i
			m.setInfoAt(name, now)
		}
	}
	status, statusChanged := nextStatus(cluster, h, info, res.kind == probeOK, now, m.opts.HeartbeatInterval)
	ti := taintInputs{ready: h.ready, unreachable: h.unreachable, notReadyFor: notReadyFor, now: now, evictionDelay: m.opts.EvictionDelay, disrupted: fleet.Message, disruptedSince: fleet.Since}
	taints, taintsChanged, evictIn := desiredTaints(cluster.Spec.Taints, ti)
	stage := failoverCondition(cluster.Status.Conditions, h.ready, taints, evictIn, ti.disrupted, now)
	stageChanged := false
	if old := meta.FindStatusCondition(status.Conditions, federation.ConditionFailover); stage != nil && !sameCondition(old, stage) {
		stageChanged = old == nil || old.Reason != stage.Reason
		meta.SetStatusCondition(&status.Conditions, *stage)
		meta.FindStatusCondition(status.Conditions, stage.Type).LastTransitionTime = stage.LastTransitionTime
		statusChanged = true
	}
	var credEvent *metav1.Condition
	if at, ok, client := m.credentialsExpiry(name); client {
		var credChanged bool
		credChanged, credEvent = setCredentials(&status.Conditions, at, ok, now, m.opts.CredentialsWarning)
		statusChanged = statusChanged || credChanged
	}
	adding := taintsChanged && addsTaint(cluster.Spec.Taints, ti)

	if adding {
		if u, err = m.writeTaints(ctx, u, ti); err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
	}
	if statusChanged {
		if u, err = m.writeStatus(ctx, u, status); err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
		switch {
		case h.transition:
			// One event per transition: a stage that changes with Ready is told in its event.
			log.Info("Cluster readiness changed", "ready", h.ready.Status, "reason", h.ready.Reason, "message", h.ready.Message)
			ev := h.ready
			if stageChanged {
				ev.Message += "; " + federation.ConditionFailover + " " + stage.Reason + ": " + stage.Message
			}
			m.readinessEvent(ctx, u, ev)
		case stageChanged:
			m.failoverEvent(ctx, u, *stage)
		}
		if credEvent != nil {
			m.credentialsEvent(ctx, u, *credEvent)
		}
	}
	if taintsChanged && !adding {
		if _, err = m.writeTaints(ctx, u, ti); err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
	}
	m.setSeen(name, seen) // only once written: a pass that failed is observed again
	next := m.opts.Period
	if evictIn > 0 && evictIn < next {
		next = evictIn
	}
	outcome := fedmetrics.OutcomeUnchanged
	if adding || statusChanged || taintsChanged {
		outcome = fedmetrics.OutcomeWritten
	}
	return federation.Result{RequeueAfter: next}, outcome, nil
}

// probe asks the member whether it is ready.
func (m *ClusterMonitor) probe(ctx context.Context, name string) probeResult {
	client, err := m.clusters.Client(name)
	if err != nil {
		return probeResult{kind: probeNoClient, err: err.Error()}
	}
	pctx, cancel := loop.WithTimeout(ctx, m.opts.Clock, m.opts.Timeout, errProbeTimeout)
	defer cancel()
	if hc, ok := client.(federation.HealthChecker); ok {
		err = hc.Healthy(pctx)
	} else {
		_, err = client.List(pctx, coreGVR("namespaces"), "", metav1.ListOptions{Limit: 1})
	}
	switch {
	case err == nil:
		m.metrics.members.ObserveResult(name, "probe", fedmetrics.ResultOK)
		return probeResult{kind: probeOK}
	case context.Cause(pctx) == errProbeTimeout:
		m.metrics.members.ObserveResult(name, "probe", fedmetrics.ResultUnreachable)
		return probeResult{kind: probeUnreachable, err: fmt.Sprintf("no answer within %s", m.opts.Timeout)}
	case unreachable(err):
		m.metrics.members.ObserveResult(name, "probe", fedmetrics.ResultUnreachable)
		return probeResult{kind: probeUnreachable, err: err.Error()}
	}
	m.metrics.members.ObserveResult(name, "probe", fedmetrics.ResultError)
	return probeResult{kind: probeNotReady, err: err.Error()}
}

// unreachable reports whether err says the API server gave no answer, rather than a bad one.
func unreachable(err error) bool {
	var ne net.Error
	return errors.Is(err, federation.ErrUnreachable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || apierrors.IsTimeout(err)
}

// nextStatus returns the Cluster's status with the probe's conditions, the info read (nil:
// keep the old) and the heartbeat, and whether it differs from the status as read.
func nextStatus(c *federation.Cluster, h health, info *clusterInfo, reached bool, now time.Time, heartbeat time.Duration) (federation.ClusterStatus, bool) {
	old := c.Status
	st := *old.DeepCopy()
	meta.SetStatusCondition(&st.Conditions, h.ready)
	if h.offline != nil {
		meta.SetStatusCondition(&st.Conditions, *h.offline)
	}
	// SetStatusCondition keeps the old transition time when the status stays; these are ours.
	for _, c := range []*metav1.Condition{&h.ready, h.offline} {
		if c != nil {
			meta.FindStatusCondition(st.Conditions, c.Type).LastTransitionTime = c.LastTransitionTime
		}
	}
	if info != nil {
		st.KubernetesVersion = info.version
		st.Region = cmp.Or(c.Spec.Region, info.region)
		st.Zones = info.zones
		if len(c.Spec.Zones) > 0 {
			st.Zones = slices.Clone(c.Spec.Zones)
		}
		st.Capacity, st.Available = info.capacity, info.available
	}
	changed := !conditionsEqual(old.Conditions, st.Conditions) || old.KubernetesVersion != st.KubernetesVersion ||
		old.Region != st.Region || !slices.Equal(old.Zones, st.Zones) ||
		!sameResources(old.Capacity, st.Capacity) || !sameResources(old.Available, st.Available)
	if reached && (changed || old.LastHeartbeatTime == nil || now.Sub(old.LastHeartbeatTime.Time) >= heartbeat) {
		st.LastHeartbeatTime = timePtr(now)
		changed = true
	}
	return st, changed
}

func conditionsEqual(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameCondition(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// addsTaint reports whether the monitor's taints for in add a taint (a key, or an effect of
// it) that taints has not.
func addsTaint(taints []corev1.Taint, in taintInputs) bool {
	next, _, _ := desiredTaints(taints, in)
	for _, t := range next {
		if !monitorTaint(t.Key) {
			continue
		}
		if !slices.ContainsFunc(taints, func(o corev1.Taint) bool { return o.Key == t.Key && o.Effect == t.Effect }) {
			return true
		}
	}
	return false
}

// count records a probe result in the cluster's counters and returns them.
func (m *ClusterMonitor) count(name string, r probeResult) probeState {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.state[name]
	if s == nil {
		s = &probeState{}
		m.state[name] = s
	}
	s.record(r)
	return *s
}

// setInfoAt records when the cluster's version, nodes and pods were read.
func (m *ClusterMonitor) setInfoAt(name string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.state[name]; s != nil {
		s.infoAt = at
	}
}

// setSeen records the cluster's readiness as this pass observed it.
func (m *ClusterMonitor) setSeen(name string, seen readiness) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.state[name]; s != nil {
		s.seen = seen
	}
}

// release forgets a deleted cluster.
func (m *ClusterMonitor) release(name string) {
	m.mu.Lock()
	_, ok := m.state[name]
	delete(m.state, name)
	m.mu.Unlock()
	if ok {
		m.metrics.forget(name)
	}
}
