package sync_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// The staged rollout on the whole control plane in memory: four members running simulated
// workloads, the ClusterMonitor, the scheduler, the Syncer and the Collector, each driven
// one pass per round on one fake clock, as their Run would drive them.

var webKey = federation.Key{Namespace: "default", Name: "web"}

// liveMembers hides the fleet's member caches from the Collector, so it reads members live
// and a partition fails its reads, as it fails a real cluster's.
type liveMembers struct{ set federation.ClusterSet }

func (l liveMembers) Client(name string) (federation.ClusterClient, error) { return l.set.Client(name) }

type fleetEnv struct {
	host    *fake.Cluster
	fleet   *fake.Fleet
	clock   *clocktesting.FakeClock
	monitor *status.ClusterMonitor
	sched   *scheduler.Scheduler
	push    *fedsync.Syncer
	collect *status.Collector
	events  *recorder
	names   []string
}

// newFleetEnv starts the control plane over members a, b, c and d (workloads ready 10s
// after a change, image web:broken never) and creates default/web at image web:v1, placed
// everywhere, 8 replicas divided by the scheduler, with the rollout given in YAML, and
// lets revision 1 settle everywhere.
func newFleetEnv(t *testing.T, rollout string) *fleetEnv {
	t.Helper()
	return newFleetEnvWith(t, rollout, true)
}

// newFleetEnvWith is newFleetEnv, and without a scheduler when scheduled is false: no
// preference, the template runs 2 replicas in every cluster.
func newFleetEnvWith(t *testing.T, rollout string, scheduled bool) *fleetEnv {
	t.Helper()
	e := &fleetEnv{host: fake.NewHost("host"), fleet: fake.NewFleet(), clock: clocktesting.NewFakeClock(now), events: &recorder{},
		names: []string{"a", "b", "c", "d"}}
	e.host.SetClock(e.clock)
	e.fleet.SetClock(e.clock)
	e.fleet.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 10 * time.Second, FailingImages: []string{"web:broken"}})
	for _, n := range e.names {
		e.fleet.Add(n, nil)
	}
	require.NoError(t, e.fleet.Register(ctx, e.host))
	var err error
	e.monitor, err = status.NewClusterMonitor(e.host, e.fleet, status.MonitorOptions{Clock: e.clock})
	require.NoError(t, err)
	if scheduled {
		e.sched, err = scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Clock: e.clock})
		require.NoError(t, err)
	}
	e.push, err = fedsync.New(e.host, e.fleet, federation.DeploymentType, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	e.collect, err = status.New(e.host, liveMembers{e.fleet}, federation.DeploymentType, status.Options{Clock: e.clock})
	require.NoError(t, err)

	fed := &unstructured.Unstructured{}
	require.NoError(t, yamlInto(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:v1"}]}
  placement: {clusterSelector: {}}
  rollout:
`+indent(rollout, "    "), fed))
	_, err = e.host.Create(ctx, federation.DeploymentType.FederatedGVR(), fed)
	require.NoError(t, err)
	if scheduled {
		e.createRSP(t)
	}

	e.until(t, "revision 1 everywhere", 20, func(f *federation.FederatedObject) bool {
		return e.images(t) == "a=web:v1 b=web:v1 c=web:v1 d=web:v1" && f.Status.SyncedRevision == 1 && ready(f)
	})
	st := e.fed(t).Status.Rollout
	require.Equal(t, federation.RolloutComplete, st.Phase, "a first revision is not staged: %s", st.Message)
	e.clearActions()
	return e
}

// createRSP divides 8 replicas over the clusters.
func (e *fleetEnv) createRSP(t *testing.T) {
	t.Helper()
	rsp := &unstructured.Unstructured{}
	require.NoError(t, yamlInto(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 8}`, rsp))
	_, err := e.host.Create(ctx, federation.ReplicaSchedulingPreferenceGVR, rsp)
	require.NoError(t, err)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// round runs every loop once, in the order their watches would wake them, then lets five
// seconds pass and the members' controllers run. A sync pass may fail while a member is
// cut off (it is retried, as Run would); any other error fails the test.
func (e *fleetEnv) round(t *testing.T) {
	t.Helper()
	for _, n := range e.names {
		_, err := e.monitor.Reconcile(ctx, federation.Key{Name: n})
		require.NoError(t, err)
	}
	if e.sched != nil {
		_, err := e.sched.Reconcile(ctx, webKey)
		require.NoError(t, err)
	}
	if _, err := e.push.Reconcile(ctx, webKey); err != nil && !e.partitioned() {
		require.NoError(t, err)
	}
	_, err := e.collect.Reconcile(ctx, webKey)
	require.NoError(t, err)
	e.clock.Step(5 * time.Second)
	e.fleet.Tick()
}

func (e *fleetEnv) partitioned() bool {
	for _, n := range e.names {
		if m, _ := e.fleet.Member(n); m.Partitioned() {
			return true
		}
	}
	return false
}

// until runs rounds until done holds for the federated object, at most max of them.
func (e *fleetEnv) until(t *testing.T, what string, max int, done func(*federation.FederatedObject) bool) {
	t.Helper()
	for i := 0; ; i++ {
		f := e.fed(t)
		if done(f) {
			return
		}
		require.Less(t, i, max, "%s: not after %d rounds; images %s; rollout %+v", what, max, e.images(t), f.Status.Rollout)
		e.round(t)
	}
}

func (e *fleetEnv) fed(t *testing.T) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Peek(federation.DeploymentType.FederatedGVR(), webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	f, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return f
}

// images lists the image each member's Deployment runs: "a=web:v1 b=web:v2 ...".
func (e *fleetEnv) images(t *testing.T) string {
	t.Helper()
	var out []string
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		img := "-"
		if u, err := m.Peek(deployments, webKey.Namespace, webKey.Name); err == nil {
			img = image(t, u)
		}
		out = append(out, n+"="+img)
	}
	return strings.Join(out, " ")
}

