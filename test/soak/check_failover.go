package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// failoverWatch samples the divided workloads (FederatedDeployments with a preference) after
// every step of the script and of the first settling, and checks the graceful eviction of a
// drained cluster as it happens, from the member Deployments' status as the fake workload
// simulation writes it:
//
//   - capacity: from the step that drains a cluster where the workload runs until its
//     eviction is done, the available replicas of the reachable members never drop below
//     what they were before the drain (at most the preference's total, and each copy at
//     most what the schedule then gave its cluster);
//   - deletion: a copy in a drained cluster never disappears while the clusters the schedule
//     gives the replicas to do not report them available;
//   - PurgeNever: a drained cluster's copy is released, never deleted, and stays in its
//     cluster, not managed, for good (checked again at quiescence, [checker.checkReleased]).
//
// Purge mode Immediately, a grace period that ended, and whatever makes a step's figures
// unknowable (a partition or its healing, a clock jump, a cluster removed, a member out of
// reach, the user's own edits of the workload) exempt an object from a step; each exemption
// is counted by reason in Result.FailoverSkipped. What another cluster's eviction took when
// its grace period ended, or a released copy sync took back, lowers the capacity floor of a
// drain under way: neither is that drain's doing. A drained copy deleted between two
// samples is checked against the replacements of both. One whose eviction ended, its
// replacements available, while it still ran in a cluster in reach, is judged then: sync
// may delete it steps later (the cluster cut off meanwhile), and the drain's window closes.
// An eviction of a cluster out of reach does not end until the cluster is back (the
// scheduler holds it), so a copy there is judged when it goes.
type failoverWatch struct {
	prev     map[federation.Key]divided
	windows  map[windowKey]*drainWindow
	released []releasedCopy
	// deadlines is the last deadline seen of each cluster's eviction: an eviction that ended
	// at its deadline between two samples (a clock jump) is gone from both.
	deadlines map[windowKey]time.Time
	// let is the copies (by uid) whose eviction ended, with its replacements available or at
	// its deadline, while the copy still ran: sync deletes it once it reaches the cluster,
	// perhaps steps later (the cluster not ready meanwhile). That deletion carries out the
	// ended eviction; it was judged when the eviction ended.
	let     map[windowKey]string
	checks  int
	skipped map[string]int
}

type windowKey struct {
	key     federation.Key
	cluster string
}

// drainWindow is a divided workload's drained cluster, from the drain until its eviction is
// done: floor is what the workload had available before the drain.
type drainWindow struct {
	floor int64
	since int // the step
}

// counted is what d has available, each copy counted up to its spec.replicas (share): a copy
// scaled down whose status still shows the replicas it had loses them once its controller
// observes the new generation. One scaled back up before that keeps them: the workload
// simulation, like a Deployment controller, acts only on the generation it observes.
func (win *drainWindow) counted(d divided) int64 {
	var n int64
	for name, c := range d.copies {
		if !slices.Contains(d.blind, name) {
			n += share(c)
		}
	}
	return n
}

// floorBefore is what d, the sample before a drain, has available for the drain's floor: each
// copy counted as by [drainWindow.counted], and a managed copy at most what the schedule
// gives its cluster. Replicas a copy runs beyond that were already going before the drain
// (an ended grace period, a rebalance), only not yet removed: sync writes the count once it
// can reach the cluster, which may be while the drain lasts, but the loss is not the drain's.
func floorBefore(d divided) int64 {
	var n int64
	for name, c := range d.copies {
		if slices.Contains(d.blind, name) {
			continue
		}
		v := share(c)
		if d.scheduled != nil && c.managed {
			v = min(v, d.scheduled[name])
		}
		n += v
	}
	return n
}

// memberCopy is a member Deployment as the sample saw it.
type memberCopy struct {
	uid       string
	managed   bool
	deleting  bool
	available int64
	spec      int64 // spec.replicas
	current   bool  // its status observed its generation
	released  bool  // released by its federated object (purge mode Never): it still runs
}

// divided is one sample of a divided workload.
type divided struct {
	uid       string
	desired   int64
	purge     federation.PurgeMode
	evictions map[string]federation.Eviction
	replicas  map[string]int64 // the schedule's targets
	// scheduled is status.schedule's count per cluster, not-ready clusters included (nil
	// without a schedule): what each copy is to run, whether sync could write it yet or not.
	scheduled map[string]int64
	copies    map[string]memberCopy
	available int64 // over the reachable members' managed copies
	blind     []string
	nsGone    map[string]bool // members where the workload's namespace is gone or going
	// editing: a spec edit (the user's) that the scheduler or sync has not recorded yet
	// (status.observedGeneration, the Scheduled condition's). In Run mode an edit takes effect
	// steps after it was made; until it has, what moves is the edit's doing, not a drain's.
	editing bool
}

