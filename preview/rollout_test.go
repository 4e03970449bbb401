package preview_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/preview"
)

// stagedWeb is web placed in us, eu and sa with spec.rollout (YAML), its metadata given
// (YAML flow mapping entries after name and namespace, or "") and its status (a YAML flow
// mapping, or "").
func stagedWeb(rollout, metadata, status string) string {
	doc := web(`{clusters: [{name: us}, {name: eu}, {name: sa}]}`, "") + "  rollout: " + rollout + "\n"
	if metadata != "" {
		doc = strings.Replace(doc, "metadata: {name: web, namespace: shop}", "metadata: {name: web, namespace: shop, "+metadata+"}", 1)
	}
	if status != "" {
		doc += "status: " + status + "\n"
	}
	return doc
}

// threeStages: a canary by name, the dev clusters by selector, then every cluster.
const threeStages = `{autoRollback: true, stages: [
  {name: canary, clusters: [us], minReadySeconds: 60},
  {name: dev, clusterSelector: {matchLabels: {tier: dev}}, progressDeadlineSeconds: 900},
  {percentage: 100}]}`

// synced1 is the object as the host holds it after revision 1 rolled out, with its spec
// changed since (generation 2): sync will record revision 2.
const (
	synced1Meta   = `generation: 2, annotations: {federation.k8s.io/revision: "1"}`
	synced1Status = `{observedGeneration: 1, syncedRevision: 1, rollout: {revision: 1, stableRevision: 1, stableRevisionName: web-abc, phase: Complete, stage: 4, stages: 4, reason: Complete, message: revision 1 runs in every placed cluster}}`
)

// TestRunRollout: for an object with spec.rollout the preview lists sync's stages over the
// placed clusters, each with its gate, and says whether this revision goes through them.
func TestRunRollout(t *testing.T) {
	stages := []preview.RolloutStage{
		{Name: "canary", Clusters: []string{"us"}, MinReadySeconds: 60, ProgressDeadlineSeconds: 600},
		{Name: "dev", Clusters: []string{"sa"}, ProgressDeadlineSeconds: 900},
		{Name: "stage-3", Blocked: []string{"eu"}, ProgressDeadlineSeconds: 600}, // eu is not ready
	}
	for _, tc := range []struct {
		name           string
		metadata       string
		status         string
		wantRevision   int64
		wantStaged     bool
		wantStable     int64
		wantPaused     bool
		wantNote       string
		wantStatusRev  int64
		wantStatusNote string
	}{
		{
			name:         "a first revision goes everywhere at once",
			wantRevision: 1,
			wantNote:     "revision 1 is the object's first: sync sends it to every placed cluster at once; the revisions after it go stage by stage",
		},
		{
			name:     "a revision after a synced one goes stage by stage",
			metadata: synced1Meta, status: synced1Status,
			wantRevision: 2, wantStaged: true, wantStable: 1, wantStatusRev: 1,
			wantNote: "revision 2 goes stage by stage; each cluster keeps revision 1 until its stage starts",
		},
		{
			name:     "without status.rollout, the synced revision is the stable one",
			metadata: synced1Meta, status: `{observedGeneration: 1, syncedRevision: 1}`,
			wantRevision: 2, wantStaged: true, wantStable: 1,
			wantNote: "revision 2 goes stage by stage; each cluster keeps revision 1 until its stage starts",
		},
		{
			name:     "paused",
			metadata: `generation: 2, annotations: {federation.k8s.io/revision: "1", federation.k8s.io/rollout-paused: "true"}`, status: synced1Status,
			wantRevision: 2, wantStaged: true, wantStable: 1, wantPaused: true, wantStatusRev: 1,
			wantNote: "revision 2 goes stage by stage; each cluster keeps revision 1 until its stage starts (federation.k8s.io/rollout-paused holds the next stage)",
		},
		{
			name:         "a completed rollout",
			metadata:     `generation: 2, annotations: {federation.k8s.io/revision: "2"}`,
			status:       `{observedGeneration: 2, syncedRevision: 2, rollout: {revision: 2, stableRevision: 2, phase: Complete, reason: Complete}}`,
			wantRevision: 2, wantStatusRev: 2,
			wantNote: "revision 2 has completed its rollout: every placed cluster runs it; the next revision goes stage by stage",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, fleet, stagedWeb(threeStages, tc.metadata, tc.status)).Objects[0]
			require.Equal(t, tc.wantRevision, o.Revision)
			ro := o.Rollout
			require.NotNil(t, ro)
			if diff := cmp.Diff(stages, ro.Stages); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			require.Equal(t, tc.wantStaged, ro.Staged)
			require.Equal(t, tc.wantStable, ro.StableRevision)
			require.Equal(t, tc.wantPaused, ro.Paused)
			require.True(t, ro.AutoRollback)
			require.Equal(t, tc.wantNote, ro.Note)
			if tc.wantStatusRev == 0 {
				require.Nil(t, ro.Status)
			} else {
				require.Equal(t, tc.wantStatusRev, ro.Status.Revision)
			}
			require.Empty(t, problems(o.Problems))
		})
	}
}

