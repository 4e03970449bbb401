package kube_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// TestClusterSetOnFakeHost runs a ClusterSet whose host is fake.Cluster: the host side of a
// control plane can be in memory while its members are real. The members here are never
// contacted (clients connect lazily), so no API server is needed. A partition of the host
// stops updates but keeps the clients the set has.
func TestClusterSetOnFakeHost(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	host := fake.NewHost("host")
	tokenData := func(s string) map[string]any {
		return map[string]any{"token": base64.StdEncoding.EncodeToString([]byte(s))}
	}
	secret := object("v1", "Secret", "fedkit-system", "creds")
	secret.SetLabels(map[string]string{federation.SecretClusterLabel: "eu"})
	secret.Object["data"] = tokenData("t1")
	usSecret := object("v1", "Secret", "fedkit-system", "us-creds")
	usSecret.SetLabels(map[string]string{federation.SecretClusterLabel: "us"})
	usSecret.Object["data"] = tokenData("t1")
	eu := object(federation.CoreGroupVersion.String(), "Cluster", "", "eu")
	eu.Object["spec"] = map[string]any{"apiEndpoint": "https://eu.example.com", "secretRef": map[string]any{"name": "creds"}}
	require.NoError(t, host.Seed(secret, usSecret, eu))

	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()

	var first federation.ClusterClient
	require.Eventually(t, func() bool { first, err = set.Client("eu"); return err == nil }, 10*time.Second, 10*time.Millisecond)

	// A Secret change through the host's API rebuilds the client.
	s, err := host.Get(ctx, federation.SecretGVR, "fedkit-system", "creds")
	require.NoError(t, err)
	s.Object["data"] = tokenData("t2")
	_, err = host.Update(ctx, federation.SecretGVR, s)
	require.NoError(t, err)
	require.Eventually(t, func() bool { c, err := set.Client("eu"); return err == nil && c != first }, 10*time.Second, 10*time.Millisecond)

	// A second Cluster, then a relabel (no rebuild), then deletion.
	us := object(federation.CoreGroupVersion.String(), "Cluster", "", "us")
	us.Object["spec"] = map[string]any{"apiEndpoint": "https://us.example.com", "secretRef": map[string]any{"name": "us-creds"}}
	_, err = host.Create(ctx, federation.ClusterGVR, us)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := set.Client("us"); return err == nil }, 10*time.Second, 10*time.Millisecond)
	before, err := set.Client("us")
	require.NoError(t, err)
	require.NoError(t, host.Drift(federation.ClusterGVR, "", "us", func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{"tier": "prod"})
	}))
	require.NoError(t, host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := set.Client("eu")
		return errors.Is(err, federation.ErrClusterNotFound)
	}, 10*time.Second, 10*time.Millisecond)
	after, err := set.Client("us")
	require.NoError(t, err)
	require.Same(t, before, after, "a label change does not rebuild")

	// A partitioned host: the set keeps what it has. The host ends its watches at once; wait
	// until Run's informers have tried to watch again (and failed: the fake records every
	// call, failed ones included).
	host.ClearActions()
	host.Partition()
	require.Eventually(t, func() bool {
		for _, a := range host.Actions() {
			if a.Verb == fake.VerbWatch {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "Run's informers watch again")
	_, err = set.Client("us")
	require.NoError(t, err)

	cancel()
	require.NoError(t, <-done)
}