// pushed lists, per member, the images the Syncer wrote there (its create and update
// actions), in order, from the members' action logs.
func (e *fleetEnv) pushed(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		for _, a := range m.Actions() {
			if a.Resource == deployments && (a.Verb == fake.VerbCreate || a.Verb == fake.VerbUpdate) {
				if img := image(t, a.Object); len(out[n]) == 0 || out[n][len(out[n])-1] != img {
					out[n] = append(out[n], img)
				}
			}
		}
	}
	return out
}

// memberUpdates counts the Syncer's updates of the Deployment in a member.
func (e *fleetEnv) memberUpdates(cluster string) int {
	m, _ := e.fleet.Member(cluster)
	n := 0
	for _, a := range m.Actions() {
		if a.Verb == fake.VerbUpdate && a.Resource == deployments {
			n++
		}
	}
	return n
}

// objectWrites counts the host writes other than to Clusters (the monitor's heartbeats).
func (e *fleetEnv) objectWrites() int {
	n := 0
	for _, a := range e.host.Actions() {
		if writeVerbs[a.Verb] && a.Resource != federation.ClusterGVR {
			n++
		}
	}
	return n
}

func (e *fleetEnv) clearActions() {
	e.host.ClearActions()
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		m.ClearActions()
	}
}

// setImage changes the template's image on the host, as kubectl apply would.
func (e *fleetEnv) setImage(t *testing.T, img string) {
	t.Helper()
	e.editFed(t, setImage(img))
}

func (e *fleetEnv) editFed(t *testing.T, mutate func(*unstructured.Unstructured)) {
	t.Helper()
	gvr := federation.DeploymentType.FederatedGVR()
	u, err := e.host.Get(ctx, gvr, webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	mutate(u)
	_, err = e.host.Update(ctx, gvr, u)
	require.NoError(t, err)
}

func setPaused(paused bool) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if paused {
			ann[federation.RolloutPausedAnnotation] = "true"
		} else {
			delete(ann, federation.RolloutPausedAnnotation)
		}
		u.SetAnnotations(ann)
	}
}

func ready(f *federation.FederatedObject) bool {
	return meta.IsStatusConditionTrue(f.Status.Conditions, federation.ConditionReady)
}

func rolloutAt(f *federation.FederatedObject) string {
	st := f.Status.Rollout
	if st == nil {
		return "none"
	}
	return fmt.Sprintf("revision %d stage %d %s %s", st.Revision, st.Stage, st.Phase, st.Reason)
}

