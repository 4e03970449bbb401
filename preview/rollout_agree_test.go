package preview_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// A preview of a staged rollout against what the loops then do: the whole control plane in
// memory (four members running simulated workloads, the ClusterMonitor, the Scheduler, the
// Syncer and the Collector), each driven one pass per round on one fake clock.

var appKey = federation.Key{Namespace: "default", Name: "app"}

// stagedRollout: a canary by name, the European clusters by selector, then the rest.
const stagedRollout = `
    autoRollback: true
    stages:
    - {name: canary, clusters: [a], minReadySeconds: 30, progressDeadlineSeconds: 120}
    - {name: europe, clusterSelector: {matchLabels: {topology.kubernetes.io/region: eu}}, progressDeadlineSeconds: 120}
    - {name: all, percentage: 100, progressDeadlineSeconds: 120}`

type controlPlane struct {
	host    *fake.Cluster
	fleet   *fake.Fleet
	clock   *clocktesting.FakeClock
	monitor *status.ClusterMonitor
	sched   *scheduler.Scheduler
	push    *fedsync.Syncer
	collect *status.Collector
	names   []string
}

// newControlPlane starts the loops over members a and b (region us), c (eu) and d (ap),
// whose workloads are ready 10s after a change, and creates default/app (image app:v1,
// placed everywhere, 8 replicas divided by the scheduler) with stagedRollout.
func newControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	cp := &controlPlane{host: fake.NewHost("host"), fleet: fake.NewFleet(), clock: clocktesting.NewFakeClock(now), names: []string{"a", "b", "c", "d"}}
	cp.host.SetClock(cp.clock)
	cp.fleet.SetClock(cp.clock)
	cp.fleet.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 10 * time.Second})
	for n, region := range map[string]string{"a": "us", "b": "us", "c": "eu", "d": "ap"} {
		cp.fleet.Add(n, map[string]string{federation.RegionLabel: region})
	}
	require.NoError(t, cp.fleet.Register(ctx, cp.host))
	var err error
	cp.monitor, err = status.NewClusterMonitor(cp.host, cp.fleet, status.MonitorOptions{Clock: cp.clock})
	require.NoError(t, err)
	cp.sched, err = scheduler.New(cp.host, federation.DeploymentType, scheduler.Options{Clock: cp.clock})
	require.NoError(t, err)
	cp.push, err = fedsync.New(cp.host, cp.fleet, federation.DeploymentType, fedsync.Options{Clock: cp.clock})
	require.NoError(t, err)
	cp.collect, err = status.New(cp.host, cp.fleet, federation.DeploymentType, status.Options{Clock: cp.clock})
	require.NoError(t, err)
	cp.create(t, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app, namespace: default}
spec:
  template:
    spec:
      selector: {matchLabels: {app: app}}
      template:
        metadata: {labels: {app: app}}
        spec: {containers: [{name: app, image: "app:v1"}]}
  placement: {clusterSelector: {}}
  rollout:`+stagedRollout)
	cp.create(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 8}`)
	return cp
}

func (cp *controlPlane) create(t *testing.T, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	_, err := cp.host.Create(ctx, gvr, u)
	require.NoError(t, err)
}

// round runs every loop once, in the order their watches would wake them, then lets five
// seconds pass and the members' controllers run.
func (cp *controlPlane) round(t *testing.T) {
	t.Helper()
	for _, n := range cp.names {
		_, err := cp.monitor.Reconcile(ctx, federation.Key{Name: n})
		require.NoError(t, err)
	}
	_, err := cp.sched.Reconcile(ctx, appKey)
	require.NoError(t, err)
	_, err = cp.push.Reconcile(ctx, appKey)
	require.NoError(t, err)
	_, err = cp.collect.Reconcile(ctx, appKey)
	require.NoError(t, err)
	cp.clock.Step(5 * time.Second)
	cp.fleet.Tick()
}

func (cp *controlPlane) fed(t *testing.T) *federation.FederatedObject {
	t.Helper()
	u, err := cp.host.Peek(federation.DeploymentType.FederatedGVR(), appKey.Namespace, appKey.Name)
	require.NoError(t, err)
	f, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return f
}

// members returns each member's Deployment (nil where there is none).
func (cp *controlPlane) members(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, n := range cp.names {
		m, _ := cp.fleet.Member(n)
		u, err := m.Peek(deployments, appKey.Namespace, appKey.Name)
		if err == nil {
			out[n] = u
		}
	}
	return out
}

// preview previews the host's objects with the members' live objects, now.
func (cp *controlPlane) preview(t *testing.T) preview.Object {
	t.Helper()
	in := inputFrom(t, cp.host, cp.fleet)
	in.Now = cp.clock.Now()
	rep, err := preview.Run(in)
	require.NoError(t, err)
	require.Len(t, rep.Objects, 1)
	require.Empty(t, problems(rep.Objects[0].Problems))
	return rep.Objects[0]
}

// byStage is, per stage name, the clusters the preview says move to the new revision when
// the stage starts, and those of them whose member object changes.
type byStage struct{ Revision, Changed map[string][]string }

