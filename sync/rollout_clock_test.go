package sync_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// pausedSince marks status.rollout's clocks as standing still since d (a wait for stale data).
func pausedSince(st federation.RolloutStatus, d time.Duration) federation.RolloutStatus {
	st.DeadlinePausedSince, st.Reason = at(d), fedsync.RolloutReasonStaleData
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
	c.in.History = append(c.in.History, fedsync.Revision{Number: 6, Name: "app-frontend-rev6", Spec: spec})
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
		{name: "a cluster sync cannot propagate to holds the stage, never fails it", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(withPropagation(entry("a", 4, 4, true), fedsync.ReasonAlreadyExists))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotPropagated", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "a refused write holds the stage too", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(withPropagation(entry("a", 4, 4, false), fedsync.ReasonUpdateFailed))),
			want: rolloutOutcome{Phase: "Progressing", Reason: "NotPropagated", Stage: 1, Assign: map[string]int64{"a": 5, "b": 4, "c": 4}, Stable: 4, StageStart: -11 * time.Minute}},
		{name: "so does a missing namespace", in: rollback(newRolloutCase().rollout(inStage(1, -11*time.Minute, nil)).set(withPropagation(entry("a", 4, 4, true), fedsync.ReasonWaitingForNamespace))),
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
			d, err := fedsync.DecideRollout(tc.in.in)
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
			d2, err := fedsync.DecideRollout(again)
			require.NoError(t, err)
			if diff := cmp.Diff(d.Status, d2.Status); diff != "" {
				t.Errorf("DecideRollout() on its own status moved (-first +second):\n%s", diff)
			}
		})
	}
}
