package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// Graceful eviction (see the package documentation): decide divides replicas as if they could
// move at once; evictions then keep the replicas a cluster loses running there until the
// clusters taking them report them available with fresh data, or the grace period ends.
// Replicas that fit nowhere else are never evicted at all.

// evictInput is what the eviction step knows besides the plan.
type evictInput struct {
	before   *federation.Schedule // the previous schedule as written (Keep counts, evictions)
	running  map[string]int64     // what runs per cluster now (Keep included)
	failover federation.Failover  // federation.EffectiveFailover
	status   []federation.MemberStatus
	pd       placement.Decision
	plan     Plan
	hold     bool             // replicas that fit nowhere stay where they run (a divided preference)
	copies   bool             // the replicas are copied (no preference, or Duplicated): see holdInPlace
	moving   bool             // this pass rebalances (rebalance on, or a refill is due)
	pinned   map[string]int64 // replica counts overrides set per cluster name (override.ReplicasOverrides)
	retain   bool             // spec.retainReplicas: the members' autoscalers own their counts
	// fleet is every Cluster: sync removes nothing from one that is not Ready, so an
	// eviction there does not end until the cluster is back (see outOfReach).
	fleet []federation.Cluster
	// disrupted is the fleet's disruption (placement.FleetDisruption): a cluster it counts
	// lost keeps what it runs (holdLost).
	disrupted placement.Disruption
	now       time.Time
}

// evictOutcome is what the eviction step changes in the decision.
type evictOutcome struct {
	clusters  []federation.ScheduledCluster
	evictions []federation.Eviction
	held      int64  // replicas kept where they run because they fit nowhere else
	unplaced  int64  // what is still unplaced
	message   string // for the Scheduled condition
	requeue   time.Duration
}

// evict applies the evictions to the plan's schedule next (plan order). Every cluster that
// runs replicas, had an eviction or was scheduled before takes one step (evictPass.step):
// its eviction begins, waits, is held, resumes, is released or ends, each by its own
// transition below.
func evict(in evictInput, next []federation.ScheduledCluster) evictOutcome {
	out := evictOutcome{unplaced: in.plan.Unplaced}
	in.running = withLeftovers(in)
	next, lost := holdLost(in, next)
	if in.failover.PurgeMode == federation.PurgeImmediately {
		out.clusters, out.message = next, lost
		return out
	}
	x := newEvictPass(in, next)
	// Never evict into nothing: what fits nowhere stays where it runs, without a deadline.
	held := holdInPlace(in, x.names, x.target, &out)
	x.compare()
	keep := map[string]int64{}
	for _, n := range x.names {
		e, st := x.step(n)
		if st == federation.EvictionEnded {
			continue
		}
		out.evictions = append(out.evictions, e)
		if !st.Keeps() {
			continue
		}
		keep[n] = e.Keep
		if st == federation.EvictionWaiting {
			// Look again at the deadline: from then on the eviction ends, or is held.
			if r := e.Deadline.Sub(in.now); out.requeue == 0 || r < out.requeue {
				out.requeue = r
			}
		}
	}
	out.clusters = x.schedule(keep)
	out.message = joinNonEmpty(evictionMessage(in, held, out.evictions), lost)
	return out
}

// holdLost returns next with every cluster the fleet's disruption counts lost
// (in.disrupted.Includes) at least at what it runs, unless an eviction of it was decided
// before, and the message that says so ("" when none is held). A disruption is the control
// plane's own outage, not the fleet's: what the plan would take from a lost cluster (a
// change sync had not carried out before the outage, a division redone on old data) waits
// until the cluster is back. No eviction begins there meanwhile, whatever the purge mode:
// nothing moves on the outage's data.
func holdLost(in evictInput, next []federation.ScheduledCluster) ([]federation.ScheduledCluster, string) {
	if !in.disrupted.Disrupted {
		return next, ""
	}
	var held []string
	for _, n := range in.disrupted.Lost {
		r := in.running[n]
		if r <= 0 || evicting(in.before, n) {
			continue
		}
		i := slices.IndexFunc(next, func(c federation.ScheduledCluster) bool { return c.Name == n })
		if i >= 0 && next[i].Replicas >= r {
			continue
		}
		if len(held) == 0 {
			next = slices.Clone(next)
		}
		if i < 0 {
			next = append(next, federation.ScheduledCluster{Name: n, Replicas: r})
		} else {
			next[i].Replicas = r
		}
		held = append(held, fmt.Sprintf("%s keeps %d", n, r))
	}
	if len(held) == 0 {
		return next, ""
	}
	return next, fmt.Sprintf("the fleet is disrupted (%s), the control plane's own outage: what runs in its lost clusters stays until they are back (%s)",
		in.disrupted.Message, strings.Join(held, ", "))
}