const threeStages = `
stages:
- {name: canary, clusters: [a], minReadySeconds: 30, progressDeadlineSeconds: 120}
- {name: half, percentage: 50, progressDeadlineSeconds: 120}
- {name: all, percentage: 100, progressDeadlineSeconds: 120}`

// TestRolloutThreeStages: a new image goes to the canary, then, once the canary has been
// ready for 30s, to half of the clusters, then to all; every stage starts only when the one
// before it is ready, and the rollout completes with every cluster on the new revision.
func TestRolloutThreeStages(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	e.setImage(t, "web:v2")

	var seen []string     // the distinct image layouts, in order
	var since []time.Time // when each appeared
	e.until(t, "revision 2 complete", 60, func(f *federation.FederatedObject) bool {
		if img := e.images(t); len(seen) == 0 || seen[len(seen)-1] != img {
			seen, since = append(seen, img), append(since, e.clock.Now())
			t.Logf("%s %s  (%s)", e.clock.Now().Sub(now), img, rolloutAt(f))
		}
		return f.Status.Rollout != nil && f.Status.Rollout.Revision == 2 && f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, []string{
		"a=web:v1 b=web:v1 c=web:v1 d=web:v1",
		"a=web:v2 b=web:v1 c=web:v1 d=web:v1",
		"a=web:v2 b=web:v2 c=web:v1 d=web:v1",
		"a=web:v2 b=web:v2 c=web:v2 d=web:v2",
	}, seen)
	// A stage is ready 10s after its members got the image (ReadyAfter), seen by the next
	// pass; the canary then waits out its 30s.
	require.GreaterOrEqual(t, since[2].Sub(since[1]), 40*time.Second, "the second stage started before the canary was ready for 30s")
	require.GreaterOrEqual(t, since[3].Sub(since[2]), 10*time.Second, "the third stage started before the second was ready")

	f := e.fed(t)
	require.Equal(t, int64(2), f.Status.SyncedRevision)
	require.Equal(t, []federation.RolloutRevisionClusters{{Revision: 2, Clusters: []string{"a", "b", "c", "d"}}}, f.Status.Rollout.Clusters)
	for _, c := range f.Status.Clusters {
		require.Equal(t, int64(2), c.Revision, c.Name)
	}
	var stages []string
	for _, ev := range e.events.list() {
		if strings.Contains(ev, "Rollout") {
			stages = append(stages, ev)
		}
	}
	require.Equal(t, []string{
		"Normal RolloutStageStarted revision 2: stage 1 of 3 (canary) started in a",
		"Normal RolloutStageStarted revision 2: stage 2 of 3 (half) started in b",
		"Normal RolloutStageStarted revision 2: stage 3 of 3 (all) started in c, d",
		"Normal RolloutComplete revision 2 runs in every placed cluster",
	}, stages)

	// Settled: no more writes anywhere.
	e.round(t)
	e.clearActions()
	for range 12 {
		e.round(t)
	}
	require.Zero(t, e.objectWrites(), "host writes after the rollout completed")
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		require.Zero(t, countWrites(m), "writes to %s after the rollout completed", n)
	}
}

