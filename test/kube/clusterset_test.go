package kube_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/testenv"
)

// connectProxy is an HTTP CONNECT proxy on 127.0.0.1 that counts the tunnels it opens.
type connectProxy struct {
	url     string
	tunnels atomic.Int64
}

func startProxy(t *testing.T) *connectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &connectProxy{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || !strings.HasPrefix(r.Host, "127.0.0.1:") {
			http.Error(w, "CONNECT to 127.0.0.1 only", http.StatusForbidden)
			return
		}
		dst, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		p.tunnels.Add(1)
		w.WriteHeader(http.StatusOK)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			dst.Close()
			return
		}
		go func() { _, _ = io.Copy(dst, conn); dst.Close() }()
		_, _ = io.Copy(conn, dst)
		conn.Close()
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// TestClusterSetAgainstRealServers registers the member with the host in several ways (token,
// kubeconfig, proxy, TLS settings), runs the set, and uses the members' clients and cached
// readers, as a federation control plane would.
func TestClusterSetAgainstRealServers(t *testing.T) {
	host, env := hostClient(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	member := env.Config(memberName)
	token := member.BearerToken
	ca := member.CAData
	proxy := startProxy(t)

	var logMu gosync.Mutex
	var logs strings.Builder
	logger := funcr.New(func(prefix, args string) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintln(&logs, prefix, args)
	}, funcr.Options{Verbosity: 10})

	// Namespaces, Secrets and a marker ConfigMap that exists on the member only.
	ns := "fedkit-system"
	_, err := host.Create(ctx, namespacesGVR, object("v1", "Namespace", "", ns))
	require.NoError(t, err)
	memberClient, err := kube.New(member, kube.Options{})
	require.NoError(t, err)
	_, err = memberClient.Create(ctx, configMapsGVR, object("v1", "ConfigMap", "default", "i-am-the-member"))
	require.NoError(t, err)

	// secret writes the Secret name, bound to the Cluster cluster.
	secret := func(name, cluster string, data map[string]string) {
		s := object("v1", "Secret", ns, name)
		s.SetLabels(map[string]string{federation.SecretClusterLabel: cluster})
		d := map[string]any{}
		for k, v := range data {
			d[k] = base64.StdEncoding.EncodeToString([]byte(v))
		}
		s.Object["data"] = d
		if _, err := host.Create(ctx, federation.SecretGVR, s); apierrors.IsAlreadyExists(err) {
			cur, err := host.Get(ctx, federation.SecretGVR, ns, name)
			require.NoError(t, err)
			cur.Object["data"] = d
			_, err = host.Update(ctx, federation.SecretGVR, cur)
			require.NoError(t, err)
		} else {
			require.NoError(t, err)
		}
	}
	cluster := func(name string, spec map[string]any) {
		u := object(federation.CoreGroupVersion.String(), "Cluster", "", name)
		u.Object["spec"] = spec
		_, err := host.Create(ctx, federation.ClusterGVR, u)
		require.NoError(t, err)
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://ignored.invalid", certificate-authority-data: %q}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: c, context: {cluster: m, user: u}}]
current-context: c
`, base64.StdEncoding.EncodeToString(ca), token)

	// Each Cluster has its Secret, bound to it (federation.SecretClusterLabel).
	for _, name := range []string{"by-token", "via-proxy", "untrusted", "insecure"} {
		secret(name, name, map[string]string{"token": token})
	}
	secret("kubeconfig", "by-kubeconfig", map[string]string{"kubeconfig": kubeconfig})
	cb := base64.StdEncoding.EncodeToString(ca)
	cluster("by-token", map[string]any{"apiEndpoint": member.Host, "caBundle": cb, "secretRef": map[string]any{"name": "by-token"}})
	cluster("by-kubeconfig", map[string]any{"apiEndpoint": member.Host, "secretRef": map[string]any{"name": "kubeconfig"}})
	cluster("via-proxy", map[string]any{"apiEndpoint": member.Host, "caBundle": cb, "secretRef": map[string]any{"name": "via-proxy"}, "proxyURL": proxy.url})
	cluster("untrusted", map[string]any{"apiEndpoint": member.Host, "secretRef": map[string]any{"name": "untrusted"}})
	cluster("insecure", map[string]any{"apiEndpoint": member.Host, "secretRef": map[string]any{"name": "insecure"}, "insecureSkipTLSVerify": true})
	cluster("no-secret", map[string]any{"apiEndpoint": member.Host, "secretRef": map[string]any{"name": "absent"}})

	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Namespace: ns, Logger: logger})
	require.NoError(t, err)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- set.Run(ctx) }()
	ready := func(name string) bool { _, err := set.Client(name); return err == nil }
	require.Eventually(t, func() bool {
		return ready("by-token") && ready("by-kubeconfig") && ready("via-proxy") && ready("untrusted") && ready("insecure")
	}, 30*time.Second, 50*time.Millisecond)
	t.Logf("five clients built %s after Run started", time.Since(start).Round(time.Millisecond))

	t.Run("members reach the member", func(t *testing.T) {
		for _, name := range []string{"by-token", "by-kubeconfig", "via-proxy", "insecure"} {
			c, err := set.Client(name)
			require.NoError(t, err)
			_, err = c.Get(ctx, configMapsGVR, "default", "i-am-the-member")
			require.NoError(t, err, name)
			require.NoError(t, c.(federation.HealthChecker).Healthy(ctx), name)
		}
		require.Positive(t, proxy.tunnels.Load(), "the proxied cluster went through the proxy")
		_, err := host.Get(ctx, configMapsGVR, "default", "i-am-the-member")
		require.True(t, apierrors.IsNotFound(err), "the marker is on the member only")
	})

	t.Run("TLS verification is on by default", func(t *testing.T) {
		c, err := set.Client("untrusted")
		require.NoError(t, err)
		_, err = c.Get(ctx, configMapsGVR, "default", "i-am-the-member")
		require.Error(t, err)
		require.True(t, errors.Is(err, federation.ErrUnreachable), "an untrusted certificate: %v", err)
		require.Contains(t, err.Error(), "certificate")
	})

	t.Run("another cluster's Secret is refused", func(t *testing.T) {
		// Whoever may write Clusters points one at by-token's Secret and at a server of
		// their own: no client is built, so the token is never sent there.
		cluster("deputy", map[string]any{"apiEndpoint": "https://127.0.0.1:1", "secretRef": map[string]any{"name": "by-token"}})
		require.Eventually(t, func() bool {
			_, err := set.Client("deputy")
			return errors.Is(err, federation.ErrClusterNotReady) && errors.Is(err, kube.ErrInvalidCredentials) &&
				strings.Contains(err.Error(), `is for Cluster "by-token", not "deputy"`)
		}, 10*time.Second, 50*time.Millisecond)
	})

	t.Run("a missing Secret is not ready", func(t *testing.T) {
		require.Eventually(t, func() bool {
			_, err := set.Client("no-secret")
			return errors.Is(err, federation.ErrClusterNotReady) && errors.Is(err, kube.ErrInvalidCredentials)
		}, 10*time.Second, 50*time.Millisecond)
		secret("absent", "no-secret", map[string]string{"token": token})
		require.Eventually(t, func() bool { return ready("no-secret") }, 10*time.Second, 50*time.Millisecond, "creating the Secret makes it ready")
	})

	t.Run("cached reader sees managed objects only", func(t *testing.T) {
		managed := object("v1", "ConfigMap", "default", "managed")
		managed.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue, "app": "web"})
		_, err := memberClient.Create(ctx, configMapsGVR, managed)
		require.NoError(t, err)
		r, err := set.CachedReader("by-token", configMapsGVR)
		require.NoError(t, err)
		got, err := r.Get(ctx, configMapsGVR, "default", "managed")
		require.NoError(t, err)
		require.Equal(t, "web", got.GetLabels()["app"])
		_, err = r.Get(ctx, configMapsGVR, "default", "i-am-the-member")
		require.True(t, apierrors.IsNotFound(err), "unmanaged: %v", err)

		later := object("v1", "ConfigMap", "default", "later")
		later.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue, "app": "db"})
		_, err = memberClient.Create(ctx, configMapsGVR, later)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			l, err := r.List(ctx, configMapsGVR, "default", metav1.ListOptions{LabelSelector: "app in (web,db)"})
			return err == nil && len(l.Items) == 2
		}, 10*time.Second, 50*time.Millisecond, "the cache follows the member")
	})

	t.Run("member change handlers see every federation's managed objects", func(t *testing.T) {
		var mu gosync.Mutex
		var seen []string
		remove := set.OnMemberChange(configMapsGVR, func(cluster string, obj *unstructured.Unstructured) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, cluster+":"+obj.GetName()+":"+obj.GetResourceVersion())
		})
		defer remove()
		saw := func(prefix string) bool {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range seen {
				if strings.HasPrefix(s, prefix) {
					return true
				}
			}
			return false
		}
		theirs := object("v1", "ConfigMap", "default", "theirs")
		theirs.SetLabels(map[string]string{federation.ManagedByLabel: "another-federation"})
		created, err := memberClient.Create(ctx, configMapsGVR, theirs)
		require.NoError(t, err)
		mine := object("v1", "ConfigMap", "default", "not-managed")
		_, err = memberClient.Create(ctx, configMapsGVR, mine)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return saw("by-token:theirs:" + created.GetResourceVersion()) }, 10*time.Second, 10*time.Millisecond)
		r, err := set.CachedReader("by-token", configMapsGVR)
		require.NoError(t, err)
		_, err = r.Get(ctx, configMapsGVR, "default", "theirs")
		require.NoError(t, err, "any ManagedByLabel value is cached")

		require.NoError(t, memberClient.Delete(ctx, configMapsGVR, "default", "theirs", metav1.DeleteOptions{}))
		require.Eventually(t, func() bool {
			_, err := r.Get(ctx, configMapsGVR, "default", "theirs")
			return apierrors.IsNotFound(err)
		}, 10*time.Second, 10*time.Millisecond)
		// The informer updates its store before it hands the deletion to the handlers, so the
		// cached NotFound can come before the notification: wait for it.
		theirsSeen := func() []string {
			mu.Lock()
			defer mu.Unlock()
			var out []string
			for _, s := range seen {
				if strings.HasPrefix(s, "by-token:theirs:") {
					out = append(out, s)
				}
			}
			return out
		}
		require.Eventually(t, func() bool { return len(theirsSeen()) >= 2 }, 10*time.Second, 10*time.Millisecond,
			"added, then deleted in its last state")
		require.Len(t, theirsSeen(), 2, "added, then deleted in its last state")
		require.False(t, saw("by-token:not-managed"), "an unmanaged object is not reported")
	})

	t.Run("rotated credentials rebuild the client", func(t *testing.T) {
		before, err := set.Client("by-token")
		require.NoError(t, err)
		secret("by-token", "by-token", map[string]string{"token": "revoked-" + token})
		var after federation.ClusterClient
		require.Eventually(t, func() bool {
			after, err = set.Client("by-token")
			return err == nil && after != before
		}, 10*time.Second, 50*time.Millisecond)
		_, err = after.Get(ctx, configMapsGVR, "default", "i-am-the-member")
		require.True(t, apierrors.IsUnauthorized(err), "the new, wrong token is used: %v", err)
		require.NotContains(t, err.Error(), token)
		secret("by-token", "by-token", map[string]string{"token": token})
		require.Eventually(t, func() bool {
			c, err := set.Client("by-token")
			if err != nil {
				return false
			}
			_, err = c.Get(ctx, configMapsGVR, "default", "i-am-the-member")
			return err == nil
		}, 10*time.Second, 50*time.Millisecond)
	})

	t.Run("deleting a Cluster releases it", func(t *testing.T) {
		r, err := set.CachedReader("insecure", configMapsGVR)
		require.NoError(t, err)
		_, err = r.Get(ctx, configMapsGVR, "default", "managed")
		require.NoError(t, err)
		require.NoError(t, host.Delete(ctx, federation.ClusterGVR, "", "insecure", metav1.DeleteOptions{}))
		require.Eventually(t, func() bool {
			_, err := set.Client("insecure")
			return errors.Is(err, federation.ErrClusterNotFound)
		}, 10*time.Second, 50*time.Millisecond)
		_, err = r.Get(ctx, configMapsGVR, "default", "managed")
		require.ErrorIs(t, err, federation.ErrClusterNotFound)
	})

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	require.NotContains(t, out, token, "credentials leaked into the logs")
	require.Contains(t, out, "TLS verification is OFF")
}

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
