package scheduler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// evictT0 is when the evictions of these tests begin.
var evictT0 = time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)

// evictCluster is a Ready cluster; cpu, when set, is its status.available.
func evictCluster(name, cpu string, taints ...corev1.Taint) federation.Cluster {
	c := federation.Cluster{}
	c.Name = name
	c.Spec.Taints = taints
	c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
	if cpu != "" {
		c.Status.Available = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return c
}

// labelled is c with label k=v.
func labelled(c federation.Cluster, k, v string) federation.Cluster {
	c.Labels = map[string]string{k: v}
	return c
}

// notReady is c with its Ready condition False: the cluster monitor lost it.
func notReady(c federation.Cluster) federation.Cluster {
	c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionFalse, Reason: "Unreachable"}}
	return c
}

// ready is m judged Ready by the status collector.
func ready(m federation.MemberStatus) federation.MemberStatus {
	yes := true
	m.Ready = &yes
	return m
}

var drain = corev1.Taint{Key: "drain", Value: "true", Effect: corev1.TaintEffectNoExecute}

// member is a status.clusters entry observed at at, running replicas with available ready.
func member(name string, replicas, available int64, at time.Time) federation.MemberStatus {
	t := metav1.NewTime(at)
	return federation.MemberStatus{Name: name, Replicas: &replicas, AvailableReplicas: &available, LastObserved: &t, Revision: 1, ObservedRevision: 1}
}

func sched(kv ...any) []federation.ScheduledCluster {
	var out []federation.ScheduledCluster
	for i := 0; i < len(kv); i += 2 {
		out = append(out, federation.ScheduledCluster{Name: kv[i].(string), Replicas: int64(kv[i+1].(int))})
	}
	return out
}

func evictionOf(cluster, reason string, replicas, keep int64, mode federation.PurgeMode, since time.Time) federation.Eviction {
	d := metav1.NewTime(since.Add(time.Duration(federation.DefaultGracePeriodSeconds) * time.Second))
	return federation.Eviction{Cluster: cluster, Reason: reason, Replicas: replicas, Keep: keep, PurgeMode: mode, Since: metav1.NewTime(since), Deadline: &d}
}

// releasedAt is e as an ended PurgeNever eviction that asks sync to release the copy.
func releasedAt(e federation.Eviction) federation.Eviction {
	e.Release, e.Deadline = true, nil
	return e
}