// TestRolloutPausedGate: the pause annotation set while the canary runs holds the next stage
// however long the canary has been ready; removing it resumes the rollout at once.
func TestRolloutPausedGate(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	e.setImage(t, "web:v2")
	e.until(t, "canary started", 5, func(*federation.FederatedObject) bool {
		return strings.HasPrefix(e.images(t), "a=web:v2")
	})
	e.editFed(t, setPaused(true))
	for range 60 { // five minutes
		e.round(t)
	}
	f := e.fed(t)
	require.Equal(t, "a=web:v2 b=web:v1 c=web:v1 d=web:v1", e.images(t))
	require.Equal(t, federation.RolloutPaused, f.Status.Rollout.Phase, f.Status.Rollout.Message)
	require.Equal(t, int32(1), f.Status.Rollout.Stage)
	require.Contains(t, f.Status.Rollout.Message, "stage 1 of 3 (canary): ready; the next stage waits")

	e.editFed(t, setPaused(false))
	e.round(t)
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v1 d=web:v1", e.images(t), "the next stage starts at the first pass")
	e.until(t, "revision 2 complete", 40, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 2 && f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v2 d=web:v2", e.images(t))
}

// TestRolloutFailingImageRolledBack: an image that never becomes ready reaches the canary
// only; when the canary's deadline passes, sync restores revision 1's spec as revision 3,
// says so in the RolledBack condition, status.rollout and an event, and the canary runs
// web:v1 again. No other cluster ever received web:broken (the members' action logs), and
// the failed revision is not tried again.
func TestRolloutFailingImageRolledBack(t *testing.T) {
	e := newFleetEnv(t, "autoRollback: true\n"+strings.TrimSpace(threeStages))
	e.setImage(t, "web:broken")
	e.until(t, "rolled back", 40, func(f *federation.FederatedObject) bool {
		return meta.IsStatusConditionTrue(f.Status.Conditions, federation.ConditionRolledBack)
	})
	e.until(t, "revision 1's image everywhere again", 10, func(f *federation.FederatedObject) bool {
		return e.images(t) == "a=web:v1 b=web:v1 c=web:v1 d=web:v1" && ready(f)
	})

	require.Equal(t, map[string][]string{"a": {"web:broken", "web:v1"}}, e.pushed(t), "only the canary ever ran the failing image")
	f := e.fed(t)
	cond := meta.FindStatusCondition(f.Status.Conditions, federation.ConditionRolledBack)
	require.Equal(t, plan.ReasonRolloutFailed, cond.Reason)
	require.Contains(t, cond.Message, "revision 2 failed in cluster a (ProgressDeadlineExceeded: stage 1 of 3 (canary): cluster a did not report revision 2 ready within 2m0s); revision 1 restored")
	require.Equal(t, "web:v1", image(t, &unstructured.Unstructured{Object: map[string]any{"spec": f.Spec.Template.Object["spec"]}}))
	st := f.Status.Rollout
	require.Equal(t, int64(3), st.Revision, "the restored spec is a new revision")
	require.Equal(t, federation.RolloutComplete, st.Phase, st.Message)
	require.Equal(t, int64(2), st.FailedRevision)
	require.Contains(t, e.events.list(), "Warning RolledBack "+cond.Message)

	// No flapping: the failed revision is not tried again, nothing is written.
	gen := f.Generation
	e.round(t)
	e.clearActions()
	for range 24 {
		e.round(t)
	}
	require.Equal(t, gen, e.fed(t).Generation)
	require.Empty(t, e.pushed(t))
	require.Zero(t, e.objectWrites())
}

// TestRolloutFailingImageStops: without autoRollback the failed rollout stops where it is:
// the canary keeps the failing image, the others revision 1, and status.rollout says so.
func TestRolloutFailingImageStops(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	e.setImage(t, "web:broken")
	e.until(t, "failed", 40, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutFailed
	})
	for range 24 {
		e.round(t)
	}
	f := e.fed(t)
	require.Equal(t, "a=web:broken b=web:v1 c=web:v1 d=web:v1", e.images(t))
	require.Contains(t, f.Status.Rollout.Message, "the rollout stopped (spec.rollout.autoRollback is off)")
	require.Nil(t, meta.FindStatusCondition(f.Status.Conditions, federation.ConditionRolledBack))
	require.True(t, slices.ContainsFunc(e.events.list(), func(s string) bool { return strings.HasPrefix(s, "Warning RolloutFailed revision 2:") }))

	// A new spec starts a new rollout from the stable revision.
	e.setImage(t, "web:v3")
	e.until(t, "revision 3 complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 3 && f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v3 b=web:v3 c=web:v3 d=web:v3", e.images(t))
}

