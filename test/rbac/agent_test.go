package rbac_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/agent"
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
