package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// ReasonDeleting is the Propagated condition's reason while a federated object waits for its
// member objects to be removed.
const ReasonDeleting = "Deleting"

// Deletion. The finalizer of an object being deleted goes only once every member object is
// gone (NotFound), not when its delete was sent: one that its own finalizers hold (a
// foreground deletion, a member controller's cleanup) holds it too, and so do clusters that
// are not ready or unreachable and may hold a copy (Outcome.MayHold: one shown to hold none
// never does). The wait is bounded by Input.DeletionTimeout, counted from the first pass that
// had to wait (federation.DeletionStartedAnnotation, recorded on the object so that a restart
// does not reset it and an outage does not use it up); after that the finalizer goes anyway
// and what was left behind is reported, so a dead cluster cannot keep a federated object
// forever.

// neverPlacedMargin is how long before a federated object was made a cluster must have
// turned not Ready for sync to hold that it never wrote the object there: the time it takes
// the host's caches to bring the monitor's Ready False to sync, and more than any skew between
// the monitor's clock and the host's.
const neverPlacedMargin = time.Minute

// NotReadyCheck is a cluster that is not ready where the copy of an object being deleted may
// still be (Decision.NotReady): the deletion waits for it (Outcome.MayHold) unless the driver
// shows it holds no copy of the federation's. Sync writes only to Ready clusters, so a cluster
// that has not been Ready since before the object was made holds none, and is never checked.
type NotReadyCheck struct {
	// Cluster is the cluster's name.
	Cluster string
	// Suspected: sync has reason to think the copy is there (status.clusters lists the
	// cluster, or the placement selects it but for its readiness: status.clusters may miss a
	// create whose status write failed). It holds the deletion unless a read shows no copy
	// of the federation's: the member cache (which keeps what a cluster that is not ready
	// last held) or, without one or when it cannot tell, a live read. A cluster not suspected
	// (placement may have moved away from it, and status with it) holds the deletion only
	// when its member cache shows a copy or cannot tell.
	Suspected bool
}

// notReadyChecks is Decision.NotReady for an object being deleted: every cluster that is not
// ready, but those not Ready since more than neverPlacedMargin before the object was made.
func notReadyChecks(in Input) []NotReadyCheck {
	obj := in.Object
	suspects := map[string]bool{}
	for _, c := range obj.Status.Clusters {
		suspects[c.Name] = true
	}
	if t, err := TargetsFor(obj, in.Type, in.Clusters, in.Now); err == nil {
		for _, n := range t.NotReady {
			suspects[n] = true
		}
	}
	var out []NotReadyCheck
	for i := range in.Clusters {
		c := &in.Clusters[i]
		if isReady(c) || notReadySince(c, obj.CreationTimestamp.Time) {
			continue
		}
		out = append(out, NotReadyCheck{Cluster: c.Name, Suspected: suspects[c.Name]})
	}
	return out
}

// notReadySince reports whether c's Ready condition has not been True since more than
// neverPlacedMargin before t.
func notReadySince(c *federation.Cluster, t time.Time) bool {
	cond := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady)
	return cond != nil && cond.Status != metav1.ConditionTrue && !t.IsZero() &&
		cond.LastTransitionTime.Add(neverPlacedMargin).Before(t)
}

// SameDeletions reports whether two versions of a federated object lead Decide to the same
// deletions: the same object, generation, deletion state, annotations and schedule. Other
// loops' status writes alone move the resourceVersion, not these. A driver confirms with it,
// right before a delete because the object left a cluster, that the object it decided on is
// still the host's (with SamePlacement for the Cluster).
func SameDeletions(a, b *federation.FederatedObject) bool {
	return a.UID == b.UID && a.Generation == b.Generation &&
		(a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil) &&
		maps.Equal(a.Annotations, b.Annotations) && equality.Semantic.DeepEqual(a.Status.Schedule, b.Status.Schedule)
}

