package rbac_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// agentRole returns the Role agent.HostManifests grants the agent of cluster, checking that
// it is bound to the agent's ServiceAccount in the cluster's namespace.
func agentRole(t *testing.T, cluster string) rbacv1.Role {
	t.Helper()
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	for _, u := range agent.HostManifests(cluster) {
		switch u.GetKind() {
		case "Role":
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role))
		case "RoleBinding":
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &binding))
		}
	}
	ns := federation.PullNamespace(cluster)
	require.Equal(t, ns, role.Namespace)
	require.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, binding.RoleRef)
	require.Equal(t, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: agent.IdentityName, Namespace: ns}}, binding.Subjects)
	return role
}

// TestAgentNeedsOnlyItsRole: every request a pull cluster's agent makes on the host (its
// Lease, its Assignments, its reports) is granted by the Role agent.HostManifests binds to
// it, in its own namespace; and that Role grants nothing in another cluster's namespace and
// nothing on Secrets, FederatedSecrets or templates (it is a Role: it grants in its
// namespace only).
func TestAgentNeedsOnlyItsRole(t *testing.T) {
	ctx := context.Background()
	env := fedtest.New(t, fedtest.Options{})
	for _, u := range agent.HostManifests("edge") {
		if u.GetKind() == "Namespace" {
			_, err := env.Host.Create(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, u)
			require.NoError(t, err)
		}
	}
	member := fake.NewCluster("edge")
	member.SetClock(env.Clock)
	hub := agent.NewHubClient(env.Host, "edge", env.Clock)
	rec := record(env.Host)
	a, err := agent.New(rec, member, agent.Options{Cluster: "edge", Clock: env.Clock})
	require.NoError(t, err)
	require.NoError(t, a.Reconcile(ctx)) // creates the Lease
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}},
		"data":     map[string]any{"k": "v"}}}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	_, err = hub.Create(ctx, configMaps, cm)
	require.NoError(t, err)
	env.Clock.Step(time.Second)
	require.NoError(t, a.Reconcile(ctx)) // renews the Lease, applies and reports
	require.True(t, rec.saw("update", federation.AssignmentGVR, "status"), "the agent reported")
	require.True(t, rec.saw("update", schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, ""), "the agent renewed its Lease")

	role := agentRole(t, "edge")
	ns := federation.PullNamespace("edge")
	for _, req := range rec.requests() {
		if req.Namespace != ns || !rulesAllow(role.Rules, req) {
			t.Errorf("the agent of edge made %s: its Role does not grant it", req)
		}
	}
	verbs, federated := grantsSecrets(role.Rules)
	require.Empty(t, verbs, "the agent's Role grants on Secrets")
	require.False(t, federated, "the agent's Role grants on FederatedSecrets")
	for _, r := range role.Rules {
		require.NotContains(t, r.APIGroups, federation.TypesGroup, "the agent's Role grants on templates")
		require.NotContains(t, r.Resources, rbacv1.ResourceAll)
		require.NotContains(t, r.Verbs, rbacv1.VerbAll)
	}
}

// TestControlPlaneWithPullClusterNeedsOnlyItsRoles: a control plane serving a pull cluster
// (edge, with its agent in process) among a push one makes only requests its roles grant
// (fedkit-pull: Assignments, the agents' Leases by name), through a FederatedDeployment
// propagated, Ready and deleted.
func TestControlPlaneWithPullClusterNeedsOnlyItsRoles(t *testing.T) {
	ctx := context.Background()
	m := loadManifests(t)
	f := fedtest.New(t, fedtest.Options{Now: t0, Workloads: fake.Workloads{Apps: true},
		Members: []fedtest.Member{{Name: "eu"}, {Name: "edge"}}})
	require.NoError(t, f.Host.Apply(`{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`))
	_, err := f.Host.Create(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, agent.HostManifests("edge")[0])
	require.NoError(t, err)
	edge, err := f.Host.Get(ctx, federation.ClusterGVR, "", "edge")
	require.NoError(t, err)
	edge.Object["spec"] = map[string]any{"mode": "Pull"}
	_, err = f.Host.Update(ctx, federation.ClusterGVR, edge)
	require.NoError(t, err)

	rec := record(f.Host)
	set, err := agent.NewClusterSet(rec, f.Fleet, agent.SetOptions{Clock: f.Clock})
	require.NoError(t, err)
	opts := controlplane.Options{Clock: f.Clock, Types: []federation.TypeConfig{federation.DeploymentType}}
	opts.Disable.DNS = true
	opts.Scheduler.CacheSyncTimeout, opts.Sync.CacheSyncTimeout, opts.Status.CacheSyncTimeout = syncTimeout, syncTimeout, syncTimeout
	opts.Monitor.CacheSyncTimeout, opts.Dependencies.CacheSyncTimeout, opts.Propagation.CacheSyncTimeout = syncTimeout, syncTimeout, syncTimeout
	cp, err := controlplane.New(rec, set, opts)
	require.NoError(t, err)
	member, _ := f.Fleet.Member("edge")
	ag, err := agent.New(f.Host, member, agent.Options{Cluster: "edge", Clock: f.Clock})
	require.NoError(t, err)
	stop := runAll(cp.Run, ag.Run)

	require.NoError(t, f.Host.Apply(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusters: [{name: eu}, {name: edge}]}
`))
	step := func(what string, cond func() bool) {
		t.Helper()
		fedtest.StepUntil(t, f.Clock.Step, 5*time.Second, 300, func() string { return what }, cond)
	}
	step("Ready in eu and edge", func() bool {
		_, err := member.Peek(federation.DeploymentType.TargetGVR(), "default", "web")
		return err == nil && condition(f.Host, "Ready")
	})
	require.NoError(t, f.Host.Delete(ctx, fedDeploy, "default", "web", metav1.DeleteOptions{}))
	step("deleted", func() bool {
		_, err := f.Host.Peek(fedDeploy, "default", "web")
		return apierrors.IsNotFound(err)
	})
	require.NoError(t, stop())
	require.True(t, rec.saw("create", federation.AssignmentGVR, ""), "no Assignment written")
	require.True(t, rec.saw("delete", federation.AssignmentGVR, ""), "no Assignment collected")
	checkGranted(t, m, "the control plane with a pull cluster", m.boundTo(ServiceAccount), rec)
}