// releasedCopy is a copy a PurgeNever eviction released.
type releasedCopy struct {
	fed     string
	cluster string
	ns      string
	name    string
	uid     string
}

func newFailoverWatch() *failoverWatch {
	return &failoverWatch{windows: map[windowKey]*drainWindow{}, deadlines: map[windowKey]time.Time{}, let: map[windowKey]string{}, skipped: map[string]int{}}
}

func (f *failoverWatch) skip(reason string) { f.skipped[reason]++ }

// snapshot reads every divided workload from the fakes, without API calls.
func (w *World) snapshot() map[federation.Key]divided {
	typ := federation.DeploymentType
	var clusters []federation.Cluster
	for _, u := range w.Host.Objects(federation.ClusterGVR) {
		if cl, err := federation.ClusterFromUnstructured(u); err == nil {
			clusters = append(clusters, *cl)
		}
	}
	members := w.members()
	w.mu.Lock()
	cut := map[string]bool{}
	for n, on := range w.partition {
		cut[n] = on
	}
	for n := range w.leaving {
		delete(members, n) // a cluster leaving the federation counts no more
	}
	w.mu.Unlock()
	out := map[federation.Key]divided{}
	for _, u := range w.Host.Objects(typ.FederatedGVR()) {
		ru, err := w.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, u.GetNamespace(), u.GetName())
		if err != nil || u.GetDeletionTimestamp() != nil || ru.GetDeletionTimestamp() != nil {
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			continue
		}
		var rsp federation.ReplicaSchedulingPreference
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ru.Object, &rsp); err != nil {
			continue
		}
		d := divided{uid: string(fed.UID), desired: int64(rsp.Spec.TotalReplicas), purge: federation.EffectiveFailover(fed.Spec.Placement, &rsp).PurgeMode,
			evictions: map[string]federation.Eviction{}, replicas: map[string]int64{}, copies: map[string]memberCopy{}, nsGone: map[string]bool{}}
		sched := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionScheduled)
		d.editing = fed.Status.ObservedGeneration < fed.Generation || (sched != nil && sched.ObservedGeneration < fed.Generation)
		if s := fed.Status.Schedule; s != nil {
			d.scheduled = map[string]int64{}
			for _, c := range s.Clusters {
				d.scheduled[c.Name] = c.Replicas
			}
			for _, e := range s.Evictions {
				d.evictions[e.Cluster] = e
			}
		}
		if t, err := plan.TargetsFor(fed, typ, clusters, w.Clock.Now()); err == nil {
			for _, n := range t.Order {
				if r := t.Replicas[n]; r != nil {
					d.replicas[n] = *r
				}
			}
		}
		for _, name := range sortedKeys(members) {
			if ns, err := members[name].Peek(federation.NamespaceType.TargetGVR(), "", fed.Namespace); err != nil || ns.GetDeletionTimestamp() != nil {
				d.nsGone[name] = true
			}
			obj, err := members[name].Peek(typ.TargetGVR(), fed.Namespace, fed.Name)
			if err != nil {
				continue
			}
			n, _, _ := unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
			spec, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			if !found {
				spec = 1
			}
			spec = w.sentReplicas(name, obj, spec) // an update under way counts as done
			observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			c := memberCopy{uid: string(obj.GetUID()), managed: managed(obj), deleting: obj.GetDeletionTimestamp() != nil, available: n,
				spec: spec, current: observed >= obj.GetGeneration(),
				released: obj.GetAnnotations()[federation.ReleasedAnnotation] == string(fed.UID)}
			d.copies[name] = c
			switch {
			case cut[name]:
				d.blind = append(d.blind, name)
			case c.managed && !c.deleting:
				d.available += n
			}
		}
		out[federation.Key{Namespace: fed.Namespace, Name: fed.Name}] = d
	}
	return out
}

