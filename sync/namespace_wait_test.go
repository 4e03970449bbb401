package sync_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

const productionNamespace = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedNamespace
metadata: {name: production, namespace: production}
spec:
  template: {metadata: {labels: {team: shop}}}
  placement: {clusters: [{name: aws}]}
`

// An object whose namespace a FederatedNamespace governs waits for it where the
// FederatedNamespace places it; where it does not, the reason says the namespace will not come
// rather than promise it, and names the FederatedNamespace and the cluster.
func TestWaitingForANamespaceSaysWhenItWillNotCome(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, federation.NamespaceType.FederatedGVR(), productionNamespace)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	res := e.reconcile(t)
	fed := e.fed(t)
	got := propagation(fed)
	require.Equal(t, plan.ReasonWaitingForNamespace+"@0", got["aws"])
	for _, c := range []string{"gcp", "azure"} {
		require.Equal(t, plan.ReasonNamespaceNotPlaced+"@0", got[c], c)
		for _, m := range fed.Status.Clusters {
			if m.Name == c {
				require.Contains(t, m.Message, `FederatedNamespace production/production`)
				require.Contains(t, m.Message, `cluster "`+c+`"`)
				require.False(t, strings.Contains(m.Message, "creates it"), "promises a namespace that never comes: %s", m.Message)
			}
		}
	}
	require.Positive(t, res.RequeueAfter)
	require.LessOrEqual(t, res.RequeueAfter, fedsync.DefaultResyncPeriod/10, "a waiting object is looked at again well before the resync")
}

// An object waiting for its namespace is synced as soon as the namespace appears in the member
// (its FederatedNamespace's Syncer creates it), not at the next resync: the clock never moves.
func TestObjectWaitingForANamespaceIsWokenWhenItAppears(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, federation.NamespaceType.FederatedGVR(), productionNamespace)
	stop := e.running(t)
	defer func() { require.NoError(t, stop()) }()
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t, "waiting for the namespace", func() bool { return propagation(e.fed(t))["aws"] == plan.ReasonWaitingForNamespace+"@0" })

	ns := newNamespaceSyncer(t, e)
	_, err := ns.Reconcile(ctx, federation.Key{Namespace: "production", Name: "production"})
	require.NoError(t, err)
	require.NotNil(t, e.peekNamespace(t, "aws", "production"))
	fedtest.Eventually(t, "created in aws once its namespace is there", func() bool { return e.member(t, "aws") != nil })
	fedtest.Eventually(t, "in sync in aws", func() bool { return propagation(e.fed(t))["aws"] == "@1" })
}
