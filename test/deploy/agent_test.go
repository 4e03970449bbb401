package deploy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/managertest"
)

// clusterReady is the Ready condition's status of the Cluster name on host ("" without one).
func clusterReady(t *testing.T, host *kube.Client, name string) string {
	t.Helper()
	u, err := host.Get(context.Background(), federation.ClusterGVR, "", name)
	if err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// Pull mode as a platform team deploys it: fedkit-controller-manager on the host, a cluster
// joined with `kubectl fed join --mode Pull` (the host never reaches it), and fedkit-agent in
// that member as config/agent runs it: its args, config/rbac/member's ServiceAccount (its
// token where a pod has it, the in-cluster configuration), the host kubeconfig join wrote.
// A FederatedConfigMap reaches the member through the agent. Then the agent is cut off from
// the host: the Cluster turns not Ready by the age of the agent's Lease, and meanwhile the
// agent still corrects drift in the member with the Assignments it read last (an outage of
// the host is not an outage of the member). Healed, the Cluster is Ready again, nothing is
// re-created (same UID), and a template change arrives. Deleting the federated object
// deletes the member's copy through the agent; unjoin revokes it; SIGTERM stops it with exit
// status 0.
func TestAgentProcessThroughAPartition(t *testing.T) {
	env, host := setup(t)
	run := runs.Add(1)
	cluster := fmt.Sprintf("edge-%d", run)
	ns := fmt.Sprintf("pull-%d", run)
	kc := kubeconfig(t, env, "")
	cp := managertest.Start(t, managertest.Options{Args: []string{
		"--kubeconfig", kc, "--host-context", hostName, "--leader-elect=false",
		"--types=FederatedConfigMap", "--cluster-monitor-period=500ms",
	}})
	cp.WaitReady(t)

	// On the host: kubectl fed join --mode Pull writes the agent's kubeconfig. The agent
	// reaches the host through a gate the test can cut.
	agentKC := filepath.Join(t.TempDir(), "agent.kubeconfig")
	out := kubectlFed(t, "join", cluster, "--mode", "Pull", "--agent-kubeconfig", agentKC, "--kubeconfig", kc, "--host-context", hostName)
	if !strings.Contains(out, "joined in pull mode") {
		t.Fatalf("kubectl fed join --mode Pull:\n%s", out)
	}
	g := newGate(t, env.Config(hostName).Host)
	g.release()
	through, err := clientcmd.LoadFromFile(agentKC)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range through.Clusters {
		c.Server = g.server()
	}
	if err := clientcmd.WriteToFile(*through, agentKC); err != nil {
		t.Fatal(err)
	}
	joined := true
	t.Cleanup(func() {
		if joined { // the test failed before its own unjoin: do not wait for sync's clean-up
			kubectlFed(t, "unjoin", cluster, "--wait=false", "--force", "--kubeconfig", kc, "--host-context", hostName)
		}
	})

	// In the member: config/agent's objects, and the agent run as its Deployment's pod.
	edge := env.Client(t, edgeName)
	objs := render(t, filepath.Join(configDir, "agent"))
	apply(t, edge, objs)
	deployment, dir, podEnv := asPod(t, env, edgeName, objs)
	pod := deployment.Spec.Template.Spec
	var args []string
	for _, a := range pod.Containers[0].Args {
		a = strings.ReplaceAll(a, "$(CLUSTER)", cluster) // the kubelet expands it from the Secret
		if strings.HasPrefix(a, "--hub-kubeconfig=") {
			a = "--hub-kubeconfig=" + agentKC // the Secret's key, mounted
		}
		args = append(args, a)
	}
	agentProc := managertest.Start(t, managertest.Options{Agent: true,
		Args: append(args, "--serviceaccount-dir="+dir, "--period=500ms", "--lease-duration=3s"),
		Env:  podEnv,
	})
	if !strings.Contains(agentProc.Logs(), `"member":"in-cluster (`+dir+`)"`) {
		fedtest.Eventually(t, "the agent started with the in-cluster configuration", func() bool {
			return strings.Contains(agentProc.Logs(), `"member":"in-cluster (`+dir+`)"`)
		})
	}

	fedtest.Create(t, host, namespaces, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns))
	fedtest.Create(t, host, fedCMs, fmt.Sprintf(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: pulled, namespace: %s}
spec:
  template: {data: {greeting: hello}}
  placement: {clusters: [{name: %s}]}
`, ns, cluster))
	var uid string
	value := func() string {
		u, err := edge.Get(context.Background(), configMaps, ns, "pulled")
		if err != nil {
			return ""
		}
		uid = string(u.GetUID())
		v, _, _ := unstructured.NestedString(u.Object, "data", "greeting")
		return v
	}
	fedtest.Eventually(t, "the member has the ConfigMap through the agent", func() bool { return value() == "hello" })
	first := uid
	fedtest.Eventually(t, "the pull Cluster Ready by its agent's Lease", func() bool { return clusterReady(t, host, cluster) == "True" })

	// Cut off from the host: not Ready by the Lease's age, and drift is still corrected.
	g.cut()
	fedtest.Eventually(t, "the pull Cluster not Ready once its Lease is older than its duration", func() bool {
		return clusterReady(t, host, cluster) == "False"
	})
	u, err := edge.Get(context.Background(), configMaps, ns, "pulled")
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, "drifted", "data", "greeting"); err != nil {
		t.Fatal(err)
	}
	if _, err := edge.Update(context.Background(), configMaps, u); err != nil {
		t.Fatal(err)
	}
	fedtest.Eventually(t, "the agent corrects drift while cut off from the host", func() bool { return value() == "hello" })

	// Healed: Ready again, nothing re-created, a change arrives.
	g.heal()
	fedtest.Eventually(t, "the pull Cluster Ready again after the heal", func() bool { return clusterReady(t, host, cluster) == "True" })
	fu, err := host.Get(context.Background(), fedCMs, ns, "pulled")
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(fu.Object, "again", "spec", "template", "data", "greeting"); err != nil {
		t.Fatal(err)
	}
	if _, err := host.Update(context.Background(), fedCMs, fu); err != nil {
		t.Fatal(err)
	}
	fedtest.Eventually(t, "the template change reaches the member after the heal", func() bool { return value() == "again" })
	if uid != first {
		t.Errorf("the member's ConfigMap was re-created (uid %s, then %s); want it kept through the partition", first, uid)
	}

	// Deleting the federated object deletes the member's copy through the agent; unjoin
	// then finds nothing left to clean up and revokes the agent's identity.
	if err := host.Delete(context.Background(), fedCMs, ns, "pulled", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fedtest.Eventually(t, "the member's copy deleted through the agent", func() bool {
		_, err := edge.Get(context.Background(), configMaps, ns, "pulled")
		return apierrors.IsNotFound(err)
	})
	kubectlFed(t, "unjoin", cluster, "--kubeconfig", kc, "--host-context", hostName)
	joined = false
	if err := agentProc.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, agentProc.Logs())
	}
}