// TestRunRolloutProblems: spec.rollout's validation errors carry their field paths, as the
// others do; stages that silently place nothing are pointed out.
func TestRunRolloutProblems(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rollout      string
		wantProblems []string
		wantStages   []string // name: clusters (changed, unchanged, blocked), when the object is valid
	}{
		{
			name:    "a stage chooses its clusters in two ways",
			rollout: `{stages: [{name: canary, clusters: [us], percentage: 50}, {name: canary, percentage: 0}]}`,
			wantProblems: []string{
				"Error: FederatedDeployment shop/web: spec.rollout.stages[0]: Forbidden: only one of clusters, clusterSelector and percentage may be set",
				`Error: FederatedDeployment shop/web: spec.rollout.stages[1].name: Duplicate value: "canary"`,
				"Error: FederatedDeployment shop/web: spec.rollout.stages[1].percentage: Invalid value: 0: must be in 1..100",
			},
		},
		{
			name:    "an invalid stage selector",
			rollout: `{stages: [{clusterSelector: {matchLabels: {"tier?": dev}}}]}`,
			wantProblems: []string{
				`Error: FederatedDeployment shop/web: spec.rollout.stages[0].clusterSelector.matchLabels[tier?]: Invalid value: "tier?": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			},
		},
		{
			name:    "a canary with a typo, and a selector no placed cluster matches",
			rollout: `{stages: [{name: canary, clusters: [uss]}, {name: europe, clusterSelector: {matchLabels: {topology.kubernetes.io/region: europe-west1}}}]}`,
			wantProblems: []string{
				`Warning: FederatedDeployment shop/web: spec.rollout.stages[0].clusters[0]: cluster "uss" is not placed: stage "canary" ignores it`,
				`Warning: FederatedDeployment shop/web: spec.rollout.stages[0]: stage "canary" adds no placed cluster: it passes at once`,
				`Warning: FederatedDeployment shop/web: spec.rollout.stages[1]: stage "europe" adds no placed cluster: it passes at once (its selector matches the Cluster objects' labels, and no placed cluster an earlier stage does not have)`,
			},
			wantStages: []string{"canary:", "europe:", "remaining: sa us eu"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, fleet, stagedWeb(tc.rollout, "", "")).Objects[0]
			if diff := cmp.Diff(tc.wantProblems, problems(o.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tc.wantStages == nil {
				require.Nil(t, o.Rollout, "sync refuses an invalid object: no stages")
				return
			}
			var got []string
			for _, s := range o.Rollout.Stages {
				got = append(got, strings.TrimSpace(s.Name+": "+strings.Join(append(append(s.Clusters, s.Unchanged...), s.Blocked...), " ")))
			}
			if diff := cmp.Diff(tc.wantStages, got); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunWithoutRollout: an object without spec.rollout has no rollout in its preview.
func TestRunWithoutRollout(t *testing.T) {
	o := run(t, fleet, web(`{clusters: [{name: us}]}`, "")).Objects[0]
	require.Nil(t, o.Rollout)
}