// evicting reports whether schedule s has an eviction of cluster.
func evicting(s *federation.Schedule, cluster string) bool {
	return s != nil && slices.ContainsFunc(s.Evictions, func(e federation.Eviction) bool { return e.Cluster == cluster })
}

// joinNonEmpty joins the parts that are not "" with "; ".
func joinNonEmpty(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "; ")
}

// evictPass is one pass of evict: its input, and what it derived from it for the steps.
type evictPass struct {
	evictInput
	next    []federation.ScheduledCluster
	names   []string                       // evictionClusters, sorted
	target  map[string]int64               // the plan's counts, plus what holdInPlace holds
	planned map[string]bool                // the clusters of the plan
	prev    map[string]federation.Eviction // the previous schedule's evictions, by cluster
	losing  map[string]bool                // the clusters losing replicas (compare)
	gains   bool                           // some cluster gains replicas (compare)
}

func newEvictPass(in evictInput, next []federation.ScheduledCluster) *evictPass {
	x := &evictPass{
		evictInput: in, next: next, names: evictionClusters(in.running, in.before),
		target: make(map[string]int64, len(next)), planned: make(map[string]bool, len(next)),
		prev: map[string]federation.Eviction{}, losing: map[string]bool{},
	}
	for _, c := range next {
		x.target[c.Name] = c.Replicas
		x.planned[c.Name] = true
	}
	if in.before != nil {
		for _, e := range in.before.Evictions {
			x.prev[e.Cluster] = e
		}
	}
	return x
}

// compare finds, once holdInPlace has set the targets, whether some cluster gains replicas
// and which clusters lose some: the others take the replicas over.
func (x *evictPass) compare() {
	for n, t := range x.target {
		if t > x.running[n] {
			x.gains = true
		}
	}
	for _, n := range x.names {
		e, ok := x.prev[n]
		if (ok && e.State().Keeps() && x.target[n] < e.Keep) || x.running[n] > x.target[n] {
			x.losing[n] = true
		}
	}
}

// step decides cluster n's eviction for this pass: the eviction and its state, Ended when
// there is none (it ended, or none begins).
func (x *evictPass) step(n string) (federation.Eviction, federation.EvictionState) {
	e, had := x.prev[n]
	switch {
	case !had:
		return x.start(n, x.running[n], x.mostKept(n))
	case e.State() == federation.EvictionReleased:
		return x.stayReleased(e)
	case e.State() == federation.EvictionWaiting && x.over(e) && x.target[n] < e.Replicas:
		// The grace period ended for the loss it was for (down to e.Replicas): n may drop to
		// that now. What n loses beyond it (its target fell since) is a loss of its own,
		// graceful as any: without this, the ended deadline took it at once.
		return x.start(n, min(x.running[n], e.Replicas), min(x.mostKept(n), e.Replicas))
	}
	return x.advance(e)
}

// start begins an eviction of cluster n, which runs running replicas (most: the most a new
// eviction keeps, see mostKept), when it loses replicas that must wait; Ended when none
// begins (a loss the rest of the fleet already runs is immediate).
func (x *evictPass) start(n string, running, most int64) (federation.Eviction, federation.EvictionState) {
	t := x.target[n]
	switch {
	case running > t && (x.gains || x.shortfall(n)):
		// Replicas move (another cluster gains), or, for a divided preference, none does but
		// the cluster loses available replicas while the clusters that keep theirs do not
		// all have them available (a drained cluster whose replica an evicted cluster coming
		// back takes over by what it kept, while the clusters that gained before are still
		// coming up): the copy waits.
		return x.settle(x.begin(n, running), false)
	case x.failover.PurgeMode == federation.PurgeNever && x.released(n) && excluded(x.pd, n):
		// Evicted, with nothing for the rest of the fleet to make up (it already runs the
		// targets): no wait, but under PurgeNever the copy is released, never deleted.
		return x.release(x.begin(n, running))
	case x.othersTakeOver() && most > t && excluded(x.pd, n):
		// A divided workload's cluster evicted (a taint, a placement rule, application
		// failover) while nothing seems to gain: the status that says so may be old (a clock
		// jump, a collector behind), so the copy still waits for the others to report theirs
		// available, as any eviction. So does a copied workload's: the other clusters'
		// copies may be there and not available (crashing, starting). The status may also
		// be behind what the last schedule asked for (a copy just created there, not yet
		// seen running): what it keeps is the larger.
		return x.settle(x.begin(n, most), false)
	}
	return x.end()
}

