package sync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
	"github.com/fedkit/fedkit/sync/plan"
)

// A staged rollout gates what runs (template, overrides, retainReplicas); where an object
// goes and with how many replicas never is, and never restarts it.

// placeOn sets spec.placement.clusters to the named clusters.
func placeOn(names ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = map[string]any{"name": n}
		}
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"clusters": list}, "spec", "placement")
	}
}

func setTemplateReplicas(n int64) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, n, "spec", "template", "spec", "replicas")
	}
}

// TestRolloutPlacementAndReplicasNotGated: while revision 2 is in its second stage, a
// placement change and a change of the template's replica count make new revision numbers;
// neither restarts the rollout nor moves a cluster back to web:v1, and the rollout goes on
// from its stage to completion.
func TestRolloutPlacementAndReplicasNotGated(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	e.setImage(t, "web:v2")
	e.until(t, "second stage started", 30, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Stage == 2
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v1 d=web:v1", e.images(t))
	start := *e.fed(t).Status.Rollout.StageStartTime

	e.editFed(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(10), "spec", "placement", "maxClusters"))
	})
	e.editFed(t, setTemplateReplicas(5))
	for range 2 {
		e.round(t)
		f := e.fed(t)
		st := f.Status.Rollout
		require.Equal(t, f.Status.Clusters[0].Revision, st.Revision, st.Message)
		require.Equal(t, int32(2), st.Stage, "the rollout went on at its stage: %s", st.Message)
		require.Equal(t, start, *st.StageStartTime, "the stage did not start again")
		require.Equal(t, "a=web:v2 b=web:v2 c=web:v1 d=web:v1", e.images(t))
	}
	e.until(t, "the rollout complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v2 d=web:v2", e.images(t))
	for n, imgs := range e.pushed(t) {
		require.NotContains(t, imgs, "web:v1", "%s was moved back to the old template", n)
	}
}

// TestRolloutTemplateReplicasEverywhere: without a scheduler the template's replica count
// is every cluster's. A new count while a rollout holds clusters back on web:v1 reaches
// them at once, and does not move the rollout back.
func TestRolloutTemplateReplicasEverywhere(t *testing.T) {
	e := newFleetEnvWith(t, threeStages, false)
	e.setImage(t, "web:v2")
	e.until(t, "the canary runs web:v2", 5, func(*federation.FederatedObject) bool {
		return strings.HasPrefix(e.images(t), "a=web:v2 b=web:v1")
	})
	e.editFed(t, setPaused(true))
	e.editFed(t, setTemplateReplicas(3))
	e.until(t, "3 replicas everywhere", 3, func(*federation.FederatedObject) bool {
		return e.layout(t) == "a=web:v2/3@3 b=web:v1/3@1 c=web:v1/3@1 d=web:v1/3@1"
	})
	st := e.fed(t).Status.Rollout
	require.Equal(t, int64(3), st.Revision)
	require.Equal(t, int32(1), st.Stage, st.Message)
	e.editFed(t, setPaused(false))
	e.until(t, "the rollout complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2/3@3 b=web:v2/3@3 c=web:v2/3@3 d=web:v2/3@3", e.layout(t))
}

// TestRolloutRollbackKeepsPlacement: cluster d is taken out of the placement while a
// failing revision waits at its canary. The automatic rollback restores web:v1 and leaves
// the placement as the user set it: d gets nothing back. (Without a scheduler: sync places
// by spec.placement itself.)
func TestRolloutRollbackKeepsPlacement(t *testing.T) {
	e := newFleetEnvWith(t, "autoRollback: true\n"+strings.TrimSpace(threeStages), false)
	e.setImage(t, "web:broken")
	e.until(t, "the canary runs web:broken", 5, func(*federation.FederatedObject) bool {
		return strings.HasPrefix(e.images(t), "a=web:broken")
	})
	e.editFed(t, placeOn("a", "b", "c"))
	e.round(t)
	e.until(t, "rolled back", 40, func(f *federation.FederatedObject) bool {
		return meta.IsStatusConditionTrue(f.Status.Conditions, federation.ConditionRolledBack)
	})
	e.until(t, "web:v1 where it is placed", 10, func(f *federation.FederatedObject) bool {
		return e.images(t) == "a=web:v1 b=web:v1 c=web:v1 d=-" && ready(f)
	})
	f := e.fed(t)
	require.Len(t, f.Spec.Placement.Clusters, 3, "the placement is the user's: %+v", f.Spec.Placement)
	for range 6 {
		e.round(t)
	}
	require.Equal(t, "a=web:v1 b=web:v1 c=web:v1 d=-", e.images(t))
}

