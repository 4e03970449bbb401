package sync_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

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
				if strings.Contains(ev, fedsync.ReasonSystemNamespace) {
					warned++
				}
			}
			require.Equal(t, len(tc.gone), warned, "one warning per cluster: %v", e.events.list())
		})
	}
}