// TestDecideEvictions: every loss of replicas that another cluster gains is graceful; the
// cluster keeps them until the gainers report them available with fresh data or the grace
// period ends; replicas that fit nowhere else are never evicted.
func TestDecideEvictions(t *testing.T) {
	grace := time.Duration(federation.DefaultGracePeriodSeconds) * time.Second
	before := evictT0.Add(-time.Minute)
	after := evictT0.Add(time.Minute)
	steady := &federation.Schedule{Clusters: sched("a", 2, "b", 2, "c", 2), LastRebalanceTime: &metav1.Time{Time: evictT0.Add(-time.Hour)}}
	runsTwoEach := []federation.MemberStatus{member("a", 2, 2, before), member("b", 2, 2, before), member("c", 2, 2, before)}
	drained := []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "", drain)}
	cEvicted := evictionOf("c", federation.EvictionTaint, 0, 2, federation.PurgeGraciously, evictT0)
	evicting := &federation.Schedule{Clusters: sched("a", 3, "b", 3, "c", 2), LastRebalanceTime: steady.LastRebalanceTime,
		Evictions: []federation.Eviction{cEvicted}}
	gainersUp := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 3, after), member("c", 2, 2, after)}
	staleB := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 3, after), member("c", 2, 2, after)}
	staleB[1].Stale = true
	oldRevB := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 3, after), member("c", 2, 2, after)}
	oldRevB[1].Revision = 2
	neverEvicted := cEvicted
	neverEvicted.PurgeMode = federation.PurgeNever
	neverEvicting := &federation.Schedule{Clusters: evicting.Clusters, LastRebalanceTime: steady.LastRebalanceTime, Evictions: []federation.Eviction{neverEvicted}}
	evictingNoRefill := evicting.DeepCopy()
	evictingNoRefill.LastRebalanceTime = &metav1.Time{Time: evictT0}
	released := neverEvicted
	released.Release, released.Deadline = true, nil
	releasedSchedule := &federation.Schedule{Clusters: sched("a", 3, "b", 3), LastRebalanceTime: steady.LastRebalanceTime, Evictions: []federation.Eviction{released}}

	// c, drained, is out of reach now (not Ready): sync removes nothing there until it is back.
	cDown := []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), notReady(evictCluster("c", "", drain))}
	gainersUpCStale := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 3, after), member("c", 2, 2, before)}
	gainersUpCStale[2].Stale = true
	cHeld := cEvicted
	cHeld.Deadline = nil
	held := &federation.Schedule{Clusters: evicting.Clusters, LastRebalanceTime: steady.LastRebalanceTime, Evictions: []federation.Eviction{cHeld}}
	bDownCStale := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 0, after), member("c", 2, 2, before)}
	bDownCStale[2].Stale = true
	undeleted := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 3, after), member("c", 2, 2, before)}
	undeleted[2].Stale, undeleted[2].Propagation = true, federation.PropagationClusterUnreachable
	heldNever := held.DeepCopy()
	heldNever.Evictions[0].PurgeMode = federation.PurgeNever
	// Back, the replacements are checked again: b lost its replicas meanwhile.
	bLost := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 0, evictT0.Add(5*grace)), member("c", 2, 2, evictT0.Add(5*grace))}
	cRestarted := cEvicted
	cRestarted.Deadline = &metav1.Time{Time: evictT0.Add(6 * grace)}
	// The eviction ended and sync deleted c's copy, which its finalizers hold: sync lists c
	// until it is gone, with the replicas the collector last saw there.
	ended := &federation.Schedule{Clusters: sched("a", 3, "b", 3), LastRebalanceTime: steady.LastRebalanceTime}
	cGoing := []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 3, after), member("c", 2, 2, after)}
	cGoing[2].Propagation = federation.PropagationWaitingForRemoval

	for _, tc := range []struct {
		name       string
		failover   string // spec.placement.failover, YAML
		overrides  string // spec.overrides, YAML
		retain     bool   // spec.retainReplicas
		rsp        string // the preference's spec, YAML ("" = 6 replicas, "*": weight 1)
		clusters   []federation.Cluster
		prev       *federation.Schedule
		status     []federation.MemberStatus
		now        time.Time
		want       []federation.ScheduledCluster
		evictions  []federation.Eviction
		reason     string
		message    []string // substrings of the Scheduled message
		requeueMax time.Duration
	}{{
		name:     "a NoExecute taint starts an eviction: c keeps its 2 while a and b gain",
		clusters: drained, prev: steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted},
		reason: scheduler.ReasonScheduled, message: []string{"evicting c (TaintNoExecute): keeps 2 replica(s) (to 0) until a, b report"},
		requeueMax: grace,
	}, {
		name:     "the eviction goes on, not restarted, while the gainers' data predates it",
		clusters: drained, prev: evicting, status: runsTwoEach, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted},
		reason: scheduler.ReasonScheduled, requeueMax: grace - 2*time.Minute,
	}, {
		name:     "it ends once the gainers report their replicas available with fresh data",
		clusters: drained, prev: evicting, status: gainersUp, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "stale data never counts as a ready replacement",
		clusters: drained, prev: evicting, status: staleB, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
		message: []string{"until b report"},
	}, {
		name:     "nor does a gainer still on an older revision than sync rendered",
		clusters: drained, prev: evicting, status: oldRevB, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
	}, {
		name:     "it ends at its deadline, replacements ready or not",
		clusters: drained, prev: evicting, status: staleB, now: evictT0.Add(grace),
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "replacements available while the losing cluster is not Ready: the eviction goes on, as sync cannot remove the copy there",
		clusters: cDown, prev: evicting, status: gainersUpCStale, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
		message: []string{"evicting c (TaintNoExecute): its replacements are available; the copy stays until c is back"},
	}, {
		name:     "so it does while c is still Ready but its data is stale: a partition the cluster monitor has yet to see",
		clusters: drained, prev: evicting, status: gainersUpCStale, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
		message: []string{"the copy stays until c is back"},
	}, {
		name:     "its grace period ends while it is not Ready: the copy stays, with no deadline, until it is",
		clusters: cDown, prev: evicting, status: gainersUpCStale, now: evictT0.Add(grace + time.Minute),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cHeld}, reason: scheduler.ReasonScheduled,
		message: []string{"its grace period ended while c was out of reach; the copy stays until c is back"},
	}, {
		name:     "it stays held while c is not Ready",
		clusters: cDown, prev: held, status: gainersUpCStale, now: evictT0.Add(5 * grace),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cHeld}, reason: scheduler.ReasonScheduled,
	}, {
		name:     "back Ready while a replacement is down: a new grace period begins and the copy waits for it",
		clusters: drained, prev: held, status: bLost, now: evictT0.Add(5 * grace),
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cRestarted}, reason: scheduler.ReasonScheduled,
		message:    []string{"evicting c (TaintNoExecute): keeps 2 replica(s) (to 0) until b report"},
		requeueMax: grace,
	}, {
		name:     "back Ready with its replacements available: the eviction ends and the copy goes",
		clusters: drained, prev: held, status: gainersUp, now: evictT0.Add(5 * grace),
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "a copy being deleted is going, not running: no eviction puts it back while its finalizers hold it",
		clusters: drained, prev: ended, status: cGoing, now: evictT0.Add(3 * time.Minute),
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never, held while out of reach: the copy is released (sync releases it once it can), not kept",
		failover: `{purgeMode: Never}`,
		clusters: cDown, prev: heldNever, status: bDownCStale, now: evictT0.Add(5 * grace),
		want: sched("a", 3, "b", 3), evictions: []federation.Eviction{releasedAt(neverEvicted)}, reason: scheduler.ReasonScheduled,
	}, {
		name: "an eviction that ended before the partition showed: the copy sync could not delete begins one again",
		// The schedule no longer has c, but sync's delete there failed and c's data is
		// stale: as far as anyone knows c still runs its 2, which wait for the cluster.
		clusters: drained, prev: &federation.Schedule{Clusters: sched("a", 3, "b", 3), LastRebalanceTime: steady.LastRebalanceTime},
		status: undeleted, now: evictT0,
		want: sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
	}, {
		name:     "a cluster the schedule left whose copy sync removed is not brought back",
		clusters: drained, prev: &federation.Schedule{Clusters: sched("a", 3, "b", 3), LastRebalanceTime: steady.LastRebalanceTime},
		status: gainersUp[:2], now: evictT0,
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "a cluster no longer in the fleet holds nothing: its eviction ends",
		clusters: drained[:2], prev: held, status: gainersUpCStale, now: evictT0.Add(5 * grace),
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name: "an ended eviction covers only the loss it was for: a further loss waits anew",
		// c was cut from 3 to 2 and kept 3 until the deadline, which has now passed. In the
		// same pass c is drained: its 2 go to a and b, which do not have them yet. The ended
		// grace period lets c go to 2, not to 0 at once.
		clusters: drained, now: evictT0,
		prev: &federation.Schedule{Clusters: sched("a", 2, "b", 2, "c", 3), LastRebalanceTime: steady.LastRebalanceTime,
			Evictions: []federation.Eviction{evictionOf("c", federation.EvictionRebalance, 2, 3, federation.PurgeGraciously, evictT0.Add(-grace))}},
		status: []federation.MemberStatus{member("a", 2, 2, before), member("b", 2, 2, before), member("c", 3, 3, before)},
		want:   sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted},
		reason: scheduler.ReasonScheduled, message: []string{"evicting c (TaintNoExecute): keeps 2 replica(s) (to 0) until a, b report"},
		requeueMax: grace,
	}, {
		name:     "purge mode Immediately: no eviction, today's behaviour",
		failover: `{purgeMode: Immediately}`,
		clusters: drained, prev: steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "the preference's failover applies when the placement has none",
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {weight: 1}}, failover: {purgeMode: Immediately}}`,
		clusters: drained, prev: steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never: the ended eviction asks sync to release the copy",
		failover: `{purgeMode: Never}`,
		clusters: drained, prev: neverEvicting, status: gainersUp, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3), evictions: []federation.Eviction{released}, reason: scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never: nothing is left once the status no longer lists the cluster",
		failover: `{purgeMode: Never}`,
		clusters: drained, prev: releasedSchedule, status: gainersUp[:2], now: evictT0.Add(3 * time.Minute),
		want: sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never, a drain the others need not make up (the total fell to what they run): the copy is released at once",
		failover: `{purgeMode: Never}`,
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 4, clusters: {"*": {weight: 1}}}`,
		clusters: drained, prev: steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 2, "b", 2), evictions: []federation.Eviction{releasedAt(evictionOf("c", federation.EvictionTaint, 0, 2, federation.PurgeNever, evictT0))},
		reason: scheduler.ReasonScheduled,
	}, {
		name:     "a drain nobody needs to make up: the drained copy still waits for the others' fresh data",
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 4, clusters: {"*": {weight: 1}}}`,
		clusters: drained, prev: steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 2, "b", 2, "c", 2), evictions: []federation.Eviction{cEvicted},
		reason: scheduler.ReasonScheduled,
	}, {
		name:     "a drain whose status says the drained copy has nothing available (old data): it waits all the same",
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 4, clusters: {"*": {weight: 1}}}`,
		clusters: drained, prev: steady, now: evictT0,
		status: []federation.MemberStatus{member("a", 2, 2, before), member("b", 2, 2, before), member("c", 2, 0, before)},
		want:   sched("a", 2, "b", 2, "c", 2), evictions: []federation.Eviction{cEvicted},
		reason: scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never, a drained cluster whose status says it runs nothing (old data): its copy is released, never deleted",
		failover: `{purgeMode: Never}`,
		clusters: drained, prev: steady, now: evictT0,
		status: []federation.MemberStatus{member("a", 2, 2, before), member("b", 2, 2, before), member("c", 0, 0, before)},
		want:   sched("a", 3, "b", 3), evictions: []federation.Eviction{releasedAt(evictionOf("c", federation.EvictionTaint, 0, 0, federation.PurgeNever, evictT0))},
		reason: scheduler.ReasonScheduled,
	}, {
		name:     "a drain whose status has not yet seen the copy the last schedule asked for: it waits with what was scheduled",
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 4, clusters: {"*": {weight: 1}}}`,
		clusters: drained, prev: steady, now: evictT0,
		status: []federation.MemberStatus{member("a", 2, 2, before), member("b", 2, 2, before), member("c", 0, 0, before)},
		want:   sched("a", 2, "b", 2, "c", 2), evictions: []federation.Eviction{cEvicted},
		reason: scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never, a pure total reduction (no cluster evicted): immediate, nothing released",
		failover: `{purgeMode: Never}`,
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 3, clusters: {"*": {weight: 1}}}`,
		clusters: []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "")},
		prev:     steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 1, "b", 1, "c", 1), reason: scheduler.ReasonScheduled,
	}, {
		name: "partial fit: the replica that fits moves gracefully, the other stays",
		// a has room for 1 more replica of 500m, b for none.
		clusters: []federation.Cluster{evictCluster("a", "500m"), evictCluster("b", "0"), evictCluster("c", "", drain)},
		prev:     steady, status: runsTwoEach, now: evictT0,
		want:      sched("a", 3, "b", 2, "c", 2),
		evictions: []federation.Eviction{evictionOf("c", federation.EvictionTaint, 1, 2, federation.PurgeGraciously, evictT0)},
		reason:    scheduler.ReasonUnschedulable,
		message:   []string{"not evicted, as they fit nowhere else: c keeps 1 replica(s) (a: has 3, capped by capacity 3; b: has 2, capped by capacity 2)", "b: has 2, capped by capacity 2", "evicting c (TaintNoExecute): keeps 2 replica(s) (to 1) until a, b report"},
	}, {
		name:     "nothing fits: no eviction, the replicas stay, the message says why for each cluster",
		clusters: []federation.Cluster{evictCluster("a", "0"), evictCluster("b", "0"), evictCluster("c", "", drain)},
		prev:     steady, status: runsTwoEach, now: evictT0,
		want:    sched("a", 2, "b", 2, "c", 2),
		reason:  scheduler.ReasonUnschedulable,
		message: []string{"c keeps 2 replica(s)", "a: has 2, capped by capacity 2", "b: has 2, capped by capacity 2"},
	}, {
		name:     "a pure total reduction is immediate",
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 3, clusters: {"*": {weight: 1}}}`,
		clusters: []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "")},
		prev:     steady, status: runsTwoEach, now: evictT0,
		want: sched("a", 1, "b", 1, "c", 1), reason: scheduler.ReasonScheduled,
	}, {
		name:     "a placement change is graceful too",
		clusters: []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "")},
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {weight: 1}, c: {maxReplicas: 0}}}`,
		prev:     steady, status: runsTwoEach, now: evictT0,
		want:      sched("a", 3, "b", 3, "c", 2),
		evictions: []federation.Eviction{evictionOf("c", federation.EvictionPlacement, 0, 2, federation.PurgeGraciously, evictT0)},
		reason:    scheduler.ReasonScheduled,
	}, {
		name: "rebalance off: the next division starts from the eviction's target, not what it keeps",
		// c is selected again (no taint) while its eviction runs and status says it runs 2: it
		// gets its minimum (1), not its 2 back by stickiness; it keeps 2 until a and b are up.
		clusters: []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "")},
		prev:     evictingNoRefill, status: runsTwoEach, now: evictT0.Add(time.Minute),
		want:      sched("a", 2, "b", 3, "c", 2),
		evictions: []federation.Eviction{{Cluster: "c", Reason: federation.EvictionTaint, Replicas: 1, Keep: 2, PurgeMode: federation.PurgeGraciously, Since: cEvicted.Since, Deadline: cEvicted.Deadline}},
		reason:    scheduler.ReasonScheduled,
	}, {
		name:     "purge mode Never, a cluster the plan keeps at 0: the eviction ends, nothing to release",
		failover: `{purgeMode: Never}`,
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {weight: 1}, c: {maxReplicas: 0}}}`,
		clusters: []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "")},
		prev: &federation.Schedule{Clusters: sched("a", 3, "b", 3, "c", 2), LastRebalanceTime: steady.LastRebalanceTime,
			Evictions: []federation.Eviction{evictionOf("c", federation.EvictionPlacement, 0, 2, federation.PurgeNever, evictT0)}},
		status: gainersUp, now: evictT0.Add(2 * time.Minute),
		want: sched("a", 3, "b", 3, "c", 0), reason: scheduler.ReasonScheduled,
	}, {
		name: "a drain as an evicted cluster comes back: nothing gains, yet the drained copy waits for c",
		// b was drained: c took its replica and has it not yet available, b keeps its copy.
		// Now b is back and a drained: b's target is what it keeps, so no cluster gains, but
		// deleting a's copy at once would leave 1 of 2 available while c comes up.
		rsp:      `{targetKind: FederatedDeployment, totalReplicas: 2, clusters: {"*": {weight: 1}}}`,
		clusters: []federation.Cluster{evictCluster("a", "", drain), evictCluster("b", ""), evictCluster("c", "")},
		prev: &federation.Schedule{Clusters: sched("a", 1, "c", 1, "b", 1), LastRebalanceTime: &metav1.Time{Time: evictT0},
			Evictions: []federation.Eviction{evictionOf("b", federation.EvictionTaint, 0, 1, federation.PurgeGraciously, evictT0.Add(-time.Minute))}},
		status:    []federation.MemberStatus{member("a", 1, 1, after), member("b", 1, 1, after), member("c", 1, 0, after)},
		now:       evictT0.Add(2 * time.Minute),
		want:      sched("b", 1, "c", 1, "a", 1),
		evictions: []federation.Eviction{evictionOf("a", federation.EvictionTaint, 0, 1, federation.PurgeGraciously, evictT0.Add(2*time.Minute))},
		reason:    scheduler.ReasonScheduled, message: []string{"evicting a (TaintNoExecute): keeps 1 replica(s) (to 0) until b, c report"},
	}, {
		name: "a placement change while the keepers are still coming up: the leaving copy waits",
		// b leaves the placement; a and c already have their targets in spec (no cluster
		// gains), but c's are not available yet: removing b's 2 at once would leave 2 of 4.
		rsp:       `{targetKind: FederatedDeployment, totalReplicas: 4, clusters: {"*": {weight: 1}, b: {maxReplicas: 0}}}`,
		clusters:  []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "")},
		prev:      &federation.Schedule{Clusters: sched("a", 2, "b", 2, "c", 2), LastRebalanceTime: &metav1.Time{Time: evictT0.Add(-time.Hour)}},
		status:    []federation.MemberStatus{member("a", 2, 2, after), member("b", 2, 2, after), member("c", 2, 0, after)},
		now:       evictT0,
		want:      sched("a", 2, "b", 2, "c", 2),
		evictions: []federation.Eviction{evictionOf("b", federation.EvictionPlacement, 0, 2, federation.PurgeGraciously, evictT0)},
		reason:    scheduler.ReasonScheduled,
	}, {
		name:     "an override naming a gainer sets what it runs: the eviction ends once b reports that count",
		clusters: drained, prev: evicting, overrides: `[{clusterName: b, replicas: 1}]`,
		status: []federation.MemberStatus{member("a", 3, 3, after), member("b", 1, 1, after), member("c", 2, 2, after)},
		now:    evictT0.Add(2 * time.Minute),
		want:   sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "so does an override that selects it by its labels",
		clusters: []federation.Cluster{evictCluster("a", ""), labelled(evictCluster("b", ""), "size", "small"), evictCluster("c", "", drain)},
		prev:     evicting, overrides: `[{clusterSelector: {matchLabels: {size: small}}, replicas: 1}]`,
		status: []federation.MemberStatus{member("a", 3, 3, after), member("b", 1, 1, after), member("c", 2, 2, after)},
		now:    evictT0.Add(2 * time.Minute),
		want:   sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "a selector override that does not select the gainer leaves its share: the eviction waits for b's 3",
		clusters: []federation.Cluster{evictCluster("a", ""), labelled(evictCluster("b", ""), "size", "large"), evictCluster("c", "", drain)},
		prev:     evicting, overrides: `[{clusterSelector: {matchLabels: {size: small}}, replicas: 1}]`,
		status: []federation.MemberStatus{member("a", 3, 3, after), member("b", 1, 1, after), member("c", 2, 2, after)},
		now:    evictT0.Add(2 * time.Minute),
		want:   sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
		message: []string{"until b report"},
	}, {
		name:     "with retainReplicas a gainer runs its autoscaler's count: the eviction ends once b reports its copy Ready",
		clusters: drained, prev: evicting, retain: true,
		status: []federation.MemberStatus{member("a", 3, 3, after), ready(member("b", 2, 2, after)), member("c", 2, 2, after)},
		now:    evictT0.Add(2 * time.Minute),
		want:   sched("a", 3, "b", 3), reason: scheduler.ReasonScheduled,
	}, {
		name:     "with retainReplicas a gainer not Ready at its own count is no replacement yet",
		clusters: drained, prev: evicting, retain: true,
		status: []federation.MemberStatus{member("a", 3, 3, after), member("b", 3, 2, after), member("c", 2, 2, after)},
		now:    evictT0.Add(2 * time.Minute),
		want:   sched("a", 3, "b", 3, "c", 2), evictions: []federation.Eviction{cEvicted}, reason: scheduler.ReasonScheduled,
		message: []string{"until b report"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fed := &federation.FederatedObject{}
			fed.Name, fed.Namespace = "web", "default"
			fed.Spec.Template.Object = map[string]any{"spec": map[string]any{"replicas": int64(6), "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "app", "image": "app:1", "resources": map[string]any{"requests": map[string]any{"cpu": "500m"}}}}}}}}
			fed.Spec.Placement.ClusterSelector = &metav1.LabelSelector{}
			if tc.failover != "" {
				fed.Spec.Placement.Failover = &federation.Failover{}
				if err := yaml.UnmarshalStrict([]byte(tc.failover), fed.Spec.Placement.Failover); err != nil {
					t.Fatal(err)
				}
			}
			if tc.overrides != "" {
				if err := yaml.UnmarshalStrict([]byte(tc.overrides), &fed.Spec.Overrides); err != nil {
					t.Fatal(err)
				}
			}
			fed.Spec.RetainReplicas = tc.retain
			fed.Status.Clusters = tc.status
			spec := tc.rsp
			if spec == "" {
				spec = `{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {weight: 1}}}`
			}
			rsp := &federation.ReplicaSchedulingPreference{}
			if err := yaml.UnmarshalStrict([]byte("{metadata: {name: web, namespace: default}, spec: "+spec+"}"), rsp); err != nil {
				t.Fatal(err)
			}
			d, err := scheduler.Decide(scheduler.Input{Type: federation.DeploymentType, Object: fed, Preference: rsp, Clusters: tc.clusters, Previous: tc.prev, Now: tc.now})
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tc.want, d.Schedule.Clusters); diff != "" {
				t.Errorf("schedule (-want +got):\n%s\n%s", diff, d.Message)
			}
			if diff := cmp.Diff(tc.evictions, d.Schedule.Evictions, cmpopts.IgnoreFields(federation.Eviction{}, "Message"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("evictions (-want +got):\n%s\n%s", diff, d.Message)
			}
			if d.Condition.Reason != tc.reason {
				t.Errorf("Scheduled reason = %s, want %s: %s", d.Condition.Reason, tc.reason, d.Message)
			}
			for _, m := range tc.message {
				if !strings.Contains(d.Message, m) {
					t.Errorf("message does not say %q:\n%s", m, d.Message)
				}
			}
			if tc.requeueMax > 0 && (d.RequeueAfter <= 0 || d.RequeueAfter > tc.requeueMax) {
				t.Errorf("RequeueAfter = %v, want in (0, %v]", d.RequeueAfter, tc.requeueMax)
			}
		})
	}
}

// decodeYAML decodes doc into a new T, failing the test on error.
func decodeYAML[T any](t *testing.T, doc string) *T {
	t.Helper()
	out := new(T)
	if err := yaml.Unmarshal([]byte(doc), out); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return out
}

// TestDecideFailoverStages: Decide leaves a not-ready cluster's replicas where they are while
// its taint is NoSchedule (no new placements), takes them away at NoExecute (gracefully: the
// copy stays until the others report theirs available), and with a tolerationSeconds
// toleration keeps them until it ends and asks to look again then.
func TestDecideFailoverStages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	readyC := `{metadata: {name: a}, status: {conditions: [{type: Ready, status: "True"}]}}`
	notReady := func(effect string) string {
		return `{metadata: {name: b}, spec: {taints: [{key: federation.k8s.io/not-ready, effect: ` + effect + `, timeAdded: "2026-01-01T12:00:00Z"}]},
  status: {conditions: [{type: Ready, status: "False", reason: Offline, lastTransitionTime: "2026-01-01T12:00:00Z", message: ""}]}}`
	}
	obj := func(tolerations string) string {
		return `{metadata: {name: web, namespace: shop, generation: 1}, spec: {template: {spec: {replicas: 3}}, placement: {clusterSelector: {}, tolerations: ` + tolerations + `}}}`
	}
	both := `{clusters: [{name: a, replicas: 3}, {name: b, replicas: 3}]}`
	for _, tc := range []struct {
		name        string
		object      string
		b           string
		previous    string
		now         time.Time
		want        []string
		wantNR      []string
		wantRequeue time.Duration
	}{
		{name: "NoSchedule keeps what runs", object: obj("[]"), b: notReady("NoSchedule"), previous: both, now: t0.Add(time.Minute),
			want: []string{"a", "b"}},
		{name: "NoSchedule places nothing new", object: obj("[]"), b: notReady("NoSchedule"), now: t0.Add(time.Minute),
			want: []string{"a"}, wantNR: []string{"b"}},
		// Gracefully: b keeps its copy until a reports its own available (never into nothing).
		{name: "NoExecute evicts", object: obj("[]"), b: notReady("NoExecute"), previous: both, now: t0.Add(10 * time.Minute),
			want: []string{"a", "b"}, wantNR: []string{"b"}, wantRequeue: 10 * time.Minute},
		{name: "tolerationSeconds keeps until it ends", object: obj(`[{key: federation.k8s.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]`),
			b: notReady("NoExecute"), previous: both, now: t0.Add(100 * time.Second),
			want: []string{"a", "b"}, wantRequeue: 200 * time.Second},
		{name: "tolerationSeconds ended", object: obj(`[{key: federation.k8s.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]`),
			b: notReady("NoExecute"), previous: both, now: t0.Add(300 * time.Second),
			want: []string{"a", "b"}, wantNR: []string{"b"}, wantRequeue: 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := scheduler.Input{
				Type:     federation.DeploymentType,
				Object:   decodeYAML[federation.FederatedObject](t, tc.object),
				Clusters: []federation.Cluster{*decodeYAML[federation.Cluster](t, readyC), *decodeYAML[federation.Cluster](t, tc.b)},
				Now:      tc.now,
			}
			if tc.previous != "" {
				in.Previous = decodeYAML[federation.Schedule](t, tc.previous)
			}
			d, err := scheduler.Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range d.Schedule.Clusters {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scheduled clusters (-want +got):\n%s\n%s", diff, d.Message)
			}
			if diff := cmp.Diff(tc.wantNR, d.Schedule.NotReady); diff != "" {
				t.Errorf("schedule.notReady (-want +got):\n%s", diff)
			}
			if d.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", d.RequeueAfter, tc.wantRequeue)
			}
		})
	}
}

// TestEvictionWaitsForALosingClusterThatIsNotAvailable: c is drained and b is cut to one
// replica at once. b's own copy is restarting (nothing available). c's copy must wait: the
// clusters the object stays in, b included, do not have what they keep available, and
// removing c would drop what runs. (The big soak, seed 2: a drained copy was deleted while
// a cluster losing replicas itself had none available.)
func TestEvictionWaitsForALosingClusterThatIsNotAvailable(t *testing.T) {
	fed := &federation.FederatedObject{}
	fed.Name, fed.Namespace = "web", "default"
	fed.Spec.Template.Object = map[string]any{"spec": map[string]any{"replicas": int64(4)}}
	fed.Spec.Placement.ClusterSelector = &metav1.LabelSelector{}
	rsp := decodeYAML[federation.ReplicaSchedulingPreference](t, `
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 4, clusters: {"*": {weight: 1}, b: {maxReplicas: 1}}}`)
	clusters := []federation.Cluster{evictCluster("a", ""), evictCluster("b", ""), evictCluster("c", "", drain)}
	before := evictT0.Add(-time.Minute)
	fed.Status.Clusters = []federation.MemberStatus{member("a", 2, 2, before), member("b", 2, 2, before), member("c", 2, 2, before)}
	steady := &federation.Schedule{Clusters: sched("a", 2, "b", 2, "c", 2), LastRebalanceTime: &metav1.Time{Time: evictT0.Add(-time.Hour)}}
	first, err := scheduler.Decide(scheduler.Input{Type: federation.DeploymentType, Object: fed, Preference: rsp, Clusters: clusters, Previous: steady, Now: evictT0})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "c"}, evicted(first.Schedule)); diff != "" {
		t.Fatalf("evicted (-want +got):\n%s\n%s", diff, first.Message)
	}

	// a has its 3, fresh; b is restarting: 2 replicas, none available; c still runs its 2.
	after := evictT0.Add(time.Minute)
	fed.Status.Clusters = []federation.MemberStatus{member("a", 3, 3, after), member("b", 2, 0, after), member("c", 2, 2, after)}
	second, err := scheduler.Decide(scheduler.Input{Type: federation.DeploymentType, Object: fed, Preference: rsp, Clusters: clusters, Previous: first.Schedule, Now: evictT0.Add(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c"}, evicted(second.Schedule)); diff != "" {
		t.Errorf("evicted (-want +got): c must wait for b\n%s\n%s", diff, second.Message)
	}
	if !strings.Contains(second.Message, "until b report") {
		t.Errorf("the message does not say c waits for b:\n%s", second.Message)
	}
}

// evicted lists the clusters of s's evictions that still keep replicas (not released).
func evicted(s *federation.Schedule) []string {
	var out []string
	for _, e := range s.Evictions {
		if !e.Release {
			out = append(out, e.Cluster)
		}
	}
	return out
}

// TestNotReadyClusterTakesNoNewReplicas: a cluster the monitor has just lost (Ready False,
// its not-ready taint NoSchedule) keeps what runs there and takes no new replicas, even
// before sync has marked its status entry: sync cannot write there. Here c's replica has
// nowhere to run (sync cannot reach c, which has no copy), and the user scales up: both go to
// a, none to b. (The soak, seed 1, at the start of the control plane's outage: a cluster
// already counted lost gained the replica of a cluster sync could not reach.)
func TestNotReadyClusterTakesNoNewReplicas(t *testing.T) {
	fed := &federation.FederatedObject{}
	fed.Name, fed.Namespace, fed.Generation = "web", "default", 2
	fed.Spec.Template.Object = map[string]any{"spec": map[string]any{"replicas": int64(1)}}
	fed.Spec.Placement.ClusterSelector = &metav1.LabelSelector{}
	rsp := decodeYAML[federation.ReplicaSchedulingPreference](t, `
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 8, clusters: {"*": {weight: 1}}}`)
	lost := metav1.NewTime(evictT0.Add(-time.Minute))
	b := evictCluster("b", "", corev1.Taint{Key: federation.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &lost})
	b.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionFalse, Reason: "Unreachable", LastTransitionTime: lost}}
	clusters := []federation.Cluster{evictCluster("a", ""), b, evictCluster("c", "")}
	before := evictT0.Add(-2 * time.Minute)
	staleB := member("b", 2, 2, before)
	staleB.Stale = true // the collector cannot read b any more; sync has not tried since
	fed.Status.Clusters = []federation.MemberStatus{member("a", 2, 2, before), staleB,
		{Name: "c", Propagation: federation.PropagationClusterUnreachable, Message: "cannot reach c"}}
	steady := &federation.Schedule{Clusters: sched("a", 2, "b", 2, "c", 2), LastRebalanceTime: &metav1.Time{Time: evictT0.Add(-time.Hour)}}
	d, err := scheduler.Decide(scheduler.Input{Type: federation.DeploymentType, Object: fed, Preference: rsp, Clusters: clusters, Previous: steady, Now: evictT0})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range d.Schedule.Clusters {
		got[c.Name] = c.Replicas
	}
	if diff := cmp.Diff(map[string]int64{"a": 6, "b": 2}, got, cmpopts.IgnoreMapEntries(func(_ string, v int64) bool { return v == 0 })); diff != "" {
		t.Errorf("schedule (-want +got): b is not Ready, sync cannot write there\n%s\n%s", diff, d.Message)
	}
}