// sample checks the divided workloads after a step whose events were events.
func (w *World) sample(events []Event) {
	f := w.failover
	cur := w.snapshot()
	now := w.Clock.Now()
	// A released copy that sync took back (managed again, its cluster placed again) is the
	// federation's again: its deletion later is no longer the release's to check.
	f.released = slices.DeleteFunc(f.released, func(r releasedCopy) bool {
		ns, name, _ := strings.Cut(r.fed, "/")
		oc, ok := cur[federation.Key{Namespace: ns, Name: name}].copies[r.cluster]
		return ok && oc.uid == r.uid && oc.managed
	})
	unknowable := ""
	drained := map[string]bool{}
	touched := map[federation.Key]bool{}
	for _, e := range events {
		switch e.Op {
		case OpPartition, OpHeal, OpClockJump, OpRemoveCluster:
			unknowable = "a " + string(e.Op) + " in the step"
		case OpTaint:
			if e.Value > 0 {
				drained[e.Cluster] = true
			}
		case OpEditPreference:
			touched[e.Key] = true
		default:
			if e.Kind == federation.DeploymentType.Federated.Kind {
				touched[e.Key] = true
			}
		}
	}
	w.mu.Lock()
	tainted := map[string]bool{}
	for n := range w.tainted {
		tainted[n] = !w.leaving[n] // a cluster leaving the federation loses its copies anyway
	}
	w.mu.Unlock()
	where := func(key federation.Key) string { return "FederatedDeployment " + key.String() }
	step := w.step()
	for key, o := range cur {
		for c, e := range o.evictions {
			if e.Deadline != nil {
				f.deadlines[windowKey{key, c}] = e.Deadline.Time
			}
		}
	}
	for _, key := range sortedObjectKeys(cur) {
		o := cur[key]
		p, seen := f.prev[key]
		same := seen && p.uid == o.uid
		if same {
			f.noteEnded(key, p, o, now)
		}
		for c := range drained {
			if pc, ok := p.copies[c]; same && ok && pc.managed && !pc.deleting {
				win := &drainWindow{since: step}
				win.floor = min(p.desired, floorBefore(p))
				f.windows[windowKey{key, c}] = win
			}
		}
		// An application failover moves the workload away from a cluster where it is
		// unhealthy as gracefully as a drain: its window opens with the eviction.
		for _, c := range sortedKeys(o.evictions) {
			_, had := p.evictions[c]
			_, open := f.windows[windowKey{key, c}]
			if pc, ok := p.copies[c]; same && !had && !open && o.evictions[c].Reason == federation.EvictionApplication && ok && pc.managed && !pc.deleting {
				f.windows[windowKey{key, c}] = &drainWindow{since: step, floor: min(p.desired, floorBefore(p))}
			}
		}
		// Capacity, while a drained cluster's eviction lasts.
		for _, c := range sortedClusters(f.windows, key) {
			wk := windowKey{key, c}
			win := f.windows[wk]
			ev, evicting := o.evictions[c]
			if pe, ok := p.evictions[c]; !evicting && ok {
				ev = pe
			}
			available := win.counted(o)
			other := f.otherLoss(key, c, p, o, now)
			switch {
			case !same || touched[key] || o.desired != p.desired || o.editing || p.editing:
				f.skip("the user's own edit of the workload")
				delete(f.windows, wk)
				continue
			case o.purge == federation.PurgeImmediately:
				f.skip("purge Immediately")
				delete(f.windows, wk)
				continue
			case ev.Deadline != nil && !now.Before(ev.Deadline.Time):
				f.skip("the grace period ended")
				delete(f.windows, wk)
				continue
			case unknowable != "":
				f.skip(unknowable)
				win.floor = min(win.floor, available) // what the step took is not the drain's
			case other != "":
				f.skip(other)
				win.floor = min(win.floor, available)
			case len(o.blind) > 0:
				f.skip("a member out of reach")
			default:
				f.checks++
				if available < win.floor {
					w.violate(RuleCapacityFloor, where(key), "capacity dropped while %s's replicas leave it (drained or failed over, since step %d): %d available, %d before the drain (total %d); purge %s; available per cluster %s; evictions %s",
						c, win.since, available, win.floor, o.desired, o.purge, copiesSummary(o), evictionsSummary(o))
				}
			}
			if oc, ok := o.copies[c]; !evicting && (!ok || !oc.managed || !tainted[c] || f.let[wk] == oc.uid) {
				delete(f.windows, wk) // the eviction is done
			}
		}
		if !same {
			continue
		}
		// Deletion of a drained cluster's copy, and PurgeNever's release.
		for c, pc := range p.copies {
			if !tainted[c] || !pc.managed || pc.deleting || min(pc.available, pc.spec) == 0 {
				// Only a copy that runs available replicas is capacity to lose; one already
				// scaled to 0 whose status still shows replicas is losing them anyway.
				continue
			}
			if _, inFleet := w.Fleet.Member(c); !inFleet {
				continue
			}
			oc, ok := o.copies[c]
			if ok && oc.uid == pc.uid && !oc.deleting {
				if !oc.managed && o.purge == federation.PurgeNever && !touched[key] {
					ns, name := memberName(federation.DeploymentType, key)
					f.released = append(f.released, releasedCopy{fed: key.String(), cluster: c, ns: ns, name: name, uid: oc.uid})
				}
				continue
			}
			ev, had := p.evictions[c]
			switch {
			case touched[key] || o.editing || p.editing:
				f.skip("the user's own edit of the workload")
				continue
			case o.purge == federation.PurgeNever:
				f.checks++
				w.violate(RulePurgeNever, where(key), "the copy in drained cluster %s (%d available) was deleted; purge Never releases it instead (its namespace gone there: %t)", c, pc.available, o.nsGone[c])
				continue
			case o.purge == federation.PurgeImmediately:
				f.skip("purge Immediately")
				continue
			case had && ev.Deadline != nil && !now.Before(ev.Deadline.Time):
				f.skip("the grace period ended")
				continue
			case !had && f.let[windowKey{key, c}] == pc.uid:
				f.skip("an eviction that ended steps before")
				delete(f.let, windowKey{key, c})
				continue
			case !had && ended(f.deadlines, windowKey{key, c}, now):
				f.skip("the grace period ended")
				delete(f.deadlines, windowKey{key, c}) // used: a later drain's copy is checked again
				continue
			}
			missing, blind := missingReplacements(o, c)
			if blind {
				f.skip("a member out of reach")
				continue
			}
			f.checks++
			if before, _ := missingReplacements(p, c); len(missing) > 0 && len(before) > 0 {
				// The copy went somewhere between the two samples: with every replacement
				// available at the first, the eviction could end then. (Another drain in the
				// step may already have given clusters replicas that are not up yet.)
				w.violate(RuleDrainedCopyKept, where(key), "the copy in drained cluster %s (%d available) was deleted before its replacements were available (%s); purge %s; eviction seen before: %t; its namespace gone there: %t",
					c, pc.available, strings.Join(missing, ", "), o.purge, had, o.nsGone[c])
			}
		}
	}
	f.prev = cur
}

