package kubectlfed

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/testenv"
	fedsync "github.com/fedkit/fedkit/sync"
)

const (
	hostName   = "host"
	memberName = "member"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, hostName, memberName))
}

// realEnv is the shared host and member, the Cluster CRD and built-in federated types on the
// host, and a kubeconfig file with one context per server.
type realEnv struct {
	env        *testenv.Env
	kubeconfig string
	host       *kube.Client
	member     kubernetes.Interface
}

func startReal(t *testing.T) *realEnv {
	t.Helper()
	env := testenv.Shared(t)
	kc, err := env.Kubeconfig()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, kc, 0o600))
	host, err := kube.New(env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, conformance.InstallCRDs(ctx, host, crds...))
	member, err := kubernetes.NewForConfig(env.Config(memberName))
	require.NoError(t, err)
	return &realEnv{env: env, kubeconfig: path, host: host, member: member}
}

func (e *realEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, "", append(args, "--kubeconfig", e.kubeconfig, "--context", hostName)...)
	require.Equal(t, 0, code, "kubectl fed %v\nstdout:\n%s\nstderr:\n%s", args, out, errOut)
	return out
}

func versions(t *testing.T, host *kube.Client, cluster string) (clusterRV, secretRV string) {
	t.Helper()
	ctx := context.Background()
	c, err := host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	s, err := host.Get(ctx, federation.SecretGVR, kube.DefaultNamespace, cluster)
	require.NoError(t, err)
	return c.GetResourceVersion(), s.GetResourceVersion()
}

// joined returns the Cluster of cluster on the host and a client of the member with the
// credentials its Secret holds.
func (e *realEnv) joined(t *testing.T, cluster string) (*federation.Cluster, kubernetes.Interface, *kube.Client) {
	t.Helper()
	ctx := context.Background()
	c := &federation.Cluster{}
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NoError(t, federation.FromUnstructured(u, c))
	s, err := e.host.Get(ctx, federation.SecretGVR, kube.DefaultNamespace, cluster)
	require.NoError(t, err)
	require.Equal(t, cluster, s.GetLabels()[federation.SecretClusterLabel])
	tok64, _, _ := unstructured.NestedString(s.Object, "data", kube.TokenKey)
	tok, err := base64.StdEncoding.DecodeString(tok64)
	require.NoError(t, err)
	cfg := &rest.Config{Host: c.Spec.APIEndpoint, BearerToken: string(tok), TLSClientConfig: rest.TLSClientConfig{CAData: c.Spec.CABundle}}
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	kc, err := kube.New(cfg, kube.Options{})
	require.NoError(t, err)
	return c, cs, kc
}

// memberAccounts returns the ServiceAccounts of fedkit-system in the member (the
// namespace's own "default" left out).
func (e *realEnv) memberAccounts(t *testing.T) []string {
	t.Helper()
	l, err := e.member.CoreV1().ServiceAccounts("fedkit-system").List(context.Background(), metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, sa := range l.Items {
		if sa.Name != "default" {
			out = append(out, sa.Name)
		}
	}
	return out
}

// revoked reports whether err is a member's refusal of a revoked token: Unauthorized once the
// API server no longer knows its ServiceAccount, Forbidden while its token cache (seconds)
// still does but the account's bindings are gone.
func revoked(err error) bool { return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) }

