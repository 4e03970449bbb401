package plan_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// rolloutCase builds a DecideRollout input: clusters a, b, c placed and Ready, stages [a]
// (minReadySeconds 60, deadline 600s), [b], and the final stage [c]; revision 5 (image v5)
// replacing revision 4 (image v4, complete, stable), with status.rollout and entries as
// each case sets them.
type rolloutCase struct {
	in plan.RolloutInput
}

const (
	name4 = "app-frontend-rev4"
	name5 = "app-frontend-rev5"
)

func specWith(img string) federation.FederatedSpec {
	return federation.FederatedSpec{Template: federation.RawObject{Object: map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "web", "image": img}}}}}}}}
}

func newRolloutCase() *rolloutCase {
	obj := &federation.FederatedObject{Spec: specWith("v5")}
	obj.Name, obj.Namespace = key.Name, key.Namespace
	obj.Spec.Rollout = &federation.Rollout{Stages: []federation.RolloutStage{
		{Name: "canary", Clusters: []string{"a"}, MinReadySeconds: 60},
		{Name: "second", Clusters: []string{"b"}},
	}}
	federation.DefaultFederatedObject(obj)
	obj.Status.Rollout = &federation.RolloutStatus{Revision: 4, StableRevision: 4, StableRevisionName: name4, Phase: federation.RolloutComplete}
	var clusters []federation.Cluster
	for _, n := range []string{"a", "b", "c"} {
		c := federation.Cluster{}
		c.Name = n
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
		clusters = append(clusters, c)
		obj.Status.Clusters = append(obj.Status.Clusters, entry(n, 4, 4, true))
	}
	return &rolloutCase{in: plan.RolloutInput{
		Object: obj, Revision: 5, Placed: []string{"a", "b", "c"}, Clusters: clusters, Now: now,
		History: []plan.Revision{{Number: 4, Name: name4, Spec: specWith("v4")}, {Number: 5, Name: name5, Spec: specWith("v5")}},
	}}
}

// entry is a fresh status.clusters[] entry: sync rendered revision rev, the Collector saw
// observed, ready or not.
func entry(name string, rev, observed int64, ready bool) federation.MemberStatus {
	lo := metav1.NewTime(now.Add(-time.Minute))
	return federation.MemberStatus{Name: name, Revision: rev, ObservedRevision: observed, Ready: &ready, LastObserved: &lo}
}

func (c *rolloutCase) set(e federation.MemberStatus) *rolloutCase {
	for i := range c.in.Object.Status.Clusters {
		if c.in.Object.Status.Clusters[i].Name == e.Name {
			c.in.Object.Status.Clusters[i] = e
		}
	}
	return c
}

func (c *rolloutCase) rollout(st federation.RolloutStatus) *rolloutCase {
	c.in.Object.Status.Rollout = &st
	return c
}

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }

// inStage is status.rollout for revision 5 in stage k, started at start.
func inStage(k int32, start time.Duration, readySince *metav1.Time) federation.RolloutStatus {
	names := []string{"", "canary", "second", plan.FinalStageName}
	name := "gone"
	if int(k) < len(names) {
		name = names[k]
	}
	return federation.RolloutStatus{Revision: 5, StableRevision: 4, StableRevisionName: name4, Phase: federation.RolloutProgressing,
		Stage: k, Stages: 3, StageName: name, StageStartTime: at(start), ReadySince: readySince, Reason: plan.RolloutReasonWaitingForReady}
}

// rolloutOutcome is what the table pins down of a decision.
type rolloutOutcome struct {
	Phase, Reason    string
	Stage            int32
	Assign           map[string]int64
	Failed, Rollback bool
	FailedClusters   []string
	Stable           int64
	StageStart       time.Duration
	ReadySince       time.Duration
	NotReadySince    time.Duration
	RequeueAfter     time.Duration
}