// TestRolloutClusterLeavesPlacement: the cluster of the second stage is cut off: the stage
// waits for its data. Taking it out of the placement takes it out of the rollout, which
// completes in the other clusters. The preference sets the placement aside (KubeFed's rule),
// and a not-ready cluster keeps what runs there while its taint is NoSchedule, so b leaves
// when the monitor's taint turns NoExecute, EvictionDelay (5m, 60 rounds) after the cut.
func TestRolloutClusterLeavesPlacement(t *testing.T) {
	e := newFleetEnv(t, "autoRollback: true\n"+strings.TrimSpace(threeStages))
	e.setImage(t, "web:v2")
	e.until(t, "second stage started", 30, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Stage == 2
	})
	require.NoError(t, e.fleet.Partition("b"))
	e.until(t, "waiting for b's data", 30, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Reason == plan.RolloutReasonStaleData
	})
	e.editFed(t, placeOn("a", "c", "d"))
	e.until(t, "the rollout complete without b", 60+60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutComplete
	})
	f := e.fed(t)
	require.Zero(t, f.Status.Rollout.FailedRevision)
	require.Nil(t, meta.FindStatusCondition(f.Status.Conditions, federation.ConditionRolledBack))
	require.Equal(t, []federation.RolloutRevisionClusters{{Revision: f.Status.Rollout.Revision, Clusters: []string{"a", "c", "d"}}}, f.Status.Rollout.Clusters)
	for _, n := range []string{"a", "c", "d"} {
		require.Equal(t, "web:v2", e.imageIn(t, n), n)
	}
}

// TestRolloutBlockedClusterHoldsStage: sync cannot propagate to the canary (an object of the
// same name that no federation manages: AlreadyExists). That is not the revision's health:
// the stage holds, far past its deadline, status.rollout names the cluster and the reason,
// and nothing is rolled back. Once the object is gone the rollout goes on and completes.
func TestRolloutBlockedClusterHoldsStage(t *testing.T) {
	e := newFleetEnv(t, "autoRollback: true\n"+strings.TrimSpace(threeStages))
	m, _ := e.fleet.Member("a")
	require.NoError(t, m.Delete(ctx, deployments, webKey.Namespace, webKey.Name, metav1.DeleteOptions{}))
	other := &unstructured.Unstructured{}
	require.NoError(t, yamlInto(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: web, image: "other:v1"}]}`, other))
	_, err := m.Create(ctx, deployments, other)
	require.NoError(t, err)
	e.setImage(t, "web:v2")
	for range 60 { // five minutes, more than twice the stage's deadline
		e.round(t)
	}
	f := e.fed(t)
	st := f.Status.Rollout
	require.Equal(t, federation.RolloutProgressing, st.Phase, st.Message)
	require.Equal(t, int32(1), st.Stage, st.Message)
	require.Equal(t, plan.RolloutReasonNotPropagated, st.Reason, st.Message)
	require.Contains(t, st.Message, "a ("+plan.ReasonAlreadyExists+")")
	require.Zero(t, st.FailedRevision, st.Message)
	require.Nil(t, meta.FindStatusCondition(f.Status.Conditions, federation.ConditionRolledBack))
	require.Equal(t, "a=other:v1 b=web:v1 c=web:v1 d=web:v1", e.images(t))

	require.NoError(t, m.Delete(ctx, deployments, webKey.Namespace, webKey.Name, metav1.DeleteOptions{}))
	e.until(t, "the rollout complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v2 d=web:v2", e.images(t))
	require.Zero(t, e.fed(t).Status.Rollout.FailedRevision)
}

// TestRolloutFlappingClusterFails: the canary runs an image that never becomes ready, and
// its data goes stale for 20s out of every 40s. Stale data pauses the stage's deadline and
// never resets it, so once its fresh data has said "not ready" for the deadline (2m) in
// total, the revision fails and is rolled back. The monitor here forgets flaps quickly
// (SuccessThreshold 1, a ReadinessWindow of 10s): by default it damps a cluster this
// flappy, keeping it not Ready, and its data stale, for longer at every flap.
func TestRolloutFlappingClusterFails(t *testing.T) {
	e := newFleetEnv(t, "autoRollback: true\n"+strings.TrimSpace(threeStages))
	var err error
	e.monitor, err = status.NewClusterMonitor(e.host, e.fleet, status.MonitorOptions{Clock: e.clock,
		SuccessThreshold: 1, EvictionDelay: 10 * time.Second, ReadinessWindow: 10 * time.Second})
	require.NoError(t, err)
	e.setImage(t, "web:broken")
	e.until(t, "the canary runs web:broken", 5, func(*federation.FederatedObject) bool {
		return strings.HasPrefix(e.images(t), "a=web:broken")
	})
	rolledBack := func() bool {
		return meta.IsStatusConditionTrue(e.fed(t).Status.Conditions, federation.ConditionRolledBack)
	}
	var stale int
	for i := 0; i < 120 && !rolledBack(); i++ { // at most ten minutes
		switch i % 8 {
		case 0:
			require.NoError(t, e.fleet.Partition("a"))
		case 4:
			require.NoError(t, e.fleet.Heal("a"))
		}
		e.round(t)
		if e.fed(t).Status.Rollout.Reason == plan.RolloutReasonStaleData {
			stale++
		}
	}
	require.NoError(t, e.fleet.Heal("a"))
	require.True(t, rolledBack(), "the flapping canary never failed: %s", e.fed(t).Status.Rollout.Message)
	require.NotZero(t, stale, "the canary's data was never stale")
	cond := meta.FindStatusCondition(e.fed(t).Status.Conditions, federation.ConditionRolledBack)
	require.Contains(t, cond.Message, "cluster a did not report revision 2 ready within 2m0s")
	e.until(t, "web:v1 everywhere again", 10, func(*federation.FederatedObject) bool {
		return e.images(t) == "a=web:v1 b=web:v1 c=web:v1 d=web:v1"
	})
}
