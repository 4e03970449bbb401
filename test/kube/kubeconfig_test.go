package kube_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/testenv"
)

// TestKubeconfigSetAgainstRealServer builds a static set from a kubeconfig with a context per
// real cluster and reads through its clients and a cached reader.
func TestKubeconfigSetAgainstRealServer(t *testing.T) {
	env := testenv.Shared(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var clusters, users, contexts string
	for _, name := range []string{hostName, memberName} {
		cfg := env.Config(name)
		clusters += fmt.Sprintf("- {name: %s, cluster: {server: %q, certificate-authority-data: %q}}\n", name, cfg.Host, base64.StdEncoding.EncodeToString(cfg.CAData))
		users += fmt.Sprintf("- {name: %s, user: {token: %q}}\n", name, cfg.BearerToken)
		contexts += fmt.Sprintf("- {name: %s, context: {cluster: %s, user: %s}}\n", name, name, name)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\nclusters:\n"+clusters+"users:\n"+users+"contexts:\n"+contexts), 0o600))

	set, err := kube.ClusterSetFromKubeconfig(path, kube.ClusterSetOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{hostName, memberName}, set.Names())

	marker := object("v1", "ConfigMap", "default", "kubeconfig-marker")
	marker.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue})
	m, err := set.Client(memberName)
	require.NoError(t, err)
	_, err = m.Create(ctx, configMapsGVR, marker)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	var r federation.Reader
	require.Eventually(t, func() bool { r, err = set.CachedReader(memberName, configMapsGVR); return err == nil }, 10*time.Second, 10*time.Millisecond)
	_, err = r.Get(ctx, configMapsGVR, "default", "kubeconfig-marker")
	require.NoError(t, err)
	h, err := set.CachedReader(hostName, configMapsGVR)
	require.NoError(t, err)
	l, err := h.List(ctx, configMapsGVR, "default", metav1.ListOptions{})
	require.NoError(t, err)
	for _, u := range l.Items {
		require.NotEqual(t, "kubeconfig-marker", u.GetName(), "the host has its own objects")
	}
	cancel()
	require.NoError(t, <-done)
}