func outcomeOf(d plan.RolloutDecision) rolloutOutcome {
	o := rolloutOutcome{Phase: d.Status.Phase, Reason: d.Status.Reason, Stage: d.Status.Stage, Assign: d.Assign,
		Failed: d.Failed, Rollback: d.Rollback, FailedClusters: d.FailedClusters, Stable: d.Status.StableRevision, RequeueAfter: d.RequeueAfter}
	if t := d.Status.StageStartTime; t != nil {
		o.StageStart = t.Sub(now)
	}
	if t := d.Status.ReadySince; t != nil {
		o.ReadySince = t.Sub(now)
	}
	if t := d.Status.NotReadySince; t != nil {
		o.NotReadySince = t.Sub(now)
	}
	return o
}

func TestDecideRollout(t *testing.T) {
	held := map[string]int64{"a": 5, "b": 4, "c": 4}
	tests := []struct {
		name string
		in   *rolloutCase
		want rolloutOutcome
	}{
		{name: "a new revision starts the first stage", in: newRolloutCase(),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: held, Stable: 4, RequeueAfter: 600 * time.Second}},
		{name: "the stage waits for its clusters", in: newRolloutCase().rollout(inStage(1, -time.Minute, nil)).set(entry("a", 5, 4, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: held, Stable: 4, StageStart: -time.Minute, RequeueAfter: 540 * time.Second}},
		{name: "ready, it waits out minReadySeconds", in: newRolloutCase().rollout(inStage(1, -time.Minute, nil)).set(entry("a", 5, 5, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "MinReadySeconds", Stage: 1, Assign: held, Stable: 4, StageStart: -time.Minute, RequeueAfter: time.Minute}},
		{name: "after minReadySeconds the next stage starts", in: newRolloutCase().rollout(inStage(1, -2*time.Minute, at(-time.Minute))).set(entry("a", 5, 5, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 2, Assign: map[string]int64{"a": 5, "b": 5, "c": 4}, Stable: 4, RequeueAfter: 600 * time.Second}},
		{name: "paused, the gate holds", in: paused(newRolloutCase().rollout(inStage(1, -2*time.Minute, at(-time.Minute))).set(entry("a", 5, 5, true))),
			want: rolloutOutcome{Phase: "Paused", Reason: "Paused", Stage: 1, Assign: held, Stable: 4, StageStart: -2 * time.Minute, ReadySince: -time.Minute}},
		{name: "paused before the first stage", in: paused(newRolloutCase()),
			want: rolloutOutcome{Phase: "Paused", Reason: "Paused", Assign: map[string]int64{"a": 4, "b": 4, "c": 4}, Stable: 4}},
		{name: "the last stage ready: complete", in: newRolloutCase().rollout(inStage(3, -time.Minute, nil)).
			set(entry("a", 5, 5, true)).set(entry("b", 5, 5, true)).set(entry("c", 5, 5, true)),
			want: rolloutOutcome{Phase: "Complete", Reason: "Complete", Stage: 3, Assign: map[string]int64{"a": 5, "b": 5, "c": 5}, Stable: 5}},
		{name: "past the deadline: failed, rolled back", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(entry("a", 5, 5, false))),
			want: rolloutOutcome{Phase: "RolledBack", Reason: "ProgressDeadlineExceeded", Stage: 1, Assign: held, Stable: 4, StageStart: -11 * time.Minute,
				Failed: true, Rollback: true, FailedClusters: []string{"a"}}},
		{name: "past the deadline without autoRollback: stopped", in: newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(entry("a", 5, 5, false)),
			want: rolloutOutcome{Phase: "Failed", Reason: "ProgressDeadlineExceeded", Stage: 1, Assign: held, Stable: 4, StageStart: -11 * time.Minute,
				Failed: true, FailedClusters: []string{"a"}}},
		{name: "a failed revision stays stopped, even ready", in: newRolloutCase().rollout(failed(inStage(1, -20*time.Minute, nil))).set(entry("a", 5, 5, true)),
			want: rolloutOutcome{Phase: "Failed", Reason: "ProgressDeadlineExceeded", Stage: 1, Assign: held, Stable: 4, StageStart: -20 * time.Minute}},
		{name: "stale data past the deadline: no failure", in: newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(stale(entry("a", 5, 5, false))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "StaleData", Stage: 1, Assign: held, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "a cluster that is not Ready has no fresh data", in: notReadyCluster(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(entry("a", 5, 5, false)), "a"),
			want: rolloutOutcome{Phase: "Progressing", Reason: "StaleData", Stage: 1, Assign: held, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "stale data during minReadySeconds resets it", in: newRolloutCase().rollout(inStage(1, -2*time.Minute, at(-30*time.Second))).set(stale(entry("a", 5, 5, true))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "StaleData", Stage: 1, Assign: held, Stable: 4, StageStart: -2 * time.Minute}},
		{name: "no quorum: nothing moves", in: newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(entry("a", 5, 5, false)).set(stale(entry("b", 4, 4, true))).set(stale(entry("c", 4, 4, true))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NoQuorum", Stage: 1, Assign: held, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "a ready stage's cluster turns not ready: the rollout waits for it", in: rollback(newRolloutCase().rollout(inStage(2, -time.Minute, nil)).set(entry("a", 5, 5, false)).set(entry("b", 5, 5, true))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotReadyAgain", Stage: 2, Assign: map[string]int64{"a": 5, "b": 5, "c": 4}, Stable: 4, StageStart: -time.Minute,
				RequeueAfter: 600 * time.Second}},
		{name: "not ready again for the stage's deadline: failed, rolled back", in: rollback(newRolloutCase().rollout(notReadySince(inStage(2, -time.Hour, nil), -10*time.Minute)).set(entry("a", 5, 5, false)).set(entry("b", 5, 5, true))),
			want: rolloutOutcome{Phase: "RolledBack", Reason: "ClusterNotReady", Stage: 2, Assign: map[string]int64{"a": 5, "b": 5, "c": 4}, Stable: 4, StageStart: -time.Hour,
				NotReadySince: -10 * time.Minute, Failed: true, Rollback: true, FailedClusters: []string{"a"}}},
		{name: "turning not ready during minReadySeconds waits too", in: newRolloutCase().rollout(inStage(1, -time.Minute, at(-30*time.Second))).set(entry("a", 5, 5, false)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotReadyAgain", Stage: 1, Assign: held, Stable: 4, StageStart: -time.Minute, ReadySince: -30 * time.Second,
				RequeueAfter: 600 * time.Second}},
		{name: "ready again: minReadySeconds count again", in: newRolloutCase().rollout(notReadySince(inStage(1, -2*time.Minute, at(-50*time.Second)), -20*time.Second)).set(entry("a", 5, 5, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "MinReadySeconds", Stage: 1, Assign: held, Stable: 4, StageStart: -2 * time.Minute, RequeueAfter: time.Minute}},
		{name: "a newer revision starts over; the rest return to the stable one", in: superseded(newRolloutCase().rollout(inStage(2, -time.Minute, nil)).set(entry("a", 5, 5, true)).set(entry("b", 5, 5, false))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: map[string]int64{"a": 6, "b": 4, "c": 4}, Stable: 4, RequeueAfter: 600 * time.Second}},
		{name: "a cluster that runs the revision keeps it when stages shift", in: newRolloutCase().rollout(inStage(1, -time.Minute, nil)).set(entry("c", 5, 5, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 5}, Stable: 4, StageStart: -time.Minute, RequeueAfter: 540 * time.Second}},
		{name: "the restored revision after a rollback: everywhere at once", in: restored(newRolloutCase().rollout(rolledBack(inStage(1, -20*time.Minute, nil)))),
			want: rolloutOutcome{Phase: "Complete", Reason: "Complete", Stage: 3, Assign: map[string]int64{"a": 6, "b": 6, "c": 6}, Stable: 6}},
		{name: "only placement changed: everywhere at once", in: placementOnly(newRolloutCase()),
			want: rolloutOutcome{Phase: "Complete", Reason: "Complete", Stage: 3, Assign: map[string]int64{"a": 5, "b": 5, "c": 5}, Stable: 5}},
		{name: "a first revision: everywhere at once", in: firstRevision(newRolloutCase()),
			want: rolloutOutcome{Phase: "Complete", Reason: "Complete", Stage: 3, Assign: map[string]int64{"a": 5, "b": 5, "c": 5}, Stable: 5}},
		{name: "the first rollout rolls from syncedRevision", in: fromSynced(newRolloutCase()),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: held, Stable: 4, RequeueAfter: 600 * time.Second}},
		{name: "the stable snapshot is gone: everywhere at once", in: withoutHistory(newRolloutCase()),
			want: rolloutOutcome{Phase: "Complete", Reason: "Complete", Stage: 3, Assign: map[string]int64{"a": 5, "b": 5, "c": 5}, Stable: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := plan.DecideRollout(tc.in.in)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, outcomeOf(d)); diff != "" {
				t.Errorf("DecideRollout() (-want +got):\n%s\nmessage: %s", diff, d.Status.Message)
			}
			// Deciding again on the status it wrote takes no further step.
			again := tc.in.in
			obj := *again.Object
			obj.Status.Rollout = d.Status
			again.Object = &obj
			d2, err := plan.DecideRollout(again)
			require.NoError(t, err)
			if d.Failed || (d.Status.Phase == federation.RolloutProgressing && d.Status.Reason == plan.RolloutReasonMinReady) {
				return // a failure is not repeated; a started minReadySeconds is another state
			}
			if diff := cmp.Diff(d.Status, d2.Status); diff != "" {
				t.Errorf("DecideRollout() on its own status moved (-first +second):\n%s", diff)
			}
		})
	}
}

func paused(c *rolloutCase) *rolloutCase {
	c.in.Object.Annotations = map[string]string{federation.RolloutPausedAnnotation: "true"}
	return c
}

func rollback(c *rolloutCase) *rolloutCase {
	c.in.Object.Spec.Rollout.AutoRollback = true
	return c
}

func stale(e federation.MemberStatus) federation.MemberStatus {
	e.Stale = true
	return e
}

func failed(st federation.RolloutStatus) federation.RolloutStatus {
	st.Phase, st.Reason, st.FailedRevision = federation.RolloutFailed, plan.RolloutReasonProgressDeadlineExceeded, 5
	return st
}

func rolledBack(st federation.RolloutStatus) federation.RolloutStatus {
	st.Phase, st.Reason, st.FailedRevision = federation.RolloutRolledBack, plan.RolloutReasonProgressDeadlineExceeded, 5
	return st
}

func notReadySince(st federation.RolloutStatus, d time.Duration) federation.RolloutStatus {
	st.NotReadySince, st.Reason = at(d), plan.RolloutReasonNotReadyAgain
	return st
}

func notReadyCluster(c *rolloutCase, name string) *rolloutCase {
	for i := range c.in.Clusters {
		if c.in.Clusters[i].Name == name {
			c.in.Clusters[i].Status.Conditions[0].Status = metav1.ConditionFalse
		}
	}
	return c
}

// superseded: revision 6 (image v6) replaces revision 5 while 5 is in its second stage.
func superseded(c *rolloutCase) *rolloutCase {
	c.in.Revision = 6
	c.in.Object.Spec.Template = specWith("v6").Template
	c.in.History = append(c.in.History, plan.Revision{Number: 6, Name: "app-frontend-rev6", Spec: specWith("v6")})
	return c
}

// restored: after revision 5 was rolled back, the spec is revision 4's again, now revision
// 6 (the same ControllerRevision, renumbered).
func restored(c *rolloutCase) *rolloutCase {
	c.in.Revision = 6
	c.in.Object.Spec.Template = specWith("v4").Template
	c.in.History = []plan.Revision{{Number: 5, Name: name5, Spec: specWith("v5")}, {Number: 6, Name: name4, Spec: specWith("v4")}}
	return c
}

func placementOnly(c *rolloutCase) *rolloutCase {
	c.in.History[0].Spec = specWith("v5")
	c.in.History[0].Spec.Placement.Clusters = []federation.ClusterReference{{Name: "a"}}
	return c
}

func firstRevision(c *rolloutCase) *rolloutCase {
	c.in.Object.Status = federation.FederatedStatus{}
	c.in.History = c.in.History[1:]
	return c
}

func fromSynced(c *rolloutCase) *rolloutCase {
	c.in.Object.Status.Rollout = nil
	c.in.Object.Status.SyncedRevision = 4
	return c
}

func withoutHistory(c *rolloutCase) *rolloutCase {
	c.in.History = c.in.History[1:]
	return c
}

func TestRolloutStages(t *testing.T) {
	pct := func(n int32) *int32 { return &n }
	clusters := []federation.Cluster{}
	for n, region := range map[string]string{"a": "us", "b": "eu", "c": "eu", "d": "ap", "e": "ap", "f": "us"} {
		c := federation.Cluster{}
		c.Name, c.Labels = n, map[string]string{"region": region}
		clusters = append(clusters, c)
	}
	placed := []string{"f", "e", "d", "c", "b", "a"}
	type stage struct {
		Name     string
		Clusters []string
	}
	tests := []struct {
		name   string
		stages []federation.RolloutStage
		placed []string
		want   []stage
	}{
		{name: "no stages: everything in the final one", want: []stage{{"remaining", placed[:0:0]}}},
		{name: "names, a selector, a percentage and the rest", stages: []federation.RolloutStage{
			{Name: "canary", Clusters: []string{"d", "zz"}},
			{Name: "eu", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}},
			{Name: "most", Percentage: pct(80)},
		}, want: []stage{{"canary", []string{"d"}}, {"eu", []string{"b", "c"}}, {"most", []string{"a", "e"}}, {"remaining", []string{"f"}}}},
		{name: "percentages count earlier stages", stages: []federation.RolloutStage{
			{Name: "p1", Percentage: pct(10)}, {Name: "p2", Percentage: pct(50)}, {Name: "p3", Percentage: pct(100)},
		}, want: []stage{{"p1", []string{"a"}}, {"p2", []string{"b", "c"}}, {"p3", []string{"d", "e", "f"}}}},
		{name: "a stage left empty", stages: []federation.RolloutStage{
			{Name: "x", Clusters: []string{"a"}}, {Name: "y", Clusters: []string{"gone"}},
		}, placed: []string{"a", "b"}, want: []stage{{"x", []string{"a"}}, {"y", nil}, {"remaining", []string{"b"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := placed
			if tc.placed != nil {
				p = tc.placed
			}
			if tc.want[0].Name == "remaining" {
				tc.want[0].Clusters = []string{"a", "b", "c", "d", "e", "f"}
			}
			got, err := plan.RolloutStages(&federation.Rollout{Stages: tc.stages}, p, clusters)
			require.NoError(t, err)
			var names []stage
			for _, s := range got {
				names = append(names, stage{s.Name, s.Clusters})
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("RolloutStages() (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkDecideRollout decides a rollout in progress over 1,000 placed clusters in three
// stages (10%, 50%, 100%): the cost a pass adds while a rollout is under way.
func BenchmarkDecideRollout(b *testing.B) {
	c := newRolloutCase()
	pct := func(n int32) *int32 { return &n }
	c.in.Object.Spec.Rollout.Stages = []federation.RolloutStage{{Name: "p10", Percentage: pct(10)}, {Name: "p50", Percentage: pct(50)}, {Name: "all", Percentage: pct(100)}}
	federation.DefaultFederatedObject(c.in.Object)
	c.in.Placed, c.in.Clusters, c.in.Object.Status.Clusters = nil, nil, nil
	for i := range 1000 {
		n := fmt.Sprintf("cluster-%04d", i)
		cl := federation.Cluster{}
		cl.Name = n
		cl.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
		c.in.Placed, c.in.Clusters = append(c.in.Placed, n), append(c.in.Clusters, cl)
		rev := int64(4)
		if i < 100 {
			rev = 5
		}
		c.in.Object.Status.Clusters = append(c.in.Object.Status.Clusters, entry(n, rev, rev, true))
	}
	st := inStage(2, -time.Minute, nil)
	st.StageName = "p50"
	c.rollout(st)
	for b.Loop() {
		if _, err := plan.DecideRollout(c.in); err != nil {
			b.Fatal(err)
		}
	}
}

// pausedSince marks status.rollout's clocks as standing still since d (a wait for stale data).
func pausedSince(st federation.RolloutStatus, d time.Duration) federation.RolloutStatus {
	st.DeadlinePausedSince, st.Reason = at(d), plan.RolloutReasonStaleData
	return st
}

// replicasOnly: revision 6 is revision 5 with another replica count in the template and
// another placement.
func replicasOnly(c *rolloutCase) *rolloutCase {
	c.in.Revision = 6
	spec := specWith("v5")
	spec.Template.Object["spec"].(map[string]any)["replicas"] = int64(7)
	spec.Placement.MaxClusters = ptr(int32(10))
	c.in.Object.Spec.Template, c.in.Object.Spec.Placement = spec.Template, spec.Placement
	c.in.History = append(c.in.History, plan.Revision{Number: 6, Name: "app-frontend-rev6", Spec: spec})
	c.in.Type = federation.DeploymentType
	return c
}

func ptr[T any](v T) *T { return &v }

func withPropagation(e federation.MemberStatus, reason string) federation.MemberStatus {
	e.Propagation = reason
	return e
}

// TestDecideRolloutClocks: what runs is gated, where and how many are not (a new revision
// number that changes only those goes on with the rollout); a cluster sync cannot
// propagate to holds the stage without failing it; stale data pauses the clocks and never
// resets them.
func TestDecideRolloutClocks(t *testing.T) {
	tests := []struct {
		name string
		in   *rolloutCase
		want rolloutOutcome
		// paused is DeadlinePausedSince, relative to now; 0 for none.
		paused  time.Duration
		noPause bool
	}{
		{name: "replicas and placement only: the rollout goes on at its stage", in: replicasOnly(newRolloutCase().rollout(inStage(2, -time.Minute, nil)).set(entry("a", 5, 5, true)).set(entry("b", 5, 5, false))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 2, Assign: map[string]int64{"a": 6, "b": 6, "c": 4}, Stable: 4, StageStart: -time.Minute, RequeueAfter: 540 * time.Second}, noPause: true},
		{name: "replicas only after completion: nothing to stage", in: replicasOnly(newRolloutCase().rollout(federation.RolloutStatus{Revision: 5, StableRevision: 5, StableRevisionName: name5, Phase: federation.RolloutComplete}).
			set(entry("a", 5, 5, true)).set(entry("b", 5, 5, true)).set(entry("c", 5, 5, true))),
			want: rolloutOutcome{Phase: "Complete", Reason: "Complete", Stage: 3, Assign: map[string]int64{"a": 6, "b": 6, "c": 6}, Stable: 6}, noPause: true},
		{name: "a cluster sync cannot propagate to holds the stage, never fails it", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(withPropagation(entry("a", 4, 4, true), plan.ReasonAlreadyExists))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotPropagated", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "a refused write holds the stage too", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(withPropagation(entry("a", 4, 4, false), plan.ReasonUpdateFailed))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotPropagated", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "so does a missing namespace", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(withPropagation(entry("a", 4, 4, true), plan.ReasonWaitingForNamespace))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotPropagated", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "propagated again: the deadline resumes", in: rollback(newRolloutCase().rollout(pausedSince(inStage(1, -11*time.Minute, nil), -10*time.Minute)).set(entry("a", 5, 5, false))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -time.Minute, RequeueAfter: 9 * time.Minute}, noPause: true},
		{name: "stale data pauses the deadline", in: newRolloutCase().rollout(inStage(1, -5*time.Minute, nil)).set(stale(entry("a", 5, 5, false))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "StaleData", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -5 * time.Minute}},
		{name: "still stale: the pause that began before goes on", in: newRolloutCase().rollout(pausedSince(inStage(1, -11*time.Minute, nil), -8*time.Minute)).set(stale(entry("a", 5, 5, false))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "StaleData", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -11 * time.Minute}, paused: -8 * time.Minute},
		{name: "fresh again: the deadline resumes where it stood", in: newRolloutCase().rollout(pausedSince(inStage(1, -11*time.Minute, nil), -8*time.Minute)).set(entry("a", 5, 5, false)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "WaitingForReady", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -3 * time.Minute, RequeueAfter: 7 * time.Minute}, noPause: true},
		{name: "fresh again, not ready for longer than the deadline in total: failed", in: newRolloutCase().rollout(pausedSince(inStage(1, -11*time.Minute, nil), -30*time.Second)).set(entry("a", 5, 5, false)),
			want: rolloutOutcome{Phase: "Failed", Reason: "ProgressDeadlineExceeded", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -(10*time.Minute + 30*time.Second),
				Failed: true, FailedClusters: []string{"a"}}, noPause: true},
		{name: "not ready, then stale: remembered as not ready", in: newRolloutCase().rollout(notReadySince(inStage(2, -time.Hour, nil), -5*time.Minute)).set(stale(entry("a", 5, 5, true))).set(entry("b", 5, 5, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "StaleData", Stage: 2, Assign: map[string]int64{"a": 5, "b": 5, "c": 4}, Stable: 4, StageStart: -time.Hour, NotReadySince: -5 * time.Minute}},
		{name: "fresh and not ready again: it counts on from when it was first not ready", in: newRolloutCase().rollout(pausedSince(notReadySince(inStage(2, -time.Hour, nil), -11*time.Minute), -2*time.Minute)).set(entry("a", 5, 5, false)).set(entry("b", 5, 5, true)),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotReadyAgain", Stage: 2, Assign: map[string]int64{"a": 5, "b": 5, "c": 4}, Stable: 4, StageStart: -time.Hour + 2*time.Minute, NotReadySince: -9 * time.Minute,
				RequeueAfter: time.Minute}, noPause: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := plan.DecideRollout(tc.in.in)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, outcomeOf(d)); diff != "" {
				t.Errorf("DecideRollout() (-want +got):\n%s\nmessage: %s", diff, d.Status.Message)
			}
			var paused time.Duration
			if p := d.Status.DeadlinePausedSince; p != nil {
				paused = p.Sub(now)
			}
			if tc.noPause {
				require.Nil(t, d.Status.DeadlinePausedSince, d.Status.Message)
			} else {
				require.NotNil(t, d.Status.DeadlinePausedSince, "the clocks stand still: %s", d.Status.Message)
				require.Equal(t, tc.paused, paused)
			}
			if d.Failed {
				return
			}
			// Deciding again on the status it wrote takes no further step.
			again := tc.in.in
			obj := *again.Object
			obj.Status.Rollout = d.Status
			again.Object = &obj
			d2, err := plan.DecideRollout(again)
			require.NoError(t, err)
			if diff := cmp.Diff(d.Status, d2.Status); diff != "" {
				t.Errorf("DecideRollout() on its own status moved (-first +second):\n%s", diff)
			}
		})
	}
}