// share is what a copy counts for, at most: its available replicas up to its spec, none
// when it is not (or no longer) the federation's or it is going.
func share(c memberCopy) int64 {
	if (!c.managed && !c.released) || c.deleting {
		return 0
	}
	return min(c.available, c.spec)
}

// otherLoss names what else, in the step from p to o, took replicas from key that were not
// the drain of cluster's doing, "" when nothing did: another cluster's eviction that ended at
// its deadline (its kept replicas go, as the grace period promises), or a copy a PurgeNever
// eviction had released that sync took back where the object is placed again (it runs the
// schedule's count from then on; the released replicas were no longer the federation's).
func (f *failoverWatch) otherLoss(key federation.Key, cluster string, p, o divided, now time.Time) string {
	for wk, d := range f.deadlines {
		if wk.key != key || wk.cluster == cluster || now.Before(d) {
			continue
		}
		// Its copy lost replicas in this step: sync carries out the eviction's end a step
		// or more after the scheduler wrote it.
		if share(p.copies[wk.cluster]) > share(o.copies[wk.cluster]) {
			return "another eviction's grace period ended"
		}
	}
	for c, oc := range o.copies {
		if pc, ok := p.copies[c]; ok && pc.released && pc.uid == oc.uid && oc.managed {
			return "a released copy taken back"
		}
	}
	return ""
}

