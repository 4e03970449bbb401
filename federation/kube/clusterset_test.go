package kube_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// logSink collects every log line, so tests can check that no credential was logged.
type logSink struct {
	mu    gosync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func clusterObject(name, endpoint, secret string) *unstructured.Unstructured {
	spec := map[string]any{"apiEndpoint": endpoint}
	if secret != "" {
		spec["secretRef"] = map[string]any{"name": secret}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1",
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// secretObject is a Secret holding data; cluster, when set, is the Cluster it is bound to (its
// federation.SecretClusterLabel).
func secretObject(namespace, name, cluster string, data map[string]string) *unstructured.Unstructured {
	d := map[string]any{}
	for k, v := range data {
		d[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	meta := map[string]any{"name": name, "namespace": namespace}
	if cluster != "" {
		meta["labels"] = map[string]any{federation.SecretClusterLabel: cluster}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   meta,
		"data":       d,
	}}
}

// fakeHost returns a host ClusterClient on client-go's dynamic fake.
func fakeHost(objs ...runtime.Object) *kube.Client {
	c, err := kube.New(nil, kube.Options{Dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{federation.ClusterGVR: "ClusterList", federation.SecretGVR: "SecretList"}, objs...)})
	if err != nil {
		panic(err) // cannot happen: a dynamic client and no rest.Config
	}
	return c
}

func clientOf(t *testing.T, set *kube.ClusterSet, name string) *kube.Client {
	t.Helper()
	c, err := set.Client(name)
	require.NoError(t, err)
	return c.(*kube.Client)
}

// TestReconcile walks one Cluster through its life: unknown, no Secret, ready, relabelled,
// new credentials, new endpoint, bad credentials, being deleted, deleted.
func TestReconcile(t *testing.T) {
	ctx := t.Context()
	logs := &logSink{}
	host := fakeHost()
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Logger: logs.logger()})
	require.NoError(t, err)
	key := federation.Key{Name: "eu"}
	reconcile := func() error {
		res, err := set.Reconcile(ctx, key)
		require.Equal(t, federation.Result{}, res)
		return err
	}
	update := func(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
		_, err := host.Update(ctx, gvr, u)
		require.NoError(t, err)
	}

	// Unknown.
	require.NoError(t, reconcile())
	_, err = set.Client("eu")
	require.ErrorIs(t, err, federation.ErrClusterNotFound)

	// Known, but its Secret does not exist.
	cluster, err := host.Create(ctx, federation.ClusterGVR, clusterObject("eu", "https://eu.example.com", "eu-creds"))
	require.NoError(t, err)
	err = reconcile()
	require.True(t, federation.IsTerminal(err), "missing Secret is terminal until something changes: %v", err)
	_, err = set.Client("eu")
	require.ErrorIs(t, err, federation.ErrClusterNotReady)
	require.ErrorIs(t, err, kube.ErrInvalidCredentials)
	require.Contains(t, err.Error(), "fedkit-system/eu-creds does not exist")
	require.Equal(t, []string{"eu"}, set.Names())

	// Ready.
	secret, err := host.Create(ctx, federation.SecretGVR, secretObject("fedkit-system", "eu-creds", "eu", map[string]string{"token": token}))
	require.NoError(t, err)
	require.NoError(t, reconcile())
	first := clientOf(t, set, "eu")

	// Labels, region and status do not rebuild the client.
	cluster.SetLabels(map[string]string{"tier": "prod"})
	_ = unstructured.SetNestedField(cluster.Object, "eu-west-1", "spec", "region")
	update(federation.ClusterGVR, cluster)
	require.NoError(t, reconcile())
	require.Same(t, first, clientOf(t, set, "eu"))

	// New credentials rebuild it.
	_ = unstructured.SetNestedField(secret.Object, base64.StdEncoding.EncodeToString([]byte(token+"-2")), "data", "token")
	update(federation.SecretGVR, secret)
	require.NoError(t, reconcile())
	second := clientOf(t, set, "eu")
	require.NotSame(t, first, second)

	// So does a new endpoint.
	_ = unstructured.SetNestedField(cluster.Object, "https://eu2.example.com", "spec", "apiEndpoint")
	update(federation.ClusterGVR, cluster)
	require.NoError(t, reconcile())
	third := clientOf(t, set, "eu")
	require.NotSame(t, second, third)

	// Bad credentials: not ready, and the token appears nowhere.
	_ = unstructured.SetNestedField(secret.Object, map[string]any{
		"kubeconfig": base64.StdEncoding.EncodeToString([]byte("users: [{name: u, user: {token: " + token + "}]\n  ]: [")),
	}, "data")
	update(federation.SecretGVR, secret)
	err = reconcile()
	require.True(t, federation.IsTerminal(err))
	require.ErrorIs(t, err, kube.ErrInvalidCredentials)
	require.NotContains(t, err.Error(), token)
	_, err = set.Client("eu")
	require.ErrorIs(t, err, federation.ErrClusterNotReady)
	require.NotContains(t, err.Error(), token)
	// The same reason again is not logged again.
	before := strings.Count(logs.String(), "Cluster is not ready")
	require.Error(t, reconcile())
	require.Equal(t, before, strings.Count(logs.String(), "Cluster is not ready"))

	// Good credentials again, then the Cluster is being deleted: the client stays, so loops
	// can clean up behind their finalizers.
	_ = unstructured.SetNestedField(secret.Object, map[string]any{"token": base64.StdEncoding.EncodeToString([]byte(token))}, "data")
	update(federation.SecretGVR, secret)
	require.NoError(t, reconcile())
	ready := clientOf(t, set, "eu")
	now := metav1.Now()
	cluster, err = host.Get(ctx, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	cluster.SetDeletionTimestamp(&now)
	cluster.SetFinalizers([]string{"example.com/hold"})
	update(federation.ClusterGVR, cluster)
	require.NoError(t, reconcile())
	require.Same(t, ready, clientOf(t, set, "eu"))

	// Deleted: released.
	require.NoError(t, host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	require.NoError(t, reconcile())
	_, err = set.Client("eu")
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
	require.Empty(t, set.Names())

	out := logs.String()
	require.NotContains(t, out, token, "credentials leaked into the logs")
	for _, want := range []string{"Built the cluster's client", "Rebuilt the cluster's client", "Cluster is not ready", "Released the client"} {
		require.Contains(t, out, want)
	}
}

func TestReconcileNotReadyReasons(t *testing.T) {
	tests := []struct {
		name    string
		objs    []runtime.Object
		wantErr error
		errHas  string
	}{{
		name:    "no secretRef",
		objs:    []runtime.Object{clusterObject("eu", "https://eu.example.com", "")},
		wantErr: kube.ErrInvalidCredentials, errHas: "spec.secretRef is not set",
	}, {
		name: "Secret in another namespace does not count",
		objs: []runtime.Object{clusterObject("eu", "https://eu.example.com", "creds"),
			secretObject("default", "creds", "eu", map[string]string{"token": token})},
		wantErr: kube.ErrInvalidCredentials, errHas: "fedkit-system/creds does not exist",
	}, {
		name: "Secret that does not decode",
		objs: []runtime.Object{clusterObject("eu", "https://eu.example.com", "creds"), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "namespace": "fedkit-system",
				"labels": map[string]any{federation.SecretClusterLabel: "eu"}},
			"data": map[string]any{"token": "%%" + token},
		}}},
		wantErr: kube.ErrInvalidCredentials, errHas: "does not decode",
	}, {
		name: "http endpoint",
		objs: []runtime.Object{clusterObject("eu", "http://eu.example.com", "creds"),
			secretObject("fedkit-system", "creds", "eu", map[string]string{"token": token})},
		wantErr: kube.ErrInvalidConfig, errHas: "https",
	}, {
		// Whoever may write a Cluster must not get another cluster's token sent to a server
		// of their choosing by pointing secretRef at that cluster's Secret.
		name: "Secret bound to another Cluster",
		objs: []runtime.Object{clusterObject("eu", "https://attacker.example.com", "creds"),
			secretObject("fedkit-system", "creds", "us", map[string]string{"token": token})},
		wantErr: kube.ErrInvalidCredentials, errHas: `Secret fedkit-system/creds is for Cluster "us", not "eu"`,
	}, {
		name: "Secret bound to no Cluster",
		objs: []runtime.Object{clusterObject("eu", "https://eu.example.com", "creds"),
			secretObject("fedkit-system", "creds", "", map[string]string{"token": token})},
		wantErr: kube.ErrInvalidCredentials, errHas: `Secret fedkit-system/creds has no label federation.k8s.io/cluster=eu`,
	}, {
		name: "malformed Cluster",
		objs: []runtime.Object{&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": "eu"}, "spec": map[string]any{"apiEndpoint": int64(42)},
		}}},
		wantErr: federation.ErrInvalidObject,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := kube.NewClusterSet(fakeHost(tt.objs...), kube.ClusterSetOptions{})
			require.NoError(t, err)
			_, err = set.Reconcile(t.Context(), federation.Key{Name: "eu"})
			require.True(t, federation.IsTerminal(err), "%v", err)
			require.ErrorIs(t, err, tt.wantErr)
			_, err = set.Client("eu")
			require.ErrorIs(t, err, federation.ErrClusterNotReady)
			require.ErrorIs(t, err, tt.wantErr)
			require.Contains(t, err.Error(), tt.errHas)
			require.NotContains(t, err.Error(), token)
		})
	}
}

