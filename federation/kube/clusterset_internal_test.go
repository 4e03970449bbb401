package kube

import (
	"context"
	"encoding/base64"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// TestReconcileConcurrentInstallsTheNewest: two Reconciles of one cluster used to compare
// fingerprints and install without holding anything, so one that had read the older Secret
// could install its client after one that had read the newer Secret, and the stale
// credentials stayed. The fake host holds the first Reconcile's Secret read back while the
// Secret changes and a second Reconcile starts.
func TestReconcileConcurrentInstallsTheNewest(t *testing.T) {
	ctx := t.Context()
	host := fake.NewHost("host")
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": DefaultNamespace}}}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": federation.CoreGroupVersion.String(), "kind": "Cluster", "metadata": map[string]any{"name": "eu"},
		"spec": map[string]any{"apiEndpoint": "https://eu.example.com", "secretRef": map[string]any{"name": "creds"}},
	}}
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "namespace": DefaultNamespace,
			"labels": map[string]any{federation.SecretClusterLabel: "eu"}},
		"data": map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("old"))},
	}}
	require.NoError(t, host.Seed(ns, cluster, secret))

	held, release := make(chan struct{}), make(chan struct{})
	var secretGets atomic.Int32
	host.SetHooks(fake.Hooks{Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
		u, err := next.Get(ctx, gvr, namespace, name)
		if gvr == federation.SecretGVR && secretGets.Add(1) == 1 {
			close(held) // read, not yet returned
			<-release
		}
		return u, err
	}})
	set, err := NewClusterSet(host, ClusterSetOptions{})
	require.NoError(t, err)
	contended := make(chan struct{})
	set.locks.contended = func(string) { close(contended) }
	key := federation.Key{Name: "eu"}

	first := make(chan error, 1)
	go func() { _, err := set.Reconcile(ctx, key); first <- err }()
	<-held // the first Reconcile is reading the old Secret

	s, err := host.Get(ctx, federation.SecretGVR, DefaultNamespace, "creds")
	require.NoError(t, err)
	s.Object["data"] = map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("new"))}
	s, err = host.Update(ctx, federation.SecretGVR, s)
	require.NoError(t, err)

	second := make(chan error, 1)
	go func() { _, err := set.Reconcile(ctx, key); second <- err }()
	var secondErr error
	secondDone := false
	select {
	case <-contended: // the second waits for the first
	case secondErr = <-second: // the second ran alongside the first and finished first
		secondDone = true
	}
	close(release)
	require.NoError(t, <-first)
	if !secondDone {
		secondErr = <-second
	}
	require.NoError(t, secondErr)

	set.mu.Lock()
	got := set.members["eu"].secretVersion
	set.mu.Unlock()
	require.Equal(t, s.GetResourceVersion(), got, "the client must be built from the newest Secret")
}

func TestKeyedMutexHonoursContext(t *testing.T) {
	var k keyedMutex
	unlock, err := k.lock(t.Context(), "a")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = k.lock(ctx, "a")
	require.ErrorIs(t, err, context.Canceled)
	other, err := k.lock(ctx, "b")
	require.NoError(t, err, "another key is free")
	other()
	unlock()
	again, err := k.lock(ctx, "a")
	require.NoError(t, err)
	again()
	require.Empty(t, k.locks, "unused locks are dropped")
}

// The Secret informer keeps no credentials: not the data, not a copy of it in
// kubectl's last-applied-configuration annotation, not managedFields; it keeps what Run needs
// to notice a change and check the binding (name, resourceVersion, labels).
func TestDropSecretData(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": "eu-creds", "namespace": "fedkit-system", "resourceVersion": "7",
			"labels": map[string]any{federation.SecretClusterLabel: "eu"},
			"annotations": map[string]any{
				"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"token":"c2VjcmV0"}}`,
			},
			"managedFields": []any{map[string]any{"manager": "kubectl", "fieldsV1": map[string]any{"f:data": map[string]any{"f:token": map[string]any{}}}}},
		},
		"data":       map[string]any{"token": "c2VjcmV0"},
		"stringData": map[string]any{"token": "secret"},
		"type":       "Opaque",
	}}
	dropSecretData(u)
	want := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": "eu-creds", "namespace": "fedkit-system", "resourceVersion": "7",
			"labels": map[string]any{federation.SecretClusterLabel: "eu"},
		},
		"type": "Opaque",
	}
	if diff := cmp.Diff(want, u.Object); diff != "" {
		t.Errorf("cached Secret (-want +got):\n%s", diff)
	}
}