// TestJoinUnjoinReal joins the member to the host twice, checks what the host holds and that
// the token works with config/rbac/member's rights and no more, then unjoins twice. The
// member runs no token controller (testenv runs no kube-controller-manager): join requests
// its token through the TokenRequest API.
func TestJoinUnjoinReal(t *testing.T) {
	e := startReal(t)
	ctx := context.Background()
	const cluster = "joined"

	out := e.run(t, "join", cluster, "--cluster-context", memberName)
	require.Contains(t, out, `cluster "joined" joined`)
	require.Regexp(t, `token of ServiceAccount fedkit-system/fedkit-joined-[0-9a-f]{10} expires at `, out)
	crv, _ := versions(t, e.host, cluster)
	out = e.run(t, "join", cluster, "--cluster-context", memberName)
	require.Contains(t, out, `cluster "joined" joined`)
	crv2, _ := versions(t, e.host, cluster)
	require.Equal(t, crv, crv2, "a second join changed the Cluster (it renews the token only)")

	c, asSA, _ := e.joined(t, cluster)
	memberCfg := e.env.Config(memberName)
	require.Equal(t, memberCfg.Host, c.Spec.APIEndpoint)
	require.Equal(t, memberCfg.CAData, c.Spec.CABundle)
	require.Equal(t, cluster, c.Spec.SecretRef.Name)

	// The token is the member ServiceAccount's: it may do what config/rbac/member grants
	// (list ConfigMaps) and nothing else (list ClusterRoles, Secrets without --secrets).
	_, err := asSA.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = asSA.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "listing ClusterRoles with the member token: %v; want Forbidden", err)
	_, err = asSA.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "listing Secrets with the member token, joined without --secrets: %v; want Forbidden", err)
	e.run(t, "join", cluster, "--cluster-context", memberName, "--secrets")
	_, asSA, _ = e.joined(t, cluster)
	_, err = asSA.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "listing Secrets with the member token, joined with --secrets")

	out = e.run(t, "unjoin", cluster, "--cluster-context", memberName)
	require.Contains(t, out, "host: Cluster joined deleted")
	require.Contains(t, out, "host: Secret fedkit-system/joined deleted")
	require.Contains(t, out, "member member: 5 of 5 objects deleted")
	out = e.run(t, "unjoin", cluster, "--cluster-context", memberName)
	require.Contains(t, out, "host: no Cluster joined")
	require.Contains(t, out, "member member: 0 of 5 objects deleted")
	_, err = e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.True(t, apierrors.IsNotFound(err), "Cluster after unjoin: %v", err)
	_, err = e.host.Get(ctx, federation.SecretGVR, kube.DefaultNamespace, cluster)
	require.True(t, apierrors.IsNotFound(err), "Secret after unjoin: %v", err)
	require.Empty(t, e.memberAccounts(t), "member ServiceAccounts after unjoin")
	_, err = asSA.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, revoked(err), "the token after unjoin: %v; want Unauthorized or Forbidden", err)
}

// TestJoinWithoutATokenControllerReal: join works on a member that runs no token controller
// (testenv runs no kube-controller-manager): it requests a token of the lifetime asked for
// through the TokenRequest API, and the token's expiry is what the member's client reports
// to the cluster monitor. Before, join waited for a token Secret nothing filled, and failed.
func TestJoinWithoutATokenControllerReal(t *testing.T) {
	e := startReal(t)
	const cluster = "tokenless"
	before := time.Now()
	out := e.run(t, "join", cluster, "--cluster-context", memberName, "--token-lifetime", "2h")
	t.Cleanup(func() { e.run(t, "unjoin", cluster, "--cluster-context", memberName, "--force") })
	require.Contains(t, out, `cluster "tokenless" joined`)
	_, asSA, client := e.joined(t, cluster)
	_, err := asSA.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	at, ok := client.CredentialsExpiry()
	require.True(t, ok, "the member's client knows when the token expires")
	require.WithinRange(t, at, before.Add(2*time.Hour-time.Minute), before.Add(2*time.Hour+5*time.Minute))
	require.Contains(t, out, "expires at "+at.UTC().Format(time.RFC3339))
}

// TestTwoClustersOnOneServerReal: two Clusters joined from one API server (two federations of
// one fleet, or one cluster under two names) get member accounts of their own, so unjoining
// one leaves the other's credentials working. Before, both shared fedkit-member, and unjoining
// one revoked the other's token.
func TestTwoClustersOnOneServerReal(t *testing.T) {
	e := startReal(t)
	ctx := context.Background()
	e.run(t, "join", "one", "--cluster-context", memberName)
	e.run(t, "join", "two", "--cluster-context", memberName)
	t.Cleanup(func() { e.run(t, "unjoin", "two", "--cluster-context", memberName) })
	_, one, _ := e.joined(t, "one")
	_, two, _ := e.joined(t, "two")
	require.Len(t, e.memberAccounts(t), 2, "one account per Cluster")

	e.run(t, "unjoin", "one", "--cluster-context", memberName)
	_, err := one.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, revoked(err), "one's token after its unjoin: %v; want Unauthorized or Forbidden", err)
	_, err = two.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "two's token after one's unjoin")
}

