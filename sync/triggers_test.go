package sync_test

import (
	"slices"
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

const triggerApp = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    metadata: {labels: {app: frontend}}
    spec:
      replicas: 2
      selector: {matchLabels: {app: frontend}}
      template:
        metadata: {labels: {app: frontend}}
        spec:
          containers: [{name: nginx, image: "nginx:1.21"}]
  placement:
    clusters: [{name: aws}, {name: gcp}]
`

// TestWatchMembersGivesOwnQueueTheDriftTrigger: an embedder driving Reconcile from its own
// queue gets the federated object's key when a member object drifts or is deleted in a
// member, and not for a member object sync does not manage; the pass that key starts puts the
// member back.
func TestWatchMembersGivesOwnQueueTheDriftTrigger(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), triggerApp)
	e.reconcile(t)

	var mu gosync.Mutex
	var queue []federation.Key
	remove, ok := e.s.WatchMembers(func(k federation.Key) {
		mu.Lock()
		defer mu.Unlock()
		queue = append(queue, k)
	})
	require.True(t, ok, "the fake fleet has member caches")
	defer remove()
	take := func() []federation.Key {
		mu.Lock()
		defer mu.Unlock()
		q := queue
		queue = nil
		return slices.Compact(q)
	}

	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(7), "spec", "replicas"))
	}))
	require.Equal(t, []federation.Key{key}, take(), "keys queued by the drift")
	for _, k := range []federation.Key{key} {
		_, err := e.s.Reconcile(ctx, k)
		require.NoError(t, err)
	}
	require.Equal(t, int64(2), replicas(e.member(t, "aws")), "the drift is corrected by the queued pass")
	take() // sync's own write is a change too

	require.NoError(t, e.cluster(t, "gcp").DriftDelete(deployments, key.Namespace, key.Name))
	require.Equal(t, []federation.Key{key}, take(), "keys queued by the deletion")

	e.mustCreate(t, e.cluster(t, "gcp"), deployments, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "someone-elses", "namespace": "production"}}})
	require.Empty(t, take(), "a member object sync does not manage queues nothing")

	remove()
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(9), "spec", "replicas"))
	}))
	require.Empty(t, take(), "nothing is queued after remove")
}

func TestClusterChanged(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": "aws", "labels": map[string]any{"region": "us"}},
			"spec":     map[string]any{"apiEndpoint": "https://aws"},
			"status": map[string]any{"lastHeartbeatTime": "2026-12-01T00:00:00Z", "conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "message": "ok"}}},
		}}
	}
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"heartbeat", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "2026-12-01T00:01:00Z", "status", "lastHeartbeatTime")
		}, false},
		{"condition message", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "True", "message": "still ok"}}, "status", "conditions")
		}, false},
		{"not ready", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "False"}}, "status", "conditions")
		}, true},
		{"label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"region": "eu"}) }, true},
		{"spec", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "https://aws-2", "spec", "apiEndpoint")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := base(), base()
			tc.change(cur)
			require.Equal(t, tc.want, fedsync.ClusterChanged(old, cur))
		})
	}
}