// shortfall reports whether cluster n's loss must wait though no cluster gains: a divided
// preference, n may have more than its target available, and some cluster that keeps its
// replicas does not report them available.
func (x *evictPass) shortfall(n string) bool {
	return x.hold && availableAbove(x.status, n, pinnedOr(x.pinned, n, x.target[n])) &&
		len(x.notAvailable(x.next, x.target, x.losing, time.Time{})) > 0
}

// advance takes a Waiting or Held eviction on: it ends when the cluster is selected again
// with enough replicas; else it goes to the cluster's new target, resumes when it was held
// and the cluster is back, and settles.
func (x *evictPass) advance(e federation.Eviction) (federation.Eviction, federation.EvictionState) {
	n := e.Cluster
	if x.target[n] >= e.Keep {
		return x.end() // selected again with enough replicas: nothing to wait for
	}
	e.Replicas = x.target[n]
	if e.State() == federation.EvictionHeld && !x.outOfReach(n) {
		e = x.resume(e)
	}
	return x.settle(e, true)
}

// settle decides whether eviction e, begun or going on (had), waits, is held or ends. Every
// other cluster the object stays in counts, those losing replicas too: one that keeps fewer
// than it had must have what it keeps available, or removing this copy drops what runs (its
// own copy may be restarting).
func (x *evictPass) settle(e federation.Eviction, had bool) (federation.Eviction, federation.EvictionState) {
	n := e.Cluster
	over := x.over(e)
	ends := over || e.State() == federation.EvictionHeld
	var waiting []string
	if !ends {
		waiting = x.notAvailable(x.next, x.target, map[string]bool{n: true}, e.Since.Time)
		ends = had && len(waiting) == 0 // the replacements are available
	}
	switch {
	case !ends:
		return x.wait(e, waiting)
	case x.outOfReach(n) && !(e.PurgeMode == federation.PurgeNever && x.released(n)):
		return x.holdUntilBack(e, over)
	}
	return x.finish(e)
}

// begin starts cluster n's eviction now, keeping keep replicas until its deadline: Waiting.
func (x *evictPass) begin(n string, keep int64) federation.Eviction {
	since := metav1.NewTime(x.now.Truncate(time.Second))
	return federation.Eviction{
		Cluster: n, Reason: evictionReason(n, x.evictInput), Replicas: x.target[n], Keep: keep,
		PurgeMode: x.failover.PurgeMode, Since: since, Deadline: x.deadline(since.Time),
	}
}

// wait keeps e Waiting for the clusters not yet reporting their replicas available.
func (x *evictPass) wait(e federation.Eviction, waiting []string) (federation.Eviction, federation.EvictionState) {
	n := e.Cluster
	e.Message = fmt.Sprintf("keeps %d replica(s) (to %d) until %s report their replicas available with fresh data, or until %s",
		e.Keep, e.Replicas, strings.Join(waiting, ", "), e.Deadline.UTC().Format(time.RFC3339))
	if x.outOfReach(n) {
		e.Message += fmt.Sprintf("; %s is out of reach: nothing is removed there until it is back", n)
	}
	return e, federation.EvictionWaiting
}

// holdUntilBack keeps e, which would end, while its cluster is out of reach: sync removes nothing
// from a cluster that is not Ready or that it cannot reach, so the copy would go only once
// the cluster is back, when the replacements that made the end safe may be gone (a cluster
// removed, a partition). The copy keeps its replicas in the schedule, and the end is
// decided again, with fresh data, once the cluster is back. A grace period that is over
// (over, or none left) leaves it Held, with no deadline: resume begins a new one. One still
// running leaves it Waiting until then.
func (x *evictPass) holdUntilBack(e federation.Eviction, over bool) (federation.Eviction, federation.EvictionState) {
	n := e.Cluster
	why := "its replacements are available"
	if over || e.State() == federation.EvictionHeld {
		e.Deadline = nil
		why = fmt.Sprintf("its grace period ended while %s was out of reach", n)
	}
	e.Message = fmt.Sprintf("%s; the copy stays until %s is back (sync removes nothing from a cluster that is not Ready or that it cannot reach), and its replacements are checked again then", why, n)
	return e, e.State()
}