// SamePlacement reports whether two versions of a Cluster place the same: labels, spec
// (taints among them) and deletion state. Status heartbeats alone do not count.
func SamePlacement(a, b *federation.Cluster) bool {
	return a.UID == b.UID && maps.Equal(a.Labels, b.Labels) && (a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil) &&
		equality.Semantic.DeepEqual(a.Spec, b.Spec)
}

// deletionReport is the Report of a pass over an object being deleted.
func deletionReport(in Input, outcomes []Outcome) Result {
	var rep Result
	results := make([]clusterResult, len(outcomes))
	for i := range outcomes {
		results[i], rep.Events = classify(in, &outcomes[i], rep.Events)
	}
	rep.Events = append(rep.Events, passEvents(in, results)...)
	blocked := blockers(results)
	if len(blocked) == 0 {
		rep.Release = true
		return rep
	}
	start, recorded := deletionStart(in)
	if !recorded {
		rep.DeletionStarted = start
	}
	waited := in.Now.Sub(start)
	if recorded && in.DeletionTimeout > 0 && waited >= in.DeletionTimeout {
		rep.Release = true
		for _, e := range blocked {
			rep.LeftBehind = append(rep.LeftBehind, e.Name+" ("+e.Propagation+")")
		}
		rep.Events = append(rep.Events, Event{Type: federation.EventTypeWarning, Reason: EventMembersLeftBehind,
			Message: fmt.Sprintf("deletion timed out after %s: member objects may remain in %s", in.DeletionTimeout, summarize(rep.LeftBehind))})
		return rep
	}
	names := make([]string, 0, len(blocked))
	for _, e := range blocked {
		names = append(names, e.Name+": "+e.Propagation)
	}
	rep.Status = &Status{SetClusters: true, Clusters: blocked, Conditions: []metav1.Condition{
		condition(federation.ConditionPropagated, metav1.ConditionFalse, ReasonDeleting,
			fmt.Sprintf("waiting for member objects to be removed: %s", summarize(names)), in.Object.Generation)}}
	rep.Retry = retryable(results)
	rep.RequeueAfter = recheck
	if in.DeletionTimeout > 0 {
		rep.RequeueAfter = min(max(in.DeletionTimeout-waited, time.Second), recheck)
	}
	return rep
}

// blockers are the clusters that still hold the finalizer, by name: failures, objects still
// being removed, namespaces that still hold what the federation placed there
// (ReasonNamespaceInUse), and clusters that are not ready but may have the object.
func blockers(results []clusterResult) []ClusterStatus {
	byName := map[string]ClusterStatus{}
	for _, r := range results {
		switch {
		case r.mayHold:
			byName[r.Cluster] = ClusterStatus{Name: r.Cluster, Propagation: ReasonClusterNotReady}
		case r.err != nil || r.Reason == ReasonWaitingForRemoval || r.Reason == ReasonClusterUnreachable || r.Reason == ReasonNamespaceInUse:
			byName[r.Cluster] = ClusterStatus{Name: r.Cluster, Propagation: r.Reason, Message: r.Message}
		}
	}
	out := make([]ClusterStatus, 0, len(byName))
	for _, e := range byName {
		if e.Message == "" || e.Propagation != ReasonWaitingForRemoval {
			e.Message = fmt.Sprintf("cluster %q: the member object is not removed yet (%s)", e.Name, e.Propagation)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// deletionStart returns when the wait for the member objects began: the time that
// federation.DeletionStartedAnnotation records (recorded true), or now, which the driver then
// records. A value that does not parse, or is older than the deletionTimestamp (copied from
// another object: it was not written for this deletion), is replaced. The time is never
// before the deletionTimestamp, so a clock behind the host's cannot make it look copied.
func deletionStart(in Input) (start time.Time, recorded bool) {
	deleted := in.Object.DeletionTimestamp.Time
	if v, ok := in.Object.GetAnnotations()[federation.DeletionStartedAnnotation]; ok {
		if t, err := time.Parse(time.RFC3339, v); err == nil && !t.Before(deleted) {
			return t, true
		}
	}
	now := in.Now.UTC().Truncate(time.Second) // what RFC 3339 keeps
	if now.Before(deleted) {
		now = deleted.UTC()
	}
	return now, false
}
