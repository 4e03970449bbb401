package status

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// probeKind is how one probe ended.
type probeKind int

const (
	probeOK          probeKind = iota
	probeNotReady              // the API server answered, not ready
	probeUnreachable           // no answer: refused, reset, timed out
	probeNoClient              // the ClusterSet has no usable client
)

// probeResult is one probe's outcome; err describes a failure.
type probeResult struct {
	kind probeKind
	err  string
}

// probeState is the monitor's memory of one cluster: its consecutive probe counts, when
// its version, nodes and pods were last read, and its readiness as this replica saw it.
type probeState struct {
	successes, failures int
	infoAt              time.Time
	seen                readiness
}

// readiness is the Ready condition's history as one replica observed it, on its own clock:
// another replica's lastTransitionTime never enters it, so a skewed clock elsewhere neither
// evicts early nor holds an eviction back.
type readiness struct {
	// at is when Ready was last observed (zero: never), and ready whether it was True then.
	at    time.Time
	ready bool
	// notReady are the spans of time Ready was not True, oldest first, within the window.
	notReady []span
	// falls counts the times Ready stopped being True since it last held True for a whole
	// window; readySince is when it last turned True.
	falls      int
	readySince time.Time
}

// span is a stretch of time, from inclusive, to exclusive.
type span struct{ from, to time.Time }

// maxBackoff caps how many times SuccessThreshold a flapping cluster needs: 8 (2^3).
const maxBackoff = 3

// successesNeeded is how many successes in a row turn Ready True again: base for a cluster
// that lost Ready once, doubled for each time it lost Ready again before it had held True
// for a whole window, up to 8 times base. A cluster that flaps needs longer and longer runs
// of good probes to be trusted, as a CrashLoopBackOff waits longer after each crash.
func (r readiness) successesNeeded(base int, now time.Time, window time.Duration) int {
	falls := r.falls
	if r.ready && !r.readySince.IsZero() && now.Sub(r.readySince) >= window {
		falls = 0
	}
	return base << min(max(falls-1, 0), maxBackoff)
}

// observe returns r with Ready observed as ready at now; fell reports whether this
// observation turned it from True to not True. Until now, the cluster counts as it was at
// the last observation. Spans older than window are dropped.
func (r readiness) observe(ready, fell bool, now time.Time, window time.Duration) readiness {
	out := r
	out.notReady = slices.Clone(r.notReady)
	if !r.at.IsZero() && !r.ready && now.After(r.at) {
		if n := len(out.notReady); n > 0 && out.notReady[n-1].to.Equal(r.at) {
			out.notReady[n-1].to = now
		} else {
			out.notReady = append(out.notReady, span{from: r.at, to: now})
		}
	}
	switch {
	case ready && (r.at.IsZero() || !r.ready):
		out.readySince = now
	case fell:
		if !r.readySince.IsZero() && now.Sub(r.readySince) >= window {
			out.falls = 0 // it had held for a whole window: a fresh start
		}
		out.falls++
	}
	start := now.Add(-window)
	out.notReady = slices.DeleteFunc(out.notReady, func(s span) bool { return !s.to.After(start) })
	if len(out.notReady) > 0 && out.notReady[0].from.Before(start) {
		out.notReady[0].from = start
	}
	out.at, out.ready = now, ready
	return out
}

// notReadyFor is how long Ready was not True within the window, up to the last observation.
func (r readiness) notReadyFor() time.Duration {
	var d time.Duration
	for _, s := range r.notReady {
		d += s.to.Sub(s.from)
	}
	return d
}

// record counts a probe result.
func (s *probeState) record(r probeResult) {
	if r.kind == probeOK {
		s.successes++
		s.failures = 0
	} else {
		s.failures++
		s.successes = 0
	}
}

// health is what the probe counts say about a cluster's conditions.
type health struct {
	// ready is the Ready condition to write.
	ready metav1.Condition
	// offline is the Offline condition to write, nil to leave it as it is.
	offline *metav1.Condition
	// transition reports whether Ready's status changes.
	transition bool
	// unreachable reports whether the cluster is not ready because it cannot be reached.
	unreachable bool
}

// decideHealth applies the thresholds: Ready turns False after failureThreshold failures in
// a row, and True again after successThreshold successes in a row; in between it keeps its
// status. The success threshold is for returning from False: a new cluster without a verdict
// yet (no Ready condition, or Unknown with reason Probing) turns Ready on its first success
// (and Probing on its first failure), and a success keeps a Ready cluster Ready. A failure's
// message is kept from the first failure of the same reason, so a cluster that stays down is
// not rewritten with every slightly different error. It is pure.
func decideHealth(prev []metav1.Condition, s probeState, r probeResult, failureThreshold, successThreshold int, now time.Time) health {
	old := meta.FindStatusCondition(prev, federation.ConditionReady)
	if old == nil || old.Status != metav1.ConditionFalse {
		successThreshold = 1 // nothing to return from: a new cluster, or one that is Ready
	}
	var h health
	switch {
	case r.kind == probeOK && s.successes >= successThreshold:
		h.ready = metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonClusterReady, Message: "the API server answers ready"}
	case r.kind != probeOK && s.failures >= failureThreshold:
		reason := map[probeKind]string{
			probeNotReady: ReasonClusterNotReady, probeUnreachable: ReasonClusterUnreachable, probeNoClient: ReasonClientUnavailable,
		}[r.kind]
		h.ready = metav1.Condition{Status: metav1.ConditionFalse, Reason: reason,
			Message: fedcond.Truncate(fmt.Sprintf("%d probes in a row failed: %s", failureThreshold, r.err), fedcond.MaxMessage)}
		if old != nil && old.Status == metav1.ConditionFalse && old.Reason == reason {
			h.ready.Message = old.Message
		}
		h.unreachable = r.kind == probeUnreachable
	case old != nil:
		h.ready = *old
		h.unreachable = old.Status == metav1.ConditionFalse && old.Reason == ReasonClusterUnreachable
	default:
		h.ready = metav1.Condition{Status: metav1.ConditionUnknown, Reason: ReasonProbing,
			Message: "waiting for the first probes to reach their thresholds"}
	}
	h.ready.Type = federation.ConditionReady
	h.ready.ObservedGeneration = 0
	h.ready.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	if old != nil && old.Status == h.ready.Status {
		h.ready.LastTransitionTime = old.LastTransitionTime
	} else {
		h.transition = true
	}

	// Offline follows Ready once Ready has an answer.
	var off *metav1.Condition
	switch {
	case h.ready.Status == metav1.ConditionTrue:
		off = &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonClusterReachable, Message: "the API server answers"}
	case h.ready.Status == metav1.ConditionFalse && h.ready.Reason == ReasonClusterUnreachable:
		off = &metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonClusterUnreachable, Message: h.ready.Message}
	case h.ready.Status == metav1.ConditionFalse && h.ready.Reason == ReasonClusterNotReady:
		off = &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonClusterReachable, Message: "the API server answers, but not ready"}
	case h.ready.Status == metav1.ConditionFalse && h.ready.Reason == ReasonClientUnavailable:
		off = &metav1.Condition{Status: metav1.ConditionUnknown, Reason: ReasonClientUnavailable, Message: "no client to reach the cluster with"}
	}
	if off != nil {
		off.Type = federation.ConditionOffline
		off.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		if o := meta.FindStatusCondition(prev, federation.ConditionOffline); o != nil && o.Status == off.Status {
			off.LastTransitionTime = o.LastTransitionTime
		}
		h.offline = off
	}
	return h
}

// sameCondition compares what a condition says, its transition time included.
func sameCondition(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}