// TestRolloutPartition: the cluster of the current stage is cut off (the monitor marks it
// not Ready, the scheduler moves its replicas away) for far longer than the stage's
// deadline. Its data is stale: the rollout neither advances nor fails. Once it is back, its
// stage completes and so does the rollout.
func TestRolloutPartition(t *testing.T) {
	e := newFleetEnv(t, "autoRollback: true\n"+strings.TrimSpace(threeStages))
	e.setImage(t, "web:v2")
	e.until(t, "second stage started", 30, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Stage == 2
	})
	require.NoError(t, e.fleet.Partition("b"))
	for i := range 120 { // ten minutes, five times the stage's deadline
		e.round(t)
		if i%20 == 0 {
			f := e.fed(t)
			t.Logf("%s: %s: %s; schedule %+v", e.clock.Now().Sub(now), rolloutAt(f), f.Status.Rollout.Message, f.Status.Schedule.Clusters)
		}
	}
	f := e.fed(t)
	st := f.Status.Rollout
	require.Equal(t, int64(2), st.Revision)
	require.Equal(t, int32(2), st.Stage, st.Message)
	require.Equal(t, plan.RolloutReasonStaleData, st.Reason, st.Message)
	require.Zero(t, st.FailedRevision)
	require.Nil(t, meta.FindStatusCondition(f.Status.Conditions, federation.ConditionRolledBack))
	require.Equal(t, "web:v1", e.imageIn(t, "c"), "the next stage did not start")
	require.Equal(t, "web:v1", e.imageIn(t, "d"))

	require.NoError(t, e.fleet.Heal("b"))
	e.until(t, "revision 2 complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v2 d=web:v2", e.images(t))
	require.Zero(t, e.fed(t).Status.Rollout.FailedRevision)
}

func (e *fleetEnv) imageIn(t *testing.T, cluster string) string {
	t.Helper()
	m, _ := e.fleet.Member(cluster)
	u, err := m.Peek(deployments, webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	return image(t, u)
}

// TestRolloutRevisionForOneCluster: a revision whose render changes in cluster d only (an
// override) still goes stage by stage. The clusters whose object renders as before get the
// new revision annotation (one update each, their pod template unchanged), which is how
// their stage is seen to run it; d gets the new image in the last stage.
func TestRolloutRevisionForOneCluster(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	e.editFed(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"clusterName": "d", "images": []any{map[string]any{"tag": "v2"}}}}, "spec", "overrides")
	})
	e.until(t, "revision 2 complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 2 && f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v1 b=web:v1 c=web:v1 d=web:v2", e.images(t))
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		u, err := m.Peek(deployments, webKey.Namespace, webKey.Name)
		require.NoError(t, err)
		require.Equal(t, "2", u.GetAnnotations()[federation.RevisionAnnotation], n)
		require.Equal(t, 1, e.memberUpdates(n), "%s: one update", n)
	}
}

// TestRolloutHeldClustersUntouched: after a placement-only revision (everywhere at once, no
// member rewritten: their annotation keeps the older number), a staged rollout writes
// nothing to the clusters it holds back, however old their revision annotation.
func TestRolloutHeldClustersUntouched(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	e.editFed(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(10), "spec", "placement", "maxClusters"))
	})
	e.until(t, "revision 2 complete", 10, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 2 && f.Status.Rollout.Phase == federation.RolloutComplete && f.Status.SyncedRevision == 2
	})
	require.Empty(t, e.pushed(t), "a placement change that keeps every cluster rewrites none")
	e.setImage(t, "web:v2")
	e.until(t, "second stage started", 30, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 3 && f.Status.Rollout.Stage == 2
	})
	require.Equal(t, map[string][]string{"a": {"web:v2"}, "b": {"web:v2"}}, e.pushed(t))
	for _, n := range []string{"c", "d"} {
		require.Zero(t, e.memberUpdates(n), n)
	}
}

// TestRollbackRestoresWhatRan: Rollback brings back revision 1's template and leaves where
// the object goes and how many replicas run as they are now: azure, excluded since, stays
// excluded, and the template keeps its new replica count. RestorePlacement is the explicit
// choice to put it back where revision 1 was too.
func TestRollbackRestoresWhatRan(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	e.edit(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters"))
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(5), "spec", "template", "spec", "replicas"))
	})
	e.reconcile(t)
	require.False(t, e.exists(t, "azure"))

	require.NoError(t, fedsync.Rollback(ctx, e.host, e.typ, key, 1))
	e.reconcile(t)
	f := e.fed(t)
	require.Equal(t, []federation.ClusterReference{{Name: "aws"}, {Name: "gcp"}}, f.Spec.Placement.Clusters, "the placement stays the user's")
	for _, c := range []string{"aws", "gcp"} {
		require.Equal(t, frontendImage, image(t, e.member(t, c)), c)
	}
	require.EqualValues(t, 5, replicas(e.member(t, "aws")), "the template keeps its replica count")
	require.EqualValues(t, 4, replicas(e.member(t, "gcp")), "revision 1's override")
	require.False(t, e.exists(t, "azure"), "a rollback does not place the object back in an excluded cluster")

	require.NoError(t, fedsync.Rollback(ctx, e.host, e.typ, key, 1, fedsync.RestorePlacement()))
	e.reconcile(t)
	require.Len(t, e.fed(t).Spec.Placement.Clusters, 3)
	require.Equal(t, frontendImage, image(t, e.member(t, "azure")), "RestorePlacement puts it back")
}