// resume gives a Held eviction, whose cluster is back, a new grace period from now: before
// its copy goes, the replacements, checked again, have the time to come up. They may have
// gone meanwhile. It is Waiting again.
func (x *evictPass) resume(e federation.Eviction) federation.Eviction {
	e.Deadline = x.deadline(x.now.Truncate(time.Second))
	return e
}

// finish ends e: Released under purge mode Never for a cluster that leaves the schedule,
// else Ended.
func (x *evictPass) finish(e federation.Eviction) (federation.Eviction, federation.EvictionState) {
	if e.PurgeMode == federation.PurgeNever && x.released(e.Cluster) {
		return x.release(e)
	}
	return x.end()
}

// release ends e under purge mode Never: sync releases the copy instead of deleting it.
func (x *evictPass) release(e federation.Eviction) (federation.Eviction, federation.EvictionState) {
	e.Release, e.Deadline, e.Message = true, nil, releasedMessage
	return e, federation.EvictionReleased
}

// stayReleased keeps a Released eviction until the status no longer lists its cluster, or
// the cluster is scheduled again; then it has Ended.
func (x *evictPass) stayReleased(e federation.Eviction) (federation.Eviction, federation.EvictionState) {
	if x.released(e.Cluster) {
		return e, federation.EvictionReleased
	}
	return x.end()
}

// end is the end of an eviction, or the absence of one: the cluster runs its target.
func (x *evictPass) end() (federation.Eviction, federation.EvictionState) {
	return federation.Eviction{}, federation.EvictionEnded
}

// deadline is the end of a grace period that begins at since.
func (x *evictPass) deadline(since time.Time) *metav1.Time {
	d := metav1.NewTime(since.Add(time.Duration(*x.failover.GracePeriodSeconds) * time.Second))
	return &d
}

// over reports whether e's deadline has passed.
func (x *evictPass) over(e federation.Eviction) bool {
	return e.State() == federation.EvictionWaiting && !x.now.Before(e.Deadline.Time)
}

// released reports whether cluster n's copy is one purge mode Never releases: the plan
// leaves n (a cluster the plan keeps with 0 replicas keeps the federation's object there,
// scaled to 0, KubeFed's rule) and the status lists it.
func (x *evictPass) released(n string) bool {
	return x.target[n] == 0 && !x.planned[n] && listedIn(x.status, n)
}

// schedule is the plan's clusters at their targets, or what an eviction keeps; then the
// clusters the plan does not have that still keep or hold replicas, by name.
func (x *evictPass) schedule(keep map[string]int64) []federation.ScheduledCluster {
	var out []federation.ScheduledCluster
	at := func(n string) int64 {
		if k, ok := keep[n]; ok {
			return k
		}
		return x.target[n]
	}
	for _, c := range x.next {
		out = append(out, federation.ScheduledCluster{Name: c.Name, Replicas: at(c.Name)})
	}
	for _, n := range x.names {
		if r := at(n); !x.planned[n] && r > 0 {
			out = append(out, federation.ScheduledCluster{Name: n, Replicas: r})
		}
	}
	return out
}

// holdInPlace keeps replicas where they run when nothing else would run them, with no
// deadline, and returns them per cluster; target and out (held, unplaced) count them. It is
// the rule "never evict into nothing":
//
//   - a divided workload (in.hold): the replicas the plan could place nowhere
//     (Plan.Unplaced) stay in the clusters that lose replicas, in name order;
//   - a copied workload (in.copies: no preference, or Duplicated): when the plan gives no
//     cluster any replica, every cluster left out for its own state (a taint, readiness,
//     application failover) keeps what it runs. A cluster the object's own placement no
//     longer names (spec.placement.clusters, clusterSelector, excludeClusters, affinity) is
//     not kept: that is its author's word.
func holdInPlace(in evictInput, names []string, target map[string]int64, out *evictOutcome) map[string]int64 {
	held := map[string]int64{}
	keep := func(n string, h int64) {
		held[n] = h
		target[n] += h
		out.held += h
	}
	switch {
	case in.hold:
		for _, n := range names {
			if out.unplaced == 0 {
				break
			}
			if lost := in.running[n] - target[n]; lost > 0 {
				h := min(lost, out.unplaced)
				keep(n, h)
				out.unplaced -= h
			}
		}
	case in.copies && !places(in.plan):
		for _, n := range names {
			if lost := in.running[n] - target[n]; lost > 0 && leftForItsState(in.pd, n) {
				keep(n, lost)
			}
		}
	}
	return held
}

