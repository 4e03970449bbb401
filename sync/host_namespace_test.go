package sync_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

var schemaSecrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// hostAsMember is the fleet with the host as one more member, "host", as when the control
// plane's own cluster is joined to the federation. It has no member caches: sync reads live.
type hostAsMember struct {
	fleet *fake.Fleet
	host  *fake.Cluster
}

func (h hostAsMember) Client(name string) (federation.ClusterClient, error) {
	if name == "host" {
		return h.host, nil
	}
	return h.fleet.Client(name)
}

// joinHost registers the host as a Ready member "host" and returns the cluster set with it.
func (e *env) joinHost(t *testing.T) hostAsMember {
	t.Helper()
	c := e.fleet.Clusters()[0]
	c.Name, c.Labels, c.ResourceVersion = "host", nil, ""
	c.CreationTimestamp = metav1.Time{} // the host sets its own
	u, err := federation.ToUnstructured(&c)
	require.NoError(t, err)
	status := u.Object["status"]
	stored, err := e.host.Create(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	stored.Object["status"] = status
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, stored)
	require.NoError(t, err)
	return hostAsMember{fleet: e.fleet, host: e.host}
}

// When the host is also a member, a FederatedNamespace for a namespace of the host (here the
// federation's own, fedkit-system, adopted) never deletes it there, whether it is deleted or
// its placement leaves the host: the namespace holds the federation itself (its federated
// objects, the members' credentials). It is orphaned with a warning, as KubeFed did; the other
// members' namespaces go as usual.
func TestHostNamespaceIsNeverDeletedWhenTheHostIsAMember(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, e *env, key federation.Key)
	}{
		{name: "deleted", remove: func(t *testing.T, e *env, key federation.Key) {
			require.NoError(t, e.host.Delete(ctx, federation.NamespaceType.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
		}},
		{name: "placement", remove: func(t *testing.T, e *env, key federation.Key) {
			u, err := e.host.Get(ctx, federation.NamespaceType.FederatedGVR(), key.Namespace, key.Name)
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "gcp"}}, "spec", "placement", "clusters"))
			_, err = e.host.Update(ctx, federation.NamespaceType.FederatedGVR(), u)
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			set := e.joinHost(t)
			s, err := fedsync.New(e.host, set, federation.NamespaceType, fedsync.Options{Clock: e.clock, Events: e.events})
			require.NoError(t, err)
			e.hostNamespace(t, "fedkit-system")
			e.mustCreate(t, e.host, schemaSecrets, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "aws-credentials", "namespace": "fedkit-system"}}})
			e.apply(t, federation.NamespaceType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedNamespace
metadata: {name: fedkit-system, namespace: fedkit-system, annotations: {federation.k8s.io/adopt: "true"}}
spec:
  template: {metadata: {labels: {team: platform}}}
  placement: {clusters: [{name: host}, {name: aws}, {name: gcp}]}
`)
			key := federation.Key{Namespace: "fedkit-system", Name: "fedkit-system"}
			_, err = s.Reconcile(ctx, key)
			require.NoError(t, err)
			ns, err := e.host.Peek(namespaces, "", "fedkit-system")
			require.NoError(t, err)
			require.Equal(t, "platform", ns.GetLabels()["team"], "adopted on the host, as asked")
			require.NotNil(t, e.peekNamespace(t, "aws", "fedkit-system"))

			tc.remove(t, e, key)
			_, err = s.Reconcile(ctx, key)
			require.NoError(t, err)
			ns, err = e.host.Peek(namespaces, "", "fedkit-system")
			require.NoError(t, err, "the host's own namespace was deleted")
			require.Nil(t, ns.GetDeletionTimestamp(), "the host's own namespace is being deleted")
			require.NotContains(t, ns.GetLabels(), federation.ManagedByLabel, "orphaned")
			_, err = e.host.Peek(schemaSecrets, "fedkit-system", "aws-credentials")
			require.NoError(t, err, "the federation's credentials are still there")
			// In a member, fedkit-system is the control plane's namespace too (kubectl fed
			// join puts the member's ServiceAccount there): the gate refuses its deletion.
			kept := e.peekNamespace(t, "aws", "fedkit-system")
			require.NotNil(t, kept, "aws's fedkit-system, which holds the member's credentials, was deleted")
			require.Nil(t, kept.GetDeletionTimestamp(), "aws's fedkit-system is being deleted")
			var warned, refused int
			for _, ev := range e.events.list() {
				switch {
				case strings.Contains(ev, plan.ReasonHostNamespace):
					warned++
				case strings.Contains(ev, plan.ReasonRefused) && strings.Contains(ev, `cluster aws`) && strings.Contains(ev, gate.InvariantReservedNamespace):
					refused++
				}
			}
			require.Equal(t, 1, warned, "one warning, for the host: %v", e.events.list())
			require.Equal(t, 1, refused, "one refusal, for aws, naming the cluster and the invariant: %v", e.events.list())
		})
	}
}

// When the host is also a member, removing a federated object from the host's placement never
// deletes the host's namespace it lives in, even one annotated as created by sync: that
// namespace holds the federated object itself.
func TestImplicitNamespaceReleaseSparesTheHostsNamespace(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	set := e.joinHost(t)
	s, err := fedsync.New(e.host, set, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	e.s = s
	// The host's "production" carries sync's marks, as if sync had created it for another
	// object before the federated objects came.
	require.NoError(t, e.host.Drift(namespaces, "", "production", func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue})
		u.SetAnnotations(map[string]string{plan.CreatedNamespaceAnnotation: "true"})
	}))
	e.apply(t, e.typ.FederatedGVR(), strings.Replace(frontend, "clusters: [{name: aws}, {name: gcp}, {name: azure}]", "clusters: [{name: host}, {name: aws}]", 1))
	e.reconcile(t)
	_, err = e.host.Peek(deployments, key.Namespace, key.Name)
	require.NoError(t, err, "propagated to the host as a member")

	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}}, "spec", "placement", "clusters")
	})
	e.reconcile(t)
	ns, err := e.host.Peek(namespaces, "", "production")
	require.NoError(t, err, "the host's namespace was deleted")
	require.Nil(t, ns.GetDeletionTimestamp(), "the host's namespace is being deleted")
	_, err = e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err, "the federated object is still there")
}

// A FederatedNamespace can adopt a system namespace (default, kube-system, kube-public,
// kube-node-lease: every cluster has them, the cluster's own components live there) when the
// user asks for it; sync never deletes one, whether the FederatedNamespace is deleted or its
// placement leaves the cluster: it is orphaned instead, with a warning (found by the hostile
// input table, test/hostile: deleting an adopting FederatedNamespace deleted kube-node-lease in
// every member).
func TestSystemNamespacesAreOrphanedNeverDeleted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, e *env, key federation.Key)
		gone   []string // members where the namespace leaves the federation
	}{
		{name: "deleted", gone: clusterNames, remove: func(t *testing.T, e *env, key federation.Key) {
			require.NoError(t, e.host.Delete(ctx, federation.NamespaceType.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
		}},
		{name: "placement", gone: []string{"azure", "gcp"}, remove: func(t *testing.T, e *env, key federation.Key) {
			u, err := e.host.Get(ctx, federation.NamespaceType.FederatedGVR(), key.Namespace, key.Name)
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}}, "spec", "placement", "clusters"))
			_, err = e.host.Update(ctx, federation.NamespaceType.FederatedGVR(), u)
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			s, err := fedsync.New(e.host, e.fleet, federation.NamespaceType, fedsync.Options{Clock: e.clock, Events: e.events})
			require.NoError(t, err)
			e.apply(t, federation.NamespaceType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedNamespace
metadata: {name: kube-node-lease, namespace: kube-node-lease, annotations: {federation.k8s.io/adopt: "true"}}
spec:
  template: {metadata: {labels: {team: platform}}}
  placement: {clusters: [{name: aws}, {name: gcp}, {name: azure}]}
`)
			key := federation.Key{Namespace: "kube-node-lease", Name: "kube-node-lease"}
			_, err = s.Reconcile(ctx, key)
			require.NoError(t, err)
			ns, err := e.cluster(t, "gcp").Peek(namespaces, "", "kube-node-lease")
			require.NoError(t, err)
			require.Equal(t, "platform", ns.GetLabels()["team"], "adopted, as asked")

			tc.remove(t, e, key)
			_, err = s.Reconcile(ctx, key)
			require.NoError(t, err)
			for _, c := range tc.gone {
				ns, err := e.cluster(t, c).Peek(namespaces, "", "kube-node-lease")
				require.NoError(t, err, "%s: a system namespace was deleted", c)
				require.Nil(t, ns.GetDeletionTimestamp(), "%s: a system namespace is being deleted", c)
				require.NotContains(t, ns.GetLabels(), federation.ManagedByLabel, "%s: orphaned", c)
			}
			var warned int
			for _, ev := range e.events.list() {
				if strings.Contains(ev, plan.ReasonSystemNamespace) {
					warned++
				}
			}
			require.Equal(t, len(tc.gone), warned, "one warning per cluster: %v", e.events.list())
		})
	}
}
