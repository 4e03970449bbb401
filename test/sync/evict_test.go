package sync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
)

const evicted = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: evict}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: "nginx:1.21"}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
`

// TestGracefulEvictionOnRealServers: m2 is drained with a NoExecute taint. The scheduler
// moves its 2 replicas to m1 and keeps them in m2 meanwhile (status.schedule.evictions, which
// the API server stores as written); m2's Deployment stays until m1 reports its 4 available
// (the test plays m1's Deployment controller), then sync removes it.
func TestGracefulEvictionOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	key := federation.Key{Namespace: "evict", Name: "web"}
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: evict}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), evicted)
	fedtest.Create(t, f.host, federation.ReplicaSchedulingPreferenceGVR, `{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference,
metadata: {name: web, namespace: evict}, spec: {targetKind: FederatedDeployment, totalReplicas: 4, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}}`)
	sched, err := scheduler.New(f.host, federation.DeploymentType, scheduler.Options{})
	require.NoError(t, err)
	collector, err := status.New(f.host, f.set, federation.DeploymentType, status.Options{})
	require.NoError(t, err)
	pass := func() {
		_, _ = sched.Reconcile(ctx, key) // a Conflict with the Syncer's write is retried next time
		_, _ = collector.Reconcile(ctx, key)
	}
	member := func(m string) *unstructured.Unstructured {
		u, err := f.members[m].Get(ctx, deployments, key.Namespace, key.Name)
		if err != nil {
			return nil
		}
		return u
	}
	replicas := func(m string) int64 {
		u := member(m)
		if u == nil {
			return -1
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n
	}
	// kubelet plays m's Deployment controller: every replica of its spec is available.
	kubelet := func(m string) {
		t.Helper()
		eventually(t, func() bool {
			u := member(m)
			if u == nil {
				return false
			}
			n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			u.Object["status"] = map[string]any{"observedGeneration": u.GetGeneration(), "replicas": n,
				"updatedReplicas": n, "readyReplicas": n, "availableReplicas": n}
			_, err := f.members[m].UpdateStatus(ctx, deployments, u)
			return err == nil
		}, m+": status written")
	}
	evictions := func() []federation.Eviction {
		u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		if obj.Status.Schedule == nil {
			return nil
		}
		return obj.Status.Schedule.Evictions
	}

	eventually(t, func() bool { pass(); return replicas("m1") == 2 && replicas("m2") == 2 }, "2 replicas in each member")
	kubelet("m1")
	kubelet("m2")

	cl, err := f.host.Get(ctx, federation.ClusterGVR, "", "m2")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(cl.Object, []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}, "spec", "taints"))
	_, err = f.host.Update(ctx, federation.ClusterGVR, cl)
	require.NoError(t, err)
	eventually(t, func() bool { pass(); return replicas("m1") == 4 }, "m1 gets m2's replicas")
	ev := evictions()
	require.Len(t, ev, 1)
	require.Equal(t, "m2", ev[0].Cluster)
	require.Equal(t, federation.EvictionTaint, ev[0].Reason)
	require.EqualValues(t, 2, ev[0].Keep)
	for range 5 {
		pass()
		require.EqualValues(t, 2, replicas("m2"), "m2 keeps its copy while m1's replacements are not available")
	}

	kubelet("m1")
	eventually(t, func() bool { pass(); return member("m2") == nil }, "m2's copy is removed once m1 reports 4 available")
	require.Empty(t, evictions())
	require.EqualValues(t, 4, replicas("m1"))
}