// places reports whether plan gives some cluster replicas.
func places(plan Plan) bool {
	for _, r := range plan.Replicas {
		if r > 0 {
			return true
		}
	}
	return false
}

// othersTakeOver reports whether an evicted cluster's copy waits for the others to report
// theirs available even when no cluster seems to gain (its case in evict): a divided workload
// always; a copied one when some other cluster gets replicas (with none, the copy stays where
// it is, or goes at its author's word: holdInPlace).
func (in evictInput) othersTakeOver() bool {
	return in.hold || (in.copies && places(in.plan))
}

// leftForItsState reports whether placement left cluster out for the cluster's own state
// (a taint, readiness, application failover) rather than by the object's own membership
// rules.
func leftForItsState(pd placement.Decision, cluster string) bool {
	return slices.ContainsFunc(pd.Excluded, func(x placement.Diagnosis) bool {
		return x.Cluster == cluster && (x.Rule == placement.Taint || x.Rule == placement.NotReady || x.Rule == placement.ApplicationFailure)
	})
}

// withLeftovers returns in.running with the copies sync could not remove: a cluster the
// last schedule no longer has (its eviction ended before the partition showed), whose status
// entry says sync could not reach it (ClusterUnreachable, ClusterNotReady) while it is out of
// reach, runs its last reported replicas as far as anyone knows. Its eviction begins again and
// is held until the cluster is back, when the replacements are checked once more. (Without
// this, the copy would be deleted when the cluster came back, whatever became of its
// replacements meanwhile.) in.running itself is returned when there is none.
func withLeftovers(in evictInput) map[string]int64 {
	var out map[string]int64
	for i := range in.status {
		m := &in.status[i]
		if m.Replicas == nil || *m.Replicas <= 0 || (m.Propagation != federation.PropagationClusterUnreachable && m.Propagation != federation.PropagationClusterNotReady) {
			continue
		}
		if _, known := in.running[m.Name]; known || !in.outOfReach(m.Name) {
			continue
		}
		if out == nil {
			out = maps.Clone(in.running)
			if out == nil {
				out = map[string]int64{}
			}
		}
		out[m.Name] = *m.Replicas
	}
	if out == nil {
		return in.running
	}
	return out
}