func TestNewClusterSetValidates(t *testing.T) {
	_, err := kube.NewClusterSet(nil, kube.ClusterSetOptions{})
	require.ErrorIs(t, err, kube.ErrInvalidConfig)
	_, err = kube.NewClusterSet(fakeHost(), kube.ClusterSetOptions{Workers: -1})
	require.ErrorIs(t, err, kube.ErrInvalidConfig)
	_, err = kube.NewClusterSet(fakeHost(), kube.ClusterSetOptions{Client: kube.Options{Burst: -1}})
	require.ErrorIs(t, err, kube.ErrInvalidConfig)
}

// TestRun drives the set from the host's watches. client-go's dynamic fake cannot resume a
// watch from a resourceVersion, so an event between the informer's List and its Watch could be
// lost; each step therefore re-touches its object until the set has noticed.
func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	logs := &logSink{}
	host := fakeHost(clusterObject("eu", "https://eu.example.com", "eu-creds"),
		secretObject("fedkit-system", "eu-creds", "eu", map[string]string{"token": token}))
	reg := prometheus.NewRegistry()
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Logger: logs.logger(), Registerer: reg})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()

	eventually := func(what string, touch func(), cond func() bool) {
		t.Helper()
		require.Eventually(t, func() bool {
			if cond() {
				return true
			}
			touch()
			return false
		}, 10*time.Second, 20*time.Millisecond, what)
	}
	touchNothing := func() {}
	eventually("the existing Cluster gets a client", touchNothing, func() bool { _, err := set.Client("eu"); return err == nil })
	first := clientOf(t, set, "eu")
	require.Positive(t, queueAdds(t, reg, "kube/clusterset"), "Run's queue reports its metrics")
	require.Positive(t, queueAdds(t, reg, "kube/clusterset"), "Run's queue reports its metrics")
	require.ErrorContains(t, set.Run(ctx), "already running")

	n := 0
	eventually("a Secret change rebuilds the client", func() {
		n++
		s := secretObject("fedkit-system", "eu-creds", "eu", map[string]string{"token": fmt.Sprintf("%s-%d", token, n)})
		_, err := host.Update(ctx, federation.SecretGVR, s)
		require.NoError(t, err)
	}, func() bool { c, err := set.Client("eu"); return err == nil && c != federation.ClusterClient(first) })

	_, err = host.Create(ctx, federation.ClusterGVR, clusterObject("us", "https://us.example.com", "us-creds"))
	require.NoError(t, err)
	eventually("a new Cluster without its Secret is not ready", func() {
		u, err := host.Get(ctx, federation.ClusterGVR, "", "us")
		require.NoError(t, err)
		u.SetLabels(map[string]string{"touch": fmt.Sprint(time.Now().UnixNano())})
		_, err = host.Update(ctx, federation.ClusterGVR, u)
		require.NoError(t, err)
	}, func() bool { _, err := set.Client("us"); return errors.Is(err, federation.ErrClusterNotReady) })

	created := false
	eventually("the Secret's creation makes it ready", func() {
		s := secretObject("fedkit-system", "us-creds", "us", map[string]string{"token": token})
		s.SetLabels(map[string]string{federation.SecretClusterLabel: "us", "touch": fmt.Sprint(time.Now().UnixNano())})
		if !created {
			_, err := host.Create(ctx, federation.SecretGVR, s)
			require.NoError(t, err)
			created = true
			return
		}
		_, err := host.Update(ctx, federation.SecretGVR, s)
		require.NoError(t, err)
	}, func() bool { _, err := set.Client("us"); return err == nil })

	require.NoError(t, host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	eventually("deleting the Cluster releases the client", touchNothing, func() bool {
		_, err := set.Client("eu")
		return errors.Is(err, federation.ErrClusterNotFound)
	})

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was canceled")
	}
	require.NotContains(t, logs.String(), token)
}

