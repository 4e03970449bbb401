package agent

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// IdentityName names the ServiceAccount, Role and RoleBinding of a pull cluster's agent in
// the cluster's namespace on the host.
const IdentityName = "fedkit-agent"

// HostManifests returns what the host needs for the pull cluster named cluster: its
// namespace (federation.PullNamespace), and in it the agent's ServiceAccount, a Role and its
// RoleBinding. The Role grants, in that namespace only: get, list and watch on Assignments,
// update and patch on their status (the reports), get, create and update on Leases. Nothing
// else: not another cluster's Assignments, not a Secret, not a template. An agent holds a
// token of that ServiceAccount.
func HostManifests(cluster string) []*unstructured.Unstructured {
	ns := federation.PullNamespace(cluster)
	meta := func(name string) map[string]any {
		return map[string]any{"name": name, "namespace": ns, "labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}}
	}
	rule := func(group, resource string, verbs ...string) map[string]any {
		vs := make([]any, len(verbs))
		for i, v := range verbs {
			vs[i] = v
		}
		return map[string]any{"apiGroups": []any{group}, "resources": []any{resource}, "verbs": vs}
	}
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}}},
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(IdentityName)},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(IdentityName), "rules": []any{
			rule(federation.CoreGroup, "assignments", "get", "list", "watch"),
			rule(federation.CoreGroup, "assignments/status", "update", "patch"),
			rule("coordination.k8s.io", "leases", "get", "create", "update"),
		}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(IdentityName),
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": IdentityName},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": IdentityName, "namespace": ns}}},
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = &unstructured.Unstructured{Object: o}
	}
	return out
}