func previewed(ro *preview.Rollout) byStage {
	out := byStage{Revision: map[string][]string{}, Changed: map[string][]string{}}
	for _, s := range ro.Stages {
		if all := slices.Sorted(slices.Values(append(slices.Clone(s.Clusters), s.Unchanged...))); len(all) > 0 {
			out.Revision[s.Name] = all
		}
		if len(s.Clusters) > 0 {
			out.Changed[s.Name] = s.Clusters
		}
	}
	return out
}

// ownedChange reports whether the member object changed in a field the federation owns,
// other than the revision annotation (sync.OwnedDiff's rule; status left out). Not its
// generation: a Deployment's moves with its annotations too, as on a real API server.
func ownedChange(now, before *unstructured.Unstructured) bool {
	now = now.DeepCopy()
	delete(now.Object, "status")
	return len(fedsync.OwnedDiff(now, before)) > 0
}

// TestRolloutPreviewAgreesWithTheLoops: the preview's stages are the ones the Syncer then
// goes through: in each stage, the clusters the preview lists get the new revision (their
// revision annotation), and those it says change get a new member object (owned fields),
// the others only the annotation. A first revision, which the preview says is not staged,
// goes everywhere in the first pass.
func TestRolloutPreviewAgreesWithTheLoops(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*unstructured.Unstructured)
		want byStage
	}{
		{
			name: "a new image changes every cluster",
			edit: func(u *unstructured.Unstructured) {
				containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = "app:v2"
				require.NoError(t, unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "template", "spec", "containers"))
			},
			want: byStage{
				Revision: map[string][]string{"canary": {"a"}, "europe": {"c"}, "all": {"b", "d"}},
				Changed:  map[string][]string{"canary": {"a"}, "europe": {"c"}, "all": {"b", "d"}},
			},
		},
		{
			name: "an override for one cluster changes only that one",
			edit: func(u *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
					"clusterName": "d", "images": []any{map[string]any{"tag": "v2"}}}}, "spec", "overrides"))
			},
			want: byStage{
				Revision: map[string][]string{"canary": {"a"}, "europe": {"c"}, "all": {"b", "d"}},
				Changed:  map[string][]string{"all": {"d"}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := newControlPlane(t)
			for _, n := range cp.names { // the Clusters' Ready conditions, before anything else
				_, err := cp.monitor.Reconcile(ctx, federation.Key{Name: n})
				require.NoError(t, err)
			}
			first := cp.preview(t).Rollout
			require.False(t, first.Staged, first.Note)
			require.Equal(t, tc.want.Revision, previewed(first).Revision, "the stages a later revision goes through")
			cp.round(t)
			for n, u := range cp.members(t) {
				require.Equal(t, "1", u.GetAnnotations()[federation.RevisionAnnotation], "revision 1 in %s at the first pass", n)
			}
			require.Len(t, cp.members(t), 4, "revision 1 everywhere at the first pass")
			for i := 0; ; i++ {
				if f := cp.fed(t); f.Status.SyncedRevision == 1 && meta.IsStatusConditionTrue(f.Status.Conditions, federation.ConditionReady) {
					break
				}
				require.Less(t, i, 20, "revision 1 did not settle")
				cp.round(t)
			}

			u, err := cp.host.Get(ctx, federation.DeploymentType.FederatedGVR(), appKey.Namespace, appKey.Name)
			require.NoError(t, err)
			tc.edit(u)
			_, err = cp.host.Update(ctx, federation.DeploymentType.FederatedGVR(), u)
			require.NoError(t, err)

			o := cp.preview(t)
			ro := o.Rollout
			require.EqualValues(t, 2, o.Revision)
			require.True(t, ro.Staged, ro.Note)
			require.EqualValues(t, 1, ro.StableRevision)
			if diff := cmp.Diff(tc.want, previewed(ro)); diff != "" {
				t.Errorf("preview (-want +got):\n%s", diff)
			}

			// What the loops do, stage by stage.
			before := cp.members(t)
			did := byStage{Revision: map[string][]string{}, Changed: map[string][]string{}}
			seen := map[string]bool{}
			midway := false
			for i := 0; ; i++ {
				cp.round(t)
				f := cp.fed(t)
				st := f.Status.Rollout
				require.NotNil(t, st)
				require.Equal(t, int32(len(ro.Stages)), st.Stages, "the preview has sync's stages")
				for _, n := range cp.names {
					u := cp.members(t)[n]
					if seen[n] || u.GetAnnotations()[federation.RevisionAnnotation] != "2" {
						continue
					}
					// The member got revision 2 in this pass: the stage it started.
					seen[n] = true
					did.Revision[st.StageName] = append(did.Revision[st.StageName], n)
					if ownedChange(u, before[n]) {
						did.Changed[st.StageName] = append(did.Changed[st.StageName], n)
					}
				}
				if st.Revision == 2 && st.Phase == federation.RolloutComplete {
					break
				}
				if st.Stage == 2 && !midway {
					// Under way: the preview says where the rollout stands, and still stages it.
					midway = true
					mid := cp.preview(t).Rollout
					require.True(t, mid.Staged, mid.Note)
					require.EqualValues(t, 1, mid.StableRevision)
					require.Equal(t, st, mid.Status)
				}
				require.Less(t, i, 60, "revision 2 did not complete: %s %s", st.Phase, st.Message)
			}
			if diff := cmp.Diff(previewed(ro), did); diff != "" {
				t.Errorf("the loops did (-preview +loops):\n%s", diff)
			}
		})
	}
}