// TestUnjoinKeepsCredentialsUntilTheClusterIsGoneReal: while the Cluster is held (here by a
// finalizer no one releases, as sync's is while it cleans up), unjoin keeps the member's
// credentials: after --timeout it fails naming the finalizer, --wait=false returns at once,
// and only --force revokes them anyway.
func TestUnjoinKeepsCredentialsUntilTheClusterIsGoneReal(t *testing.T) {
	e := startReal(t)
	ctx := context.Background()
	const cluster, hold = "held", "test.fedkit.io/hold"
	e.run(t, "join", cluster, "--cluster-context", memberName)
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	u.SetFinalizers([]string{hold})
	_, err = e.host.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	t.Cleanup(func() {
		u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
		if err == nil {
			u.SetFinalizers(nil)
			_, _ = e.host.Update(ctx, federation.ClusterGVR, u)
		}
	})
	_, asSA, _ := e.joined(t, cluster)
	works := func() error {
		_, err := asSA.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	}

	code, out, errOut := run(t, "", "unjoin", cluster, "--cluster-context", memberName, "--timeout", "300ms", "--kubeconfig", e.kubeconfig, "--context", hostName)
	require.Equal(t, 2, code, "stdout:\n%s", out)
	require.Contains(t, errOut, "Cluster held is still there after 300ms (finalizers: "+hold+")")
	require.Contains(t, errOut, "credentials kept")
	require.NoError(t, works(), "the token after an unjoin that timed out")
	_, err = e.host.Get(ctx, federation.SecretGVR, kube.DefaultNamespace, cluster)
	require.NoError(t, err, "the host Secret after an unjoin that timed out")

	out = e.run(t, "unjoin", cluster, "--cluster-context", memberName, "--wait=false")
	require.Contains(t, out, "credentials kept")
	require.NoError(t, works(), "the token after unjoin --wait=false")

	out = e.run(t, "unjoin", cluster, "--cluster-context", memberName, "--timeout", "300ms", "--force")
	require.Contains(t, out, "--force")
	require.True(t, revoked(works()), "the token after unjoin --force")
	require.Empty(t, e.memberAccounts(t))
}

// runSync makes the joined Cluster Ready, as the cluster monitor would, creates namespace ns
// on the host and in the member, and runs a ClusterSet and a Syncer of FederatedConfigMaps on
// the host until the test ends or stop is called.
func (e *realEnv) runSync(t *testing.T, cluster, ns string) (stop func()) {
	t.Helper()
	ctx := context.Background()
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "test",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	for _, c := range []kubernetes.Interface{kubernetes.NewForConfigOrDie(e.env.Config(hostName)), e.member} {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	return e.startSync(t)
}

// startSync runs a ClusterSet and a Syncer of FederatedConfigMaps on the host until the test
// ends or stop is called.
func (e *realEnv) startSync(t *testing.T) (stop func()) {
	t.Helper()
	log := testr.New(t)
	set, err := kube.NewClusterSet(e.host, kube.ClusterSetOptions{Logger: log})
	require.NoError(t, err)
	syncer, err := fedsync.New(e.host, set, federation.ConfigMapType, fedsync.Options{Registerer: prometheus.NewRegistry(), Logger: log})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(context.Background())
	setDone, syncDone := make(chan error, 1), make(chan error, 1)
	go func() { setDone <- set.Run(runCtx) }()
	go func() { syncDone <- syncer.Run(runCtx) }()
	var once gosync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-syncDone)
			require.NoError(t, <-setDone)
		})
	}
	t.Cleanup(stop)
	return stop
}

// createSettings creates the FederatedConfigMap ns/settings, placed in cluster.
func (e *realEnv) createSettings(t *testing.T, cluster, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: settings, namespace: `+ns+`}
spec:
  template: {data: {color: blue}}
  placement: {clusters: [{name: `+cluster+`}]}