// exists reports whether the cluster has the member object of key.
func (e *env) exists(t *testing.T, cluster string) bool {
	t.Helper()
	c, ok := e.fleet.Member(cluster)
	require.True(t, ok, cluster)
	_, err := c.Peek(deployments, key.Namespace, key.Name)
	return err == nil
}

// layout lists each member's Deployment as cluster=image/replicas@revision, "-" where there
// is none: "a=web:v2/2@2 b=web:v1/2@1 ...".
func (e *fleetEnv) layout(t *testing.T) string {
	t.Helper()
	var out []string
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		u, err := m.Peek(deployments, webKey.Namespace, webKey.Name)
		if err != nil {
			out = append(out, n+"=-")
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s/%d@%s", n, image(t, u), replicas(u), u.GetAnnotations()[federation.RevisionAnnotation]))
	}
	return strings.Join(out, " ")
}

// TestRolloutScheduleChangesNotGated: while a staged rollout is held at its canary (paused),
// changes that are not a new revision go everywhere at once: new replica counts reach the
// clusters still on the previous revision, and a cluster that joins gets the object at
// once, rendered from the revision its stage runs (the previous one). Neither moves the
// rollout past its gate; resuming it completes it on every cluster, the new one included.
func TestRolloutScheduleChangesNotGated(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	require.Equal(t, "a=web:v1/2@1 b=web:v1/2@1 c=web:v1/2@1 d=web:v1/2@1", e.layout(t))
	e.setImage(t, "web:v2")
	e.until(t, "the canary runs revision 2", 5, func(*federation.FederatedObject) bool {
		return e.layout(t) == "a=web:v2/2@2 b=web:v1/2@1 c=web:v1/2@1 d=web:v1/2@1"
	})
	e.editFed(t, setPaused(true))
	e.until(t, "the rollout paused", 20, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutPaused
	})

	// The replicas are redistributed: 12 instead of 8.
	rsp, err := e.host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(rsp.Object, int64(12), "spec", "totalReplicas"))
	_, err = e.host.Update(ctx, federation.ReplicaSchedulingPreferenceGVR, rsp)
	require.NoError(t, err)
	e.until(t, "12 replicas in every cluster, each on its revision", 3, func(*federation.FederatedObject) bool {
		return e.layout(t) == "a=web:v2/3@2 b=web:v1/3@1 c=web:v1/3@1 d=web:v1/3@1"
	})

	// A cluster joins: placed at once (the selector takes every cluster), on the previous
	// revision since its stage has not started.
	e.fleet.Add("e", nil)
	e.names = append(e.names, "e")
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.until(t, "the new cluster runs the previous revision", 5, func(*federation.FederatedObject) bool {
		l := e.layout(t)
		return strings.Contains(l, " e=web:v1/") && strings.HasSuffix(l, "@1")
	})
	t.Logf("after e joined: %s", e.layout(t))
	// The canary's new replicas make it not ready for a moment: the rollout waits for it,
	// then holds at the paused gate again. It stays at stage 1 throughout.
	e.until(t, "the rollout paused again", 10, func(f *federation.FederatedObject) bool {
		st := f.Status.Rollout
		require.Equal(t, int32(1), st.Stage, st.Message)
		require.Zero(t, st.FailedRevision, st.Message)
		return st.Phase == federation.RolloutPaused
	})
	require.Equal(t, "web:v2", e.imageIn(t, "a"))
	for _, n := range []string{"b", "c", "d"} {
		require.Equal(t, "web:v1", e.imageIn(t, n), n)
	}

	e.editFed(t, setPaused(false))
	e.until(t, "revision 2 complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 2 && f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v2 d=web:v2 e=web:v2", e.images(t))
}