// forbiddenSecrets is a host on which the controller may not list Secrets.
type forbiddenSecrets struct{ federation.ClusterClient }

func (h forbiddenSecrets) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if gvr == federation.SecretGVR {
		return nil, apierrors.NewForbidden(gvr.GroupResource(), "", errors.New("RBAC: list not allowed"))
	}
	return h.ClusterClient.List(ctx, gvr, ns, o)
}

// TestRunCacheSyncTimeout: a host that cannot list Secrets used to stall Run without a word,
// and Run returned nil when cancelled. Now the failures are logged and Run returns an error
// naming the resource after CacheSyncTimeout on the set's clock.
func TestRunCacheSyncTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	logs := &logSink{}
	set, err := kube.NewClusterSet(forbiddenSecrets{fakeHost()}, kube.ClusterSetOptions{Clock: clk, Logger: logs.logger()})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- set.Run(t.Context()) }()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "RBAC: list not allowed") }, 10*time.Second, time.Millisecond)
	var runErr error
	require.Eventually(t, func() bool {
		clk.Step(kube.DefaultCacheSyncTimeout)
		select {
		case runErr = <-done:
			return true
		default:
			return false
		}
	}, 10*time.Second, 10*time.Millisecond)
	require.True(t, apierrors.IsForbidden(runErr), "%v", runErr)
	// It names the resource that failed and why. (Whether the Cluster cache had synced by
	// then depends on scheduling, so the test does not say.)
	require.ErrorContains(t, runErr, "secrets in fedkit-system")
	require.ErrorContains(t, runErr, "RBAC: list not allowed")
}