// noteEnded records in f.let the copies of key whose eviction ended from p to o while they
// still run, their cluster out of the schedule and in reach: with their replacements
// available then, or at the deadline. A cluster scheduled again is the federation's again:
// its record goes.
func (f *failoverWatch) noteEnded(key federation.Key, p, o divided, now time.Time) {
	for wk := range f.let {
		if _, again := o.scheduled[wk.cluster]; wk.key == key && again {
			delete(f.let, wk)
		}
	}
	for c, pe := range p.evictions {
		if _, still := o.evictions[c]; still || pe.State() == federation.EvictionReleased {
			continue
		}
		if _, scheduled := o.scheduled[c]; scheduled {
			continue
		}
		oc, ok := o.copies[c]
		if !ok || !oc.managed || oc.deleting || slices.Contains(p.blind, c) || slices.Contains(o.blind, c) {
			// The scheduler holds an eviction whose cluster is out of reach until it is back
			// and checks the replacements again then: a copy deleted later is judged then.
			continue
		}
		if missing, _ := missingReplacements(o, c); len(missing) == 0 || (pe.Deadline != nil && !now.Before(pe.Deadline.Time)) {
			f.let[windowKey{key, c}] = oc.uid
		}
	}
}

// missingReplacements lists the clusters of d's schedule, other than cluster, whose copy does
// not have its scheduled replicas available ("name available/scheduled"), and reports
// whether one of them is out of reach.
func missingReplacements(d divided, cluster string) (missing []string, blind bool) {
	for _, n := range sortedKeys(d.replicas) {
		if n == cluster || d.replicas[n] == 0 {
			continue
		}
		dc := d.copies[n]
		if slices.Contains(d.blind, n) {
			blind = true
		}
		if !dc.managed || dc.deleting || dc.available < d.replicas[n] {
			missing = append(missing, fmt.Sprintf("%s %d/%d", n, dc.available, d.replicas[n]))
		}
	}
	return missing, blind
}

// ended reports whether the last eviction seen of wk had its deadline by now.
func ended(deadlines map[windowKey]time.Time, wk windowKey, now time.Time) bool {
	d, ok := deadlines[wk]
	return ok && !now.Before(d)
}

// checkReleased checks that every copy a PurgeNever eviction released is still in its
// cluster, with the same UID, and not managed.
func (c *checker) checkReleased() {
	for _, r := range c.w.failover.released {
		m, ok := c.members[r.cluster]
		if !ok {
			continue // the cluster left the fleet
		}
		obj, err := m.Peek(federation.DeploymentType.TargetGVR(), r.ns, r.name)
		switch {
		case err != nil || string(obj.GetUID()) != r.uid:
			c.violate(RulePurgeNever, "FederatedDeployment "+r.fed, "the copy its PurgeNever eviction released in %s is gone", r.cluster)
		case managed(obj) && !c.placedIn(r.fed, r.cluster):
			c.violate(RulePurgeNever, "FederatedDeployment "+r.fed, "the copy its PurgeNever eviction released in %s is managed again, where it is not placed", r.cluster)
		}
	}
}

// placedIn reports whether FederatedDeployment fed ("ns/name") is placed in cluster now: a
// copy released there is then the federation's again (sync takes it back).
func (c *checker) placedIn(fed, cluster string) bool {
	ns, name, _ := strings.Cut(fed, "/")
	typ := federation.DeploymentType
	u, err := c.w.Host.Peek(typ.FederatedGVR(), ns, name)
	if err != nil {
		return false
	}
	obj, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return false
	}
	t, err := plan.TargetsFor(obj, typ, c.clusters, c.w.Clock.Now())
	if err != nil {
		return false
	}
	_, placed := t.Replicas[cluster]
	return placed || slices.Contains(t.NotReady, cluster) // not ready: nothing is decided there
}

func sortedObjectKeys(m map[federation.Key]divided) []federation.Key {
	out := make([]federation.Key, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b federation.Key) int { return strings.Compare(a.String(), b.String()) })
	return out
}

func sortedClusters(m map[windowKey]*drainWindow, key federation.Key) []string {
	var out []string
	for k := range m {
		if k.key == key {
			out = append(out, k.cluster)
		}
	}
	slices.Sort(out)
	return out
}

func copiesSummary(d divided) string {
	var b strings.Builder
	for _, n := range sortedKeys(d.copies) {
		c := d.copies[n]
		fmt.Fprintf(&b, "[%s %d of %d managed=%t]", n, c.available, d.replicas[n], c.managed)
	}
	return b.String()
}

func evictionsSummary(d divided) string {
	var b strings.Builder
	for _, n := range sortedKeys(d.evictions) {
		e := d.evictions[n]
		dl := "none"
		if e.Deadline != nil {
			dl = e.Deadline.Format(time.TimeOnly)
		}
		fmt.Fprintf(&b, "[%s %s %s keep %d then %d deadline %s]", n, e.State(), e.Reason, e.Keep, e.Replicas, dl)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}
