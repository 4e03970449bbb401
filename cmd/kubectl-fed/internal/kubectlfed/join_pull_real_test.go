package kubectlfed

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// TestJoinPullReal: join --mode Pull registers a pull cluster on a real host without ever
// reaching the member: the Cluster has no connection, and the agent's kubeconfig holds a
// token that may read its own namespace's Assignments and nothing else (another cluster's
// Assignments, Secrets: Forbidden). An agent with that token, reaching the member itself,
// applies what sync assigns, corrects drift and reports it. Unjoin revokes that token.
func TestJoinPullReal(t *testing.T) {
	e := startReal(t)
	ctx := context.Background()
	const cluster = "edge"
	path := filepath.Join(t.TempDir(), "agent.kubeconfig")
	out := e.run(t, "join", cluster, "--mode", "Pull", "--agent-kubeconfig", path)
	require.Contains(t, out, `cluster "edge" joined in pull mode`)
	require.NotContains(t, out, "eyJ", "a token was printed")

	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	c := &federation.Cluster{}
	require.NoError(t, federation.FromUnstructured(u, c))
	require.True(t, c.Spec.Pull())
	require.Empty(t, c.Spec.APIEndpoint)
	require.Nil(t, c.Spec.SecretRef)

	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	asAgent, err := kube.New(cfg, kube.Options{})
	require.NoError(t, err)
	ns := federation.PullNamespace(cluster)
	_, err = asAgent.List(ctx, federation.AssignmentGVR, ns, metav1.ListOptions{})
	require.NoError(t, err, "the agent lists its own Assignments")
	_, err = asAgent.List(ctx, federation.AssignmentGVR, federation.PullNamespace("other"), metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "another cluster's Assignments: %v; want Forbidden", err)
	_, err = asAgent.List(ctx, federation.SecretGVR, ns, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "Secrets in its namespace: %v; want Forbidden", err)
	_, err = asAgent.List(ctx, federation.SecretGVR, kube.DefaultNamespace, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "the federation's Secrets: %v; want Forbidden", err)

	// What sync writes through the cluster's HubClient, the agent applies in the member.
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "pulled", "namespace": "default",
			"labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}},
		"data": map[string]any{"k": "v"}}}
	hub := agent.NewHubClient(e.host, cluster, clock.RealClock{})
	_, err = hub.Create(ctx, configMaps, cm)
	require.NoError(t, err)
	member, err := kube.New(e.env.Config(memberName), kube.Options{})
	require.NoError(t, err)
	a, err := agent.New(asAgent, member, agent.Options{Cluster: cluster})
	require.NoError(t, err)
	require.NoError(t, a.Reconcile(ctx))
	got, err := e.member.CoreV1().ConfigMaps("default").Get(ctx, "pulled", metav1.GetOptions{})
	require.NoError(t, err, "the agent applied the Assignment in the member")
	require.Equal(t, "v", got.Data["k"])
	reported, err := hub.Get(ctx, configMaps, "default", "pulled")
	require.NoError(t, err, "the host reads the agent's report")
	require.Equal(t, map[string]any{"k": "v"}, reported.Object["data"])

	// Drift in the member is corrected by the agent, with the member's own API server.
	got.Data["k"] = "drifted"
	_, err = e.member.CoreV1().ConfigMaps("default").Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, a.Reconcile(ctx))
	got, err = e.member.CoreV1().ConfigMaps("default").Get(ctx, "pulled", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "v", got.Data["k"], "the agent corrects drift")

	// Unjoin revokes the agent's identity on the host and never reaches the member.
	out = e.run(t, "unjoin", cluster)
	require.Contains(t, out, `cluster "edge" unjoined`)
	require.Contains(t, out, "the agent's identity and namespace fedkit-cluster-edge deleted")
	_, err = asAgent.List(ctx, federation.AssignmentGVR, ns, metav1.ListOptions{})
	require.True(t, revoked(err), "the agent's token after unjoin: %v; want Unauthorized or Forbidden", err)
	_, err = e.member.CoreV1().ConfigMaps("default").Get(ctx, "pulled", metav1.GetOptions{})
	require.NoError(t, err, "unjoin left the member as it was")
	// The member server is the package's: the other tests join it in push mode, and a
	// Syncer leaving it counts every ConfigMap with fedkit's identity there, this one too.
	require.NoError(t, e.member.CoreV1().ConfigMaps("default").Delete(ctx, "pulled", metav1.DeleteOptions{}))
}
