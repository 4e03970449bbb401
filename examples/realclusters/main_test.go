package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, "host", "a", "b"))
}

// syncBuffer is a bytes.Buffer safe for the program's goroutine and the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRealClusters runs the program as a user would, against a host and two members on real
// API servers named by the contexts of a kubeconfig: it installs the CRDs, registers the
// members, runs the control plane, and its demo ConfigMap reaches both members and Ready;
// then it stops cleanly.
func TestRealClusters(t *testing.T) {
	env := testenv.Shared(t)
	kc, err := env.Kubeconfig()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, kc, 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-kubeconfig", path, "-host-context", "host", "-contexts", "a,b", "-install-crds", "-demo"}, &out, &logs)
	}()
	const want = "fedkit-demo/hello: Scheduled=True Propagated=True Ready=True clusters=[a b]"
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(out.String(), want) {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v\noutput:\n%s\nlogs:\n%s", err, out.String(), logs.String())
		case <-deadline:
			t.Fatalf("no %q after 2 minutes\noutput:\n%s\nlogs:\n%s", want, out.String(), logs.String())
		case <-tick.C:
		}
	}
	cancel()
	require.NoError(t, <-done, logs.String())
}

// Bad flags and an unusable kubeconfig fail before anything runs.
func TestRealClustersUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"missing kubeconfig", []string{"-kubeconfig", missing}, "no such file"},
		{"unknown member context", []string{"-kubeconfig", kubeconfigFile(t, "host"), "-host-context", "host", "-contexts", "a"}, `no context "a"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, io.Discard, io.Discard)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// kubeconfigFile writes a kubeconfig with contexts of the given names and no server behind.
func kubeconfigFile(t *testing.T, names ...string) string {
	t.Helper()
	var clusters, contexts string
	for _, name := range names {
		clusters += fmt.Sprintf("- {name: %s, cluster: {server: \"https://%s.example.com\"}}\n", name, name)
		contexts += fmt.Sprintf("- {name: %s, context: {cluster: %s, user: u}}\n", name, name)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\nclusters:\n"+clusters+"users: [{name: u, user: {token: x}}]\ncontexts:\n"+contexts), 0o600))
	return path
}

// TestRealClustersReplicas: -leader-elect and -shards run the control plane as one of several
// replicas: it takes the election Lease, or the shard Leases, on the host.
func TestRealClustersReplicas(t *testing.T) {
	env := testenv.Shared(t)
	kc, err := env.Kubeconfig()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, kc, 0o600))
	host, err := kube.New(env.Config("host"), kube.Options{})
	require.NoError(t, err)
	leases := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	for _, tt := range []struct {
		name   string
		flags  []string
		leases []string
	}{
		{"leader election", []string{"-leader-elect"}, []string{"fedkit-controlplane"}},
		{"sharding", []string{"-shards", "2"}, []string{"fedkit-shard-0", "fedkit-shard-1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var logs syncBuffer
			done := make(chan error, 1)
			args := append([]string{"-kubeconfig", path, "-host-context", "host", "-contexts", "a,b", "-install-crds"}, tt.flags...)
			go func() { done <- run(ctx, args, io.Discard, &logs) }()
			for _, name := range tt.leases {
				require.Eventually(t, func() bool {
					u, err := host.Get(ctx, leases, kube.DefaultNamespace, name)
					if err != nil {
						return false
					}
					holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
					return holder != ""
				}, time.Minute, 50*time.Millisecond, "Lease %s/%s held\nlogs:\n%s", kube.DefaultNamespace, name, &logs)
			}
			cancel()
			require.NoError(t, <-done, logs.String())
		})
	}
}
