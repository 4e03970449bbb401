package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

// TestPrintRollout: a stage's clusters say which ones the revision leaves unchanged or
// cannot reach; a paused rollout and its status are printed.
func TestPrintRollout(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, printRollout(&out, &preview.Rollout{
		Staged: true, StableRevision: 3, Paused: true,
		Note: "revision 4 goes stage by stage; each cluster keeps revision 3 until its stage starts (federation.k8s.io/rollout-paused holds the next stage)",
		Stages: []preview.RolloutStage{
			{Name: "canary", Unchanged: []string{"a"}, MinReadySeconds: 90, ProgressDeadlineSeconds: 600},
			{Name: "rest", Clusters: []string{"b", "c"}, Blocked: []string{"d"}, ProgressDeadlineSeconds: 3600},
			{Name: "remaining", Implicit: true, ProgressDeadlineSeconds: 600},
		},
		Status: &federation.RolloutStatus{Revision: 4, Phase: federation.RolloutPaused, Reason: "Paused",
			Message: "revision 4 waits before its first stage: the object carries federation.k8s.io/rollout-paused"},
	}))
	want := `
  Rollout: revision 4 goes stage by stage; each cluster keeps revision 3 until its stage starts (federation.k8s.io/rollout-paused holds the next stage)
  autoRollback: off (a failed rollout stops where it is); paused (federation.k8s.io/rollout-paused)

  STAGE                   CLUSTERS           MIN READY  DEADLINE
  1 canary                a (unchanged)      1m30s      10m0s
  2 rest                  b, c, d (blocked)  0s         1h0m0s
  3 remaining (implicit)  -                  0s         10m0s

  status.rollout: revision 4 Paused (Paused): revision 4 waits before its first stage: the object carries federation.k8s.io/rollout-paused
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("printRollout (-want +got):\n%s", diff)
	}
}
