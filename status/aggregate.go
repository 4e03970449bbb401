package status

import (
	"fmt"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/quorum"
)

// Member is what the Collector knows about one placed cluster when it aggregates.
type Member struct {
	// ClusterReady reports whether the Cluster's Ready condition is True. A member cache
	// keeps serving its last state while its cluster is cut off, so data from a cluster that
	// is not Ready is stale however recently it was read.
	ClusterReady bool

	// LastRead is when the member was last read successfully (the object found or not);
	// zero when it has not been since the Collector started.
	LastRead time.Time

	// Observation is what that read found; nil when LastRead is zero.
	Observation *Observation
}

// Input is one federated object's state for [Aggregate].
type Input struct {
	// Generation is the federated object's metadata.generation, recorded in the Ready
	// condition's observedGeneration.
	Generation int64

	// Status is the federated object's status as read. Aggregate reads its Clusters,
	// Aggregated and Conditions and never modifies it.
	Status *federation.FederatedStatus

	// Members[i] is about Status.Clusters[i]; a missing element counts as a zero Member
	// (no data: stale).
	Members []Member

	// Now is the current time; StaleAfter is how old a read may be and still count as fresh.
	Now        time.Time
	StaleAfter time.Duration
}

// Aggregation is the Collector's part of a federated object's status, as [Aggregate]
// computed it. It may share memory with the Input: treat both as read-only.
type Aggregation struct {
	// Clusters are Status.Clusters, in the same order, with the observed fields
	// (replicas, readyReplicas, availableReplicas, updatedReplicas, observedGeneration,
	// remoteStatus, ready, observedRevision, unhealthySince, lastObserved, stale) brought up to date and every other field as it was.
	Clusters []federation.MemberStatus
	// Aggregated is the new status.aggregated: the fresh clusters' sums with quorum; without,
	// the previous sums (zero when there were none) with the current staleClusters.
	Aggregated *federation.AggregatedStatus
	// Ready is the Ready condition.
	Ready metav1.Condition
	// Fresh counts the placed clusters with fresh data; Quorum reports whether they are a
	// majority.
	Fresh  int
	Quorum bool
	// Changed reports whether any of the above differs from Status: only then is there
	// anything to write.
	Changed bool
}

// Aggregate decides the Collector's status fields of one federated object. It is a pure
// function: no I/O, no clock (Now is an input), the same input always gives the same output.
//
// The rules:
//
//  1. A placed cluster's data is fresh when its Cluster is Ready and it was read
//     successfully at most StaleAfter before Now. Fresh data replaces the entry's observed
//     fields and clears stale; otherwise the entry keeps its last known fields and is marked
//     stale: true. unhealthySince is the first fresh read that saw the member run what
//     sync rendered for it (the entry current, observedRevision not above revision) but
//     not Ready, nor progressing (Observation.Progressing: a rollout within its deadline,
//     availability held). It starts again when the member reports another revision, and is
//     cleared when the member is Ready, progressing, or its data stale.
//  2. Quorum: when more than half of the placed clusters are fresh, status.aggregated is the
//     sum over the fresh clusters (stale ones never count). Otherwise status.aggregated keeps
//     its last good sums and clusters (none before the first), its staleClusters counts the
//     stale clusters now, and Ready is Unknown with reason NoQuorum: numbers built from a
//     partitioned minority are never published.
//  3. Ready is True when sync has propagated Generation (status.observedGeneration and the
//     Propagated condition's observedGeneration are Generation, Propagated is True, no
//     rollout holds the revision, every entry is at the current revision without a
//     propagation reason) and every placed cluster is fresh and reports its
//     member object up to date and fully available. Otherwise it is Unknown with reason
//     WaitingForPropagation while sync has not passed over Generation; False with reason
//     NotPropagated naming the clusters that do not run its revision (and why), NotReady
//     naming the fresh clusters that are not ready, or StaleClusters naming the clusters
//     without fresh data; False with NoClusters when none is placed.
//  4. No churn: lastObserved changes only in an entry whose observed fields or staleness
//     change, or, when the object is written anyway, in a fresh entry whose lastObserved is
//     more than StaleAfter/2 older than its last read. Timestamps alone never make Changed
//     true, and a condition keeps its lastTransitionTime while its status stays.
func Aggregate(in Input) Aggregation {
	st := in.Status
	if st == nil {
		st = &federation.FederatedStatus{}
	}
	var out Aggregation
	sum := federation.AggregatedStatus{}
	var stale []string
	var notReady notReadyList
	// First pass: decide, sum and detect changes without building anything, so that the
	// usual pass (nothing changed) allocates almost nothing.
	for i := range st.Clusters {
		old := &st.Clusters[i]
		m := in.member(i)
		e, changed := nextEntry(old, m, in.fresh(m))
		if changed {
			out.Changed = true
		}
		if e.Stale {
			stale = append(stale, e.Name)
			continue
		}
		o := m.Observation
		out.Fresh++
		sum.Clusters++
		sum.Replicas += val(o.Replicas)
		sum.ReadyReplicas += val(o.ReadyReplicas)
		sum.AvailableReplicas += val(o.AvailableReplicas)
		sum.UpdatedReplicas += val(o.UpdatedReplicas)
		if !o.Ready {
			notReady.add(e.Name, cmpOr(o.Message, "not ready"))
		}
	}
	placed := len(st.Clusters)
	sum.StaleClusters = int32(placed - out.Fresh)
	out.Quorum = HasQuorum(out.Fresh, placed)

	out.Aggregated = st.Aggregated
	if out.Quorum || placed == 0 {
		if st.Aggregated == nil || *st.Aggregated != sum {
			out.Aggregated = &sum
			out.Changed = true
		}
	} else {
		// No quorum: the last good sums (and the clusters they came from) stay, and
		// staleClusters says how many placed clusters are stale now, as the condition does.
		var kept federation.AggregatedStatus
		if st.Aggregated != nil {
			kept = *st.Aggregated
		}
		kept.StaleClusters = sum.StaleClusters
		if st.Aggregated == nil || *st.Aggregated != kept {
			k := kept
			out.Aggregated = &k
			out.Changed = true
		}
	}

	prop := in.propagation(st)
	out.Ready = readyCondition(placed, out.Fresh, out.Quorum, prop, notReady.lines(), stale, in.Generation)
	if prev := meta.FindStatusCondition(st.Conditions, federation.ConditionReady); prev != nil && prev.Status == out.Ready.Status {
		out.Ready.LastTransitionTime = prev.LastTransitionTime
		if prev.Reason != out.Ready.Reason || prev.Message != out.Ready.Message || prev.ObservedGeneration != out.Ready.ObservedGeneration {
			out.Changed = true
		}
	} else {
		out.Ready.LastTransitionTime = metav1.NewTime(in.Now.Truncate(time.Second))
		out.Changed = true
	}

	if !out.Changed {
		out.Clusters = st.Clusters
		return out
	}
	// Second pass, for a write: the new entries. Written anyway, old lastObserved stamps of
	// fresh entries move forward, so they do not age forever while the values stay the same.
	out.Clusters = make([]federation.MemberStatus, placed)
	for i := range st.Clusters {
		m := in.member(i)
		e, _ := nextEntry(&st.Clusters[i], m, in.fresh(m))
		if !e.Stale && e.LastObserved != nil && m.LastRead.Sub(e.LastObserved.Time) > in.StaleAfter/2 {
			e.LastObserved = timePtr(m.LastRead)
		}
		out.Clusters[i] = e
	}
	return out
}