`), &obj.Object))
	_, err := e.host.Create(context.Background(), federation.ConfigMapType.FederatedGVR(), obj)
	require.NoError(t, err)
}

// TestUnjoinWaitsForSyncsCleanupReal: unjoin deletes the Cluster and waits until it is gone,
// sync's clean-up done (by default it orphans its objects: they stay, without fedkit's
// labels and annotations), before it revokes the member's credentials; it completes within
// its --timeout. Here sync is stopped while unjoin starts, as a busy or restarting control
// plane would be, and starts again once the Cluster is being deleted. Before, unjoin deleted
// the host Secret and the member's account at once: sync, without credentials, could not
// clean up, and its objects stayed in the member, labelled as managed.
func TestUnjoinWaitsForSyncsCleanupReal(t *testing.T) {
	e := startReal(t)
	ctx := context.Background()
	const cluster, ns = "leaving", "cli-unjoin"
	e.run(t, "join", cluster, "--cluster-context", memberName)
	stop := e.runSync(t, cluster, ns)
	e.createSettings(t, cluster, ns)
	eventually(t, "the ConfigMap in the member", func() (bool, error) {
		_, err := e.member.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		return err == nil, err
	})
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NotEmpty(t, u.GetFinalizers(), "sync holds the Cluster")
	stop()

	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		code, out, errOut := run(t, "", "unjoin", cluster, "--cluster-context", memberName, "--timeout", "1m", "--kubeconfig", e.kubeconfig, "--context", hostName)
		done <- result{code, out, errOut}
	}()
	eventually(t, "the Cluster being deleted", func() (bool, error) {
		u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
		return err == nil && u.GetDeletionTimestamp() != nil, err
	})
	e.startSync(t)
	r := <-done
	t.Logf("unjoin took %s", time.Since(start))
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.out, r.err)
	require.Contains(t, r.out, "host: Cluster leaving gone")
	cm, err := e.member.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	require.NoError(t, err, "orphaned, not deleted")
	for k := range cm.Labels {
		require.NotContains(t, k, "federation.k8s.io", "label %s left on the member's ConfigMap", k)
	}
	for k := range cm.Annotations {
		require.NotContains(t, k, "federation.k8s.io", "annotation %s left on the member's ConfigMap", k)
	}
	require.Empty(t, e.memberAccounts(t))
}

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok && err == nil, nil
	})
	require.NoError(t, err, "%s (last error: %v)", what, last)
}

// TestStatusAndRollbackReal joins the member, runs a ClusterSet and a Syncer on the real host,
// propagates two revisions of a FederatedConfigMap through the member's joined credentials,
// then reads `kubectl fed status` and rolls back with `kubectl fed rollback`: the host's
// template is revision 1's again, an Event names the user, and sync puts revision 1's data
// back in the member.
func TestStatusAndRollbackReal(t *testing.T) {
	e := startReal(t)
	ctx := context.Background()
	const cluster, ns = "rb", "cli-rollback"
	e.run(t, "join", cluster, "--cluster-context", memberName)
	e.runSync(t, cluster, ns)
	t.Cleanup(func() { e.run(t, "unjoin", cluster, "--cluster-context", memberName) }) // before sync stops

	gvr := federation.ConfigMapType.FederatedGVR()
	e.createSettings(t, cluster, ns)
	memberColor := func(want string) func() (bool, error) {
		return func() (bool, error) {
			cm, err := e.member.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return cm.Data["color"] == want, nil
		}
	}
	eventually(t, "revision 1 in the member", memberColor("blue"))

	// The user's edit; sync writes the object's metadata too, so it may meet a Conflict.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := e.host.Get(ctx, gvr, ns, "settings")
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(cur.Object, "red", "spec", "template", "data", "color"); err != nil {
			return err
		}
		_, err = e.host.Update(ctx, gvr, cur)
		return err
	}))
	eventually(t, "revision 2 in the member", memberColor("red"))
	eventually(t, "status.clusters[rb] at revision 2", func() (bool, error) {
		fed, err := getFederated(ctx, e.host, federation.ConfigMapType, federation.Key{Namespace: ns, Name: "settings"})
		if err != nil {
			return false, err
		}
		return fed.Status.SyncedRevision == 2 && len(fed.Status.Clusters) == 1 && fed.Status.Clusters[0].Revision == 2, nil
	})

	out := e.run(t, "status", "federatedconfigmap/settings", "-n", ns)
	require.Contains(t, out, "FederatedConfigMap "+ns+"/settings: generation 2 (observed 2), synced revision 2")
	require.Regexp(t, `(?m)^rb\s+-\s+OK\s+2\s+.*up to date$`, out)

	out = e.run(t, "rollback", "configmap/settings", "--to-revision", "1", "-n", ns)
	require.Contains(t, out, "FederatedConfigMap "+ns+"/settings rolled back to revision 1")
	fed, err := getFederated(ctx, e.host, federation.ConfigMapType, federation.Key{Namespace: ns, Name: "settings"})
	require.NoError(t, err)
	require.Equal(t, "blue", fed.Spec.Template.Object["data"].(map[string]any)["color"])
	events, err := kubernetes.NewForConfigOrDie(e.env.Config(hostName)).CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var msgs []string
	for _, ev := range events.Items {
		if ev.Reason == ReasonRollbackRequested && ev.InvolvedObject.UID == fed.UID {
			msgs = append(msgs, ev.Message)
		}
	}
	require.Len(t, msgs, 1, "RollbackRequested events on the object")
	require.True(t, strings.HasPrefix(msgs[0], "kubectl fed rollback by admin to revision 1"), "event message %q", msgs[0])
	eventually(t, "revision 1's data back in the member", memberColor("blue"))
}