// queueAdds returns workqueue_adds_total of the queue named name in reg.
func queueAdds(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "workqueue_adds_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == name {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// secretReads counts the Secrets read through the host, live.
type secretReads struct {
	federation.ClusterClient
	n atomic.Int64
}

func (h *secretReads) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if gvr == federation.SecretGVR {
		h.n.Add(1)
	}
	return h.ClusterClient.Get(ctx, gvr, ns, name)
}

// queueDone is how many items Run's queue has finished.
func queueDone(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "workqueue_work_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == name {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// The cluster monitor writes every Cluster's status at each heartbeat. Within Run, such a
// write used to read the Cluster's Secret live from the host, credentials and all, every
// time; now Run reads a Secret only when the informer shows it changed (a new
// resourceVersion) or the Cluster's connection settings did.
func TestRunReadsSecretsOnlyWhenTheyChange(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	// fedkit's fake host: client-go's dynamic fake keeps no resourceVersions.
	fh := fake.NewHost("host")
	require.NoError(t, fh.Seed(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "fedkit-system"}}},
		clusterObject("eu", "https://eu.example.com", "eu-creds"), secretObject("fedkit-system", "eu-creds", "eu", map[string]string{"token": token})))
	host := &secretReads{ClusterClient: fh}
	reg := prometheus.NewRegistry()
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Registerer: reg})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	const name = "kube/clusterset"
	settled := func() bool {
		return queueAdds(t, reg, name) > 0 && float64(queueDone(t, reg, name)) >= queueAdds(t, reg, name)
	}
	require.Eventually(t, func() bool { _, err := set.Client("eu"); return err == nil && settled() }, 10*time.Second, 10*time.Millisecond)
	first := clientOf(t, set, "eu")
	reads := host.n.Load()

	for i := range 10 {
		u, err := host.Get(ctx, federation.ClusterGVR, "", "eu")
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(u.Object, fmt.Sprintf("2026-12-01T00:00:%02dZ", i), "status", "lastHeartbeatTime"))
		added := queueAdds(t, reg, name)
		_, err = host.UpdateStatus(ctx, federation.ClusterGVR, u) // as the monitor's heartbeat
		require.NoError(t, err)
		require.Eventually(t, func() bool { return queueAdds(t, reg, name) > added && settled() }, 10*time.Second, 10*time.Millisecond,
			"the status write reaches Run")
	}
	require.Equal(t, reads, host.n.Load(), "no Secret read for a Cluster status write")
	require.Same(t, first, clientOf(t, set, "eu"))

	// A new token is read, once it shows in the informer.
	_, err = host.Update(ctx, federation.SecretGVR, secretObject("fedkit-system", "eu-creds", "eu", map[string]string{"token": token + "-2"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { c, err := set.Client("eu"); return err == nil && c != federation.ClusterClient(first) }, 10*time.Second, 10*time.Millisecond)
	require.Greater(t, host.n.Load(), reads)
}

// TestReconcilePullCluster: a pull cluster gets no client (its agent reaches the host, never
// the other way round): Client says it is not found, and a Cluster turned to pull mode
// releases the client it had.
func TestReconcilePullCluster(t *testing.T) {
	pull := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "edge"}, "spec": map[string]any{"mode": "Pull"},
	}}
	set, err := kube.NewClusterSet(fakeHost(pull), kube.ClusterSetOptions{})
	require.NoError(t, err)
	_, err = set.Reconcile(t.Context(), federation.Key{Name: "edge"})
	require.NoError(t, err)
	_, err = set.Client("edge")
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
}
