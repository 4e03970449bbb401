package status

import (
	"fmt"
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

// probeState is the monitor's memory of one cluster: its consecutive probe counts, and when
// its version, nodes and pods were last read.
type probeState struct {
	successes, failures int
	infoAt              time.Time
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

// decideHealth applies the thresholds: Ready turns True after successThreshold successes in
// a row and False after failureThreshold failures in a row; in between it keeps its status
// (a new cluster without one is Unknown, reason Probing). A failure's message is kept from
// the first failure of the same reason, so a cluster that stays down is not rewritten with
// every slightly different error. It is pure.
func decideHealth(prev []metav1.Condition, s probeState, r probeResult, failureThreshold, successThreshold int, now time.Time) health {
	old := meta.FindStatusCondition(prev, federation.ConditionReady)
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
