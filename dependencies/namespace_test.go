package dependencies_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestReconcileRefusesReservedNamespaces: a workload in a system namespace (kube-system,
// kube-public, kube-node-lease) or in the control plane's own namespace federates nothing of
// what it refers to, as no propagation policy selects there: its DependenciesResolved
// condition names the rule, and no Federated<Kind> is generated. The same workload in an
// ordinary namespace federates its ConfigMap.
func TestReconcileRefusesReservedNamespaces(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ ns, rule string }{
		{"kube-system", "system namespace"},
		{"kube-public", "system namespace"},
		{"kube-node-lease", "system namespace"},
		{"platform", "control plane's own namespace"},
		{"shop", ""},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			e := fedtest.New(t, fedtest.Options{Namespaces: []string{"platform", "shop"}})
			fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: coredns, namespace: `+tc.ns+`}, data: {Corefile: "."}}`)
			gvr := federation.DeploymentType.FederatedGVR()
			fedtest.Create(t, e.Host, gvr, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: coredns, namespace: `+tc.ns+`}
spec:
  propagateDependencies: true
  template:
    spec:
      template:
        spec:
          containers: [{name: c}]
          volumes: [{name: config, configMap: {name: coredns}}]
  placement: {clusters: [{name: a}]}`)
			u, err := e.Host.Get(ctx, gvr, tc.ns, "coredns")
			require.NoError(t, err)
			u.Object["status"] = map[string]any{"schedule": map[string]any{"clusters": []any{map[string]any{"name": "a", "replicas": int64(1)}}}}
			_, err = e.Host.UpdateStatus(ctx, gvr, u)
			require.NoError(t, err)

			d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock, ControlPlaneNamespace: "platform"})
			require.NoError(t, err)
			_, err = d.Reconcile(ctx, federation.Key{Namespace: tc.ns})
			require.NoError(t, err)

			generated := e.Host.Objects(federation.ConfigMapType.FederatedGVR())
			u, err = e.Host.Get(ctx, gvr, tc.ns, "coredns")
			require.NoError(t, err)
			obj, err := federation.FederatedObjectFromUnstructured(u)
			require.NoError(t, err)
			c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionDependenciesResolved)
			require.NotNil(t, c, "no DependenciesResolved condition")
			if tc.rule == "" {
				require.Len(t, generated, 1, "the ConfigMap of a workload in an ordinary namespace is federated")
				require.Equal(t, dependencies.ReasonResolved, c.Reason, c.Message)
				return
			}
			require.Empty(t, generated, "nothing of a workload in %s is federated", tc.ns)
			require.Equal(t, "False", string(c.Status))
			require.Equal(t, dependencies.ReasonNamespaceRefused, c.Reason)
			require.True(t, strings.Contains(c.Message, tc.ns) && strings.Contains(c.Message, tc.rule), "the message names the namespace and the rule: %s", c.Message)
		})
	}
}
