package kubectlfed

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
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

// tokenController does what kube-controller-manager's token controller does in a real member
// (none runs in testenv): it fills a ServiceAccount token Secret's token, here with a real
// token of that ServiceAccount from the TokenRequest API, so the token join copies to the host
// authenticates as the member's ServiceAccount and has exactly config/rbac/member's rights.
func tokenController(t *testing.T, member kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			secrets, err := member.CoreV1().Secrets("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("type", string(corev1.SecretTypeServiceAccountToken)).String()})
			if err != nil {
				return false, nil
			}
			for i := range secrets.Items {
				s := &secrets.Items[i]
				sa := s.Annotations[corev1.ServiceAccountNameKey]
				if len(s.Data[corev1.ServiceAccountTokenKey]) > 0 || sa == "" {
					continue
				}
				tr, err := member.CoreV1().ServiceAccounts(s.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
				if err != nil {
					continue // the ServiceAccount is not there yet
				}
				s.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tr.Status.Token)}
				_, _ = member.CoreV1().Secrets(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
			}
			return false, nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
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

// TestJoinUnjoinReal joins the member to the host twice, checks what the host holds and that
// the token works with config/rbac/member's rights and no more, then unjoins twice.
func TestJoinUnjoinReal(t *testing.T) {
	e := startReal(t)
	tokenController(t, e.member)
	ctx := context.Background()
	const cluster = "joined"

	out := e.run(t, "join", cluster, "--cluster-context", memberName)
	require.Contains(t, out, `cluster "joined" joined`)
	crv, srv := versions(t, e.host, cluster)
	out = e.run(t, "join", cluster, "--cluster-context", memberName)
	require.Contains(t, out, `cluster "joined" joined`)
	crv2, srv2 := versions(t, e.host, cluster)
	require.Equal(t, []string{crv, srv}, []string{crv2, srv2}, "a second join changed the Cluster or its Secret")

	c := &federation.Cluster{}
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NoError(t, federation.FromUnstructured(u, c))
	memberCfg := e.env.Config(memberName)
	require.Equal(t, memberCfg.Host, c.Spec.APIEndpoint)
	require.Equal(t, memberCfg.CAData, c.Spec.CABundle)
	require.Equal(t, cluster, c.Spec.SecretRef.Name)
	s, err := e.host.Get(ctx, federation.SecretGVR, kube.DefaultNamespace, cluster)
	require.NoError(t, err)
	require.Equal(t, cluster, s.GetLabels()[federation.SecretClusterLabel])
	tok64, _, _ := unstructured.NestedString(s.Object, "data", kube.TokenKey)
	tok, err := base64.StdEncoding.DecodeString(tok64)
	require.NoError(t, err)

	// The token is the member ServiceAccount's: it may do what config/rbac/member grants
	// (list ConfigMaps) and nothing else (list ClusterRoles).
	asSA, err := kubernetes.NewForConfig(&rest.Config{Host: c.Spec.APIEndpoint, BearerToken: string(tok), TLSClientConfig: rest.TLSClientConfig{CAData: c.Spec.CABundle}})
	require.NoError(t, err)
	_, err = asSA.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = asSA.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "listing ClusterRoles with the member token: %v; want Forbidden", err)

	out = e.run(t, "unjoin", cluster, "--cluster-context", memberName)
	require.Contains(t, out, "host: Cluster joined deleted")
	require.Contains(t, out, "host: Secret fedkit-system/joined deleted")
	require.Contains(t, out, "member member: 4 of 4 objects deleted")
	out = e.run(t, "unjoin", cluster, "--cluster-context", memberName)
	require.Contains(t, out, "host: no Cluster joined")
	require.Contains(t, out, "member member: 0 of 4 objects deleted")
	_, err = e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.True(t, apierrors.IsNotFound(err), "Cluster after unjoin: %v", err)
	_, err = e.host.Get(ctx, federation.SecretGVR, kube.DefaultNamespace, cluster)
	require.True(t, apierrors.IsNotFound(err), "Secret after unjoin: %v", err)
	_, err = e.member.CoreV1().ServiceAccounts("fedkit-system").Get(ctx, "fedkit-member", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "member ServiceAccount after unjoin: %v", err)
	_, err = e.member.RbacV1().ClusterRoleBindings().Get(ctx, "fedkit-member", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "member ClusterRoleBinding after unjoin: %v", err)
}

// TestJoinWaitsForTheTokenReal: without a token controller, join fails after --token-timeout
// with an error naming the Secret, and writes nothing on the host.
func TestJoinWaitsForTheTokenReal(t *testing.T) {
	e := startReal(t)
	code, _, errOut := run(t, "", "join", "tokenless", "--cluster-context", memberName, "--token-timeout", "200ms", "--kubeconfig", e.kubeconfig, "--context", hostName)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `token Secret fedkit-system/fedkit-member-token: no "token"`)
	_, err := e.host.Get(context.Background(), federation.ClusterGVR, "", "tokenless")
	require.True(t, apierrors.IsNotFound(err), "Cluster after a failed join: %v", err)
	e.run(t, "unjoin", "tokenless", "--cluster-context", memberName)
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
	tokenController(t, e.member)
	ctx := context.Background()
	const cluster, ns = "rb", "cli-rollback"
	e.run(t, "join", cluster, "--cluster-context", memberName)
	t.Cleanup(func() { e.run(t, "unjoin", cluster, "--cluster-context", memberName) })
	// The Ready condition the cluster monitor would write.
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

	log := testr.New(t)
	set, err := kube.NewClusterSet(e.host, kube.ClusterSetOptions{Logger: log})
	require.NoError(t, err)
	syncer, err := fedsync.New(e.host, set, federation.ConfigMapType, fedsync.Options{Registerer: prometheus.NewRegistry(), Logger: log})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	setDone, syncDone := make(chan error, 1), make(chan error, 1)
	go func() { setDone <- set.Run(runCtx) }()
	go func() { syncDone <- syncer.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-syncDone)
		require.NoError(t, <-setDone)
	})

	gvr := federation.ConfigMapType.FederatedGVR()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: settings, namespace: `+ns+`}
spec:
  template: {data: {color: blue}}
  placement: {clusters: [{name: `+cluster+`}]}
`), &obj.Object))
	_, err = e.host.Create(ctx, gvr, obj)
	require.NoError(t, err)
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