// member returns Members[i], or a zero Member.
func (in *Input) member(i int) Member {
	if i < len(in.Members) {
		return in.Members[i]
	}
	return Member{}
}

// fresh reports whether m's data is fresh (rule 1 of Aggregate).
func (in *Input) fresh(m Member) bool {
	return m.Observation != nil && IsFresh(m.ClusterReady, m.LastRead, in.Now, in.StaleAfter)
}

// IsFresh is rule 1 of [Aggregate], for every loop that sums what members report (package
// autoscale too): data read at lastRead from a cluster whose Ready condition is clusterReady
// is fresh at now when the cluster is Ready and the read is at most staleAfter old. A zero
// lastRead (never read) is stale.
// The rule lives in a pure package both status and autoscale/recommend import.
func IsFresh(clusterReady bool, lastRead, now time.Time, staleAfter time.Duration) bool {
	return quorum.IsFresh(clusterReady, lastRead, now, staleAfter)
}

// HasQuorum is rule 2 of [Aggregate], for every loop that sums what members report (package
// autoscale too): fresh clusters are a quorum when they are more than half of the placed
// ones. Numbers built from a partitioned minority are never published.
func HasQuorum(fresh, placed int) bool { return quorum.HasQuorum(fresh, placed) }

// nextEntry returns old with the observed fields decided for m, and whether they changed:
// fresh data replaces them and clears stale, stamping lastObserved when the values or the
// staleness change; otherwise old's values stay and the entry is stale.
func nextEntry(old *federation.MemberStatus, m Member, fresh bool) (federation.MemberStatus, bool) {
	e := *old
	if !fresh {
		// Stale data never says the workload is unhealthy (application failover reads this).
		e.Stale, e.UnhealthySince = true, nil
		return e, !old.Stale || old.UnhealthySince != nil
	}
	o := m.Observation
	e.Replicas, e.ReadyReplicas, e.AvailableReplicas = o.Replicas, o.ReadyReplicas, o.AvailableReplicas
	e.UpdatedReplicas, e.ObservedGeneration = o.UpdatedReplicas, o.ObservedGeneration
	e.RemoteStatus = nil
	if o.Remote != nil {
		e.RemoteStatus = &federation.RawObject{Object: o.Remote}
	}
	if old.Ready == nil || *old.Ready != o.Ready {
		// Shared with old otherwise: the usual pass, nothing changed, allocates nothing here.
		ready := o.Ready
		e.Ready = &ready
	}
	e.ObservedRevision = o.Revision
	e.Stale = false
	// Unhealthy: running what sync rendered for it (sync reports the entry current, and the
	// member reports no revision newer than sync's), and not Ready by its kind's rule. A
	// member may report an older revision than the entry's: a revision that renders the
	// same member object (a placement change) does not rewrite it. Since the first fresh
	// read that saw it, and again from the read that sees the member report another
	// revision (it was rewritten); cleared when Ready, or while its rollout progresses in time
	// with its availability held (Observation.Progressing): only a stalled or failing one
	// counts.
	switch {
	case o.Ready || o.Progressing || e.Revision == 0 || e.Propagation != "" || o.Revision > e.Revision:
		e.UnhealthySince = nil
	case old.UnhealthySince == nil || old.ObservedRevision != o.Revision:
		e.UnhealthySince = timePtr(m.LastRead)
	}
	if old.Stale || old.LastObserved == nil || !sameObserved(old, &e) || !old.UnhealthySince.Equal(e.UnhealthySince) {
		e.LastObserved = timePtr(m.LastRead)
		return e, true
	}
	return e, false
}