// evictionClusters are the clusters that run replicas, had an eviction or were in the
// previous schedule, sorted. The last may run none by the status (old data, or scaled to 0):
// a copy there is still one that purge mode Never releases rather than deletes.
func evictionClusters(running map[string]int64, before *federation.Schedule) []string {
	var names []string
	for n, r := range running {
		if r > 0 {
			names = append(names, n)
		}
	}
	if before != nil {
		for _, e := range before.Evictions {
			names = append(names, e.Cluster)
		}
		for _, c := range before.Clusters {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// mostKept is the most a new eviction of cluster keeps: what runs there, or what the previous
// schedule gave it when the status says less (a copy just created, not yet seen running);
// but only what runs there when its status entry shows no copy at all (copyIn): sync could
// not put one there, and there is nothing to keep.
func (in evictInput) mostKept(cluster string) int64 {
	running := in.running[cluster]
	for i := range in.status {
		if m := &in.status[i]; m.Name == cluster && !copyIn(m) {
			return running
		}
	}
	return max(running, scheduledIn(in.before, cluster))
}

// scheduledIn is cluster's replica count in schedule s (0 when s is nil or lacks it).
func scheduledIn(s *federation.Schedule, cluster string) int64 {
	if s == nil {
		return 0
	}
	for _, c := range s.Clusters {
		if c.Name == cluster {
			return c.Replicas
		}
	}
	return 0
}

// releasedMessage is the message of an eviction that ended under purge mode Never.
const releasedMessage = "ended; the copy stays in the cluster, released from the federation (purge mode Never)"

// excluded reports whether placement left cluster out (a taint, readiness, application
// failover, a placement rule): the cluster is evicted, not merely scaled down.
func excluded(pd placement.Decision, cluster string) bool {
	return slices.ContainsFunc(pd.Excluded, func(x placement.Diagnosis) bool { return x.Cluster == cluster })
}

// evictionReason is why cluster loses replicas: placement's rule for it, application
// failover's back-off, a rebalance, or else a change of placement or preference.
func evictionReason(cluster string, in evictInput) string {
	if in.before != nil {
		for _, a := range in.before.Avoided {
			if a.Cluster == cluster && a.Reason == federation.EvictionApplication {
				return federation.EvictionApplication
			}
		}
	}
	for _, x := range in.pd.Excluded {
		if x.Cluster != cluster {
			continue
		}
		if x.Rule == placement.Taint || x.Rule == placement.NotReady {
			return federation.EvictionTaint
		}
		if x.Rule == placement.ApplicationFailure {
			return federation.EvictionApplication
		}
		return federation.EvictionPlacement
	}
	if a, ok := in.plan.Cluster(cluster); ok && in.moving && a.Bound == Unbounded && a.Weight > 0 && a.Preference != NoPreference {
		return federation.EvictionRebalance
	}
	return federation.EvictionPlacement
}

// notAvailable returns the scheduled clusters, other than those losing replicas, that have
// not reported (fresh: not stale, observed after since, at the revision sync rendered) at
// least their scheduled count available: their share, or the count an override sets for
// them (in.pinned). Under retainReplicas a member's autoscaler owns its count, which the
// schedule only seeds: a cluster reporting its copy Ready (all of its own count available)
// counts as well.
func (in evictInput) notAvailable(next []federation.ScheduledCluster, target map[string]int64, losing map[string]bool, since time.Time) []string {
	var out []string
	for _, c := range next {
		want := pinnedOr(in.pinned, c.Name, target[c.Name])
		if losing[c.Name] || want == 0 {
			continue
		}
		m := freshEntry(in.status, c.Name, since)
		switch {
		case m != nil && m.AvailableReplicas != nil && *m.AvailableReplicas >= want:
		case in.retain && m != nil && m.Ready != nil && *m.Ready && m.AvailableReplicas != nil && *m.AvailableReplicas > 0:
		default:
			out = append(out, c.Name)
		}
	}
	return out
}

// freshEntry returns cluster's status entry when its data is fresh, nil otherwise. Fresh: not
// stale, at the revision sync rendered, and observed at or after since; or else Ready by the
// collector's judgement (up to date and available): the collector moves lastObserved only
// when it writes, so an entry whose values did not change since the eviction began keeps
// its older stamp while it is still read (it would be marked stale otherwise).
func freshEntry(status []federation.MemberStatus, cluster string, since time.Time) *federation.MemberStatus {
	for i := range status {
		m := &status[i]
		if m.Name != cluster {
			continue
		}
		ready := m.Ready != nil && *m.Ready
		observed := m.LastObserved != nil && (!m.LastObserved.Time.Before(since) || ready)
		// A revision that renders the same object never rewrites a member (see package sync):
		// its revision annotation may then lag while the collector judges it Ready.
		current := m.Revision == 0 || m.ObservedRevision == m.Revision || ready
		if m.Stale || !observed || !current {
			return nil
		}
		return m
	}
	return nil
}

// pinnedOr is cluster's replica count override (override.ReplicasOverrides) when it has one, else n: the
// member runs the override, whatever its share.
func pinnedOr(pinned map[string]int64, cluster string, n int64) int64 {
	if p, ok := pinned[cluster]; ok {
		return p
	}
	return n
}

// availableAbove reports whether cluster may have more than target replicas available: its
// status entry says so, or it has no entry, or a stale one, or no count (what cannot be
// known may be capacity).
func availableAbove(status []federation.MemberStatus, cluster string, target int64) bool {
	for i := range status {
		m := &status[i]
		if m.Name == cluster {
			return m.Stale || m.AvailableReplicas == nil || *m.AvailableReplicas > target
		}
	}
	return true
}

// listedIn reports whether status has an entry for cluster.
func listedIn(status []federation.MemberStatus, cluster string) bool {
	return slices.ContainsFunc(status, func(m federation.MemberStatus) bool { return m.Name == cluster })
}

// evictionMessage says, for the Scheduled condition, what evictions wait for and which replicas stay where they run because they fit nowhere else, naming each other
// cluster and why it cannot take them.
func evictionMessage(in evictInput, held map[string]int64, evictions []federation.Eviction) string {
	var parts []string
	for _, e := range evictions {
		if e.State().Keeps() {
			parts = append(parts, fmt.Sprintf("evicting %s (%s): %s", e.Cluster, e.Reason, e.Message))
		}
	}
	var stay []string
	for _, n := range slices.Sorted(mapKeys(held)) {
		stay = append(stay, fmt.Sprintf("%s keeps %d replica(s)", n, held[n]))
	}
	if len(stay) > 0 {
		var why []string
		for _, a := range in.plan.Clusters() {
			if held[a.Name] > 0 {
				continue
			}
			w := fmt.Sprintf("%s: has %d", a.Name, a.Replicas)
			if a.Bound != Unbounded {
				w += fmt.Sprintf(", capped by %s %d", a.Bound, a.Limit)
			}
			why = append(why, w)
		}
		for _, x := range in.pd.Excluded {
			if held[x.Cluster] == 0 {
				why = append(why, x.String())
			}
		}
		msg := "not evicted, as they fit nowhere else: " + strings.Join(stay, ", ")
		if len(why) > 0 {
			msg += " (" + strings.Join(why, "; ") + ")"
		} else {
			msg += " (no other cluster)"
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

func mapKeys(m map[string]int64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// targetsOf returns prev with every cluster under eviction at the eviction's target (left out
// at 0): what the next division starts from, so stickiness keeps the target, not what an
// eviction keeps meanwhile. nil stays nil.
func targetsOf(prev *federation.Schedule) *federation.Schedule {
	if prev == nil || len(prev.Evictions) == 0 {
		return prev
	}
	t := map[string]int64{}
	for _, e := range prev.Evictions {
		if e.State().Keeps() {
			t[e.Cluster] = e.Replicas
		}
	}
	out := *prev
	out.Clusters = nil
	for _, c := range prev.Clusters {
		if r, ok := t[c.Name]; ok {
			if r == 0 {
				continue
			}
			c.Replicas = r
		}
		out.Clusters = append(out.Clusters, c)
	}
	return &out
}

// stickyReplicas is currentReplicas for the division: from the previous schedule at its
// targets, corrected by fresh status only for the clusters that schedule lists with no
// eviction running. A cluster the schedule left (evicted, or not ready) does not keep its
// leftover replicas by stickiness when it comes back: only the rebalance rules give it some.
func stickyReplicas(fed *federation.FederatedObject, prev *federation.Schedule) map[string]int64 {
	if prev == nil {
		return currentReplicas(fed, nil)
	}
	// An eviction moved replicas like a refill: observations older than it do not undo it.
	moved := *prev
	for _, e := range prev.Evictions {
		if moved.LastRebalanceTime == nil || e.Since.After(moved.LastRebalanceTime.Time) {
			since := e.Since
			moved.LastRebalanceTime = &since
		}
	}
	out := currentReplicas(fed, &moved)
	listed := map[string]bool{}
	for _, c := range prev.Clusters {
		listed[c.Name] = true
	}
	for _, e := range prev.Evictions {
		listed[e.Cluster] = false
	}
	for n := range out {
		if !listed[n] {
			delete(out, n)
		}
	}
	for _, c := range prev.Clusters {
		if !listed[c.Name] || c.Replicas < 0 {
			continue
		}
		if _, ok := out[c.Name]; !ok {
			out[c.Name] = c.Replicas
		}
	}
	for _, e := range prev.Evictions {
		if e.State().Keeps() && e.Replicas > 0 {
			out[e.Cluster] = e.Replicas
		}
	}
	return out
}

// outOfReach reports whether sync cannot remove anything from cluster now: its Ready
// condition is not True, or the object's status entry there is stale or says sync could not
// reach it (a partition the cluster monitor may not have seen yet).
// A cluster no longer in the fleet, or leaving it, holds nothing: sync forgets or orphans
// what runs there.
func (in evictInput) outOfReach(cluster string) bool {
	i := slices.IndexFunc(in.fleet, func(c federation.Cluster) bool { return c.Name == cluster })
	switch {
	case i < 0 || in.fleet[i].DeletionTimestamp != nil:
		return false
	case !meta.IsStatusConditionTrue(in.fleet[i].Status.Conditions, federation.ConditionReady):
		return true
	}
	for i := range in.status {
		if m := &in.status[i]; m.Name == cluster {
			return m.Stale || m.Propagation == federation.PropagationClusterUnreachable || m.Propagation == federation.PropagationClusterNotReady
		}
	}
	return false
}
