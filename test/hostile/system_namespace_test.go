package hostile_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// A FederatedNamespace that adopted a system namespace, then is deleted, would delete that
// namespace in every member (kube-node-lease: where the kubelets' heartbeats live; the API
// server refuses only default, kube-system and kube-public). Sync orphans it instead and
// warns, per cluster; the FederatedNamespace goes; the well-formed neighbour is untouched.
func TestDeletingAFederatedSystemNamespaceKeepsIt(t *testing.T) {
	for _, name := range []string{"kube-node-lease", "kube-system", "default", "kube-public"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.host.Create(ctx, federation.NamespaceType.FederatedGVR(), obj(t, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedNamespace,
metadata: {name: `+name+`, namespace: `+name+`, annotations: {federation.k8s.io/adopt: "true"}},
spec: {template: {metadata: {labels: {team: platform}}}, placement: {clusterSelector: {}}}}`))
			require.NoError(t, err)
			e.goodNeighbour(t)
			e.rounds(t, 3)
			require.NoError(t, e.host.Delete(ctx, federation.NamespaceType.FederatedGVR(), name, name, metav1.DeleteOptions{}))
			e.rounds(t, 3)

			_, err = e.host.Peek(federation.NamespaceType.FederatedGVR(), name, name)
			require.True(t, apierrors.IsNotFound(err), "the FederatedNamespace is gone: %v", err)
			for _, c := range e.fleet.Names() {
				m, _ := e.fleet.Member(c)
				ns, err := m.Peek(federation.NamespaceType.TargetGVR(), "", name)
				require.NoError(t, err, "%s: %s was deleted", c, name)
				require.Nil(t, ns.GetDeletionTimestamp(), "%s: %s is being deleted", c, name)
				require.NotContains(t, ns.GetLabels(), federation.ManagedByLabel, "%s: orphaned", c)
				require.True(t, e.events.has("Warning "+fedsync.ReasonSystemNamespace+" "+name+"/"+name+": ", `cluster "`+c+`"`), "no warning for %s: %v", c, e.events.list())
			}
			e.requireGoodNeighbour(t)
		})
	}
}