// readyCondition is the federated object's Ready condition for one aggregation.
func readyCondition(placed, fresh int, quorum bool, prop propagation, notReady, stale []string, generation int64) metav1.Condition {
	c := metav1.Condition{Type: federation.ConditionReady, ObservedGeneration: generation}
	staleMsg := ""
	if len(stale) > 0 {
		staleMsg = "no fresh data from: " + strings.Join(stale, ", ")
	}
	switch {
	case placed == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonNoClusters, "status.clusters lists no cluster"
	case !quorum:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonNoQuorum
		c.Message = fmt.Sprintf("fresh data from %d of %d placed clusters, not a majority: status.aggregated keeps its last values; %s",
			fresh, placed, staleMsg)
	case prop.waiting:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonWaitingForPropagation
		c.Message = fmt.Sprintf("sync has not propagated generation %d yet (it last wrote status for generation %d)", generation, prop.observed)
	case len(prop.problems) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNotPropagated
		c.Message = fmt.Sprintf("generation %d does not run everywhere: %s", generation, strings.Join(prop.problems, "; "))
		if len(notReady) > 0 {
			c.Message += "; not ready: " + strings.Join(notReady, "; ")
		}
		if staleMsg != "" {
			c.Message += "; " + staleMsg
		}
	case len(notReady) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNotReady
		c.Message = "not ready: " + strings.Join(notReady, "; ")
		if staleMsg != "" {
			c.Message += "; " + staleMsg
		}
	case len(stale) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonStale
		c.Message = fmt.Sprintf("ready in %d of %d placed clusters; %s", fresh, placed, staleMsg)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonReady
		c.Message = fmt.Sprintf("ready in %d of %d placed clusters", fresh, placed)
	}
	c.Message = fedcond.Truncate(c.Message, fedcond.MaxMessage)
	return c
}

// sameObserved reports whether two entries have the same observed values (lastObserved and
// stale aside).
func sameObserved(a, b *federation.MemberStatus) bool {
	if !sameInt(a.Replicas, b.Replicas) || !sameInt(a.ReadyReplicas, b.ReadyReplicas) ||
		!sameInt(a.AvailableReplicas, b.AvailableReplicas) || !sameInt(a.UpdatedReplicas, b.UpdatedReplicas) ||
		!sameInt(a.ObservedGeneration, b.ObservedGeneration) || a.ObservedRevision != b.ObservedRevision {
		return false
	}
	if (a.Ready == nil) != (b.Ready == nil) || (a.Ready != nil && *a.Ready != *b.Ready) {
		return false
	}
	if (a.RemoteStatus == nil) != (b.RemoteStatus == nil) {
		return false
	}
	return a.RemoteStatus == nil || apiequality.Semantic.DeepEqual(a.RemoteStatus.Object, b.RemoteStatus.Object)
}

func sameInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func timePtr(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.Truncate(time.Second))
	return &mt
}

// notReadyList collects the clusters that are not ready with their messages; clusters of
// one message are named together ("a, b: no controller has observed it ..."), so a fleet of
// API servers without controllers reads as one cause, not the same sentence per cluster.
type notReadyList struct {
	msgs  []string
	names map[string][]string
}

func (l *notReadyList) add(name, msg string) {
	if l.names == nil {
		l.names = map[string][]string{}
	}
	if _, ok := l.names[msg]; !ok {
		l.msgs = append(l.msgs, msg)
	}
	l.names[msg] = append(l.names[msg], name)
}

// lines returns "names: message" per message, in the order the messages first came.
func (l *notReadyList) lines() []string {
	out := make([]string, 0, len(l.msgs))
	for _, m := range l.msgs {
		out = append(out, strings.Join(l.names[m], ", ")+": "+m)
	}
	return out
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
