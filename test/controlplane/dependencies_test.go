package controlplane_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
)

// TestDependenciesOnRealServers: a FederatedDeployment with propagateDependencies brings its
// host ConfigMap and Secret to the cluster it is placed in, and a placement change moves all
// three, on real API servers.
func TestDependenciesOnRealServers(t *testing.T) {
	ns := fmt.Sprintf("deps-%d", runs.Add(1))
	env, members := setup(t, ns)
	dependenciesScenario(t, env, members, ns, env.Config(hostName))
}

// dependenciesScenario is TestDependenciesOnRealServers in namespace ns, with the control
// plane reaching the host through cpConfig.
func dependenciesScenario(t *testing.T, env *testenv.Env, members map[string]*kube.Client, ns string, cpConfig *rest.Config) {
	t.Helper()
	ctx := context.Background()
	host, err := kube.New(env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	cpHost, set, err := kube.Connect(cpConfig, kube.ClusterSetOptions{})
	require.NoError(t, err)
	opts := controlplane.Options{
		Registerer: prometheus.NewRegistry(),
		Types:      []federation.TypeConfig{federation.DeploymentType, federation.ConfigMapType, federation.SecretType, federation.ServiceAccountType, federation.PersistentVolumeClaimType},
	}
	opts.Disable.DNS = true
	cp, err := controlplane.New(cpHost, set, opts)
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cp.Run(rctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	fedtest.Create(t, host, federation.ConfigMapType.TargetGVR(), fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: web-config, namespace: %s}, data: {level: info}}`, ns))
	fedtest.Create(t, host, federation.SecretGVR, fmt.Sprintf(`{apiVersion: v1, kind: Secret, metadata: {name: web-token, namespace: %s}, data: {token: c2VjcmV0}}`, ns))
	fedtest.Create(t, host, fedDeployments, fmt.Sprintf(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: %s}
spec:
  propagateDependencies: true
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
          - name: web
            image: "nginx:1.27"
            envFrom: [{secretRef: {name: web-token}}]
          volumes: [{name: config, configMap: {name: web-config}}]
  placement: {clusters: [{name: m1}]}
`, ns))
	has := func(m string) bool {
		_, d := members[m].Get(ctx, deployments, ns, "web")
		_, c := members[m].Get(ctx, federation.ConfigMapType.TargetGVR(), ns, "web-config")
		_, s := members[m].Get(ctx, federation.SecretGVR, ns, "web-token")
		return d == nil && c == nil && s == nil
	}
	gone := func(m string) bool {
		_, d := members[m].Get(ctx, deployments, ns, "web")
		_, c := members[m].Get(ctx, federation.ConfigMapType.TargetGVR(), ns, "web-config")
		_, s := members[m].Get(ctx, federation.SecretGVR, ns, "web-token")
		return apierrors.IsNotFound(d) && apierrors.IsNotFound(c) && apierrors.IsNotFound(s)
	}
	fedtest.Eventually(t, "m1 runs the Deployment with its ConfigMap and Secret", func() bool { return has("m1") && gone("m2") })
	fedtest.Eventually(t, "DependenciesResolved True", func() bool { return condition(t, host, ns, federation.ConditionDependenciesResolved) == "True" })

	u, err := host.Get(ctx, fedDeployments, ns, "web")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "m2"}}, "spec", "placement", "clusters"))
	_, err = host.Update(ctx, fedDeployments, u)
	require.NoError(t, err)
	// Graceful eviction: m1 keeps its copy, and the dependencies with it, until m2 reports its
	// replicas available. A real server runs no Deployment controller: the test writes m2's
	// status as one would.
	fedtest.Eventually(t, "all three in m2, and still in m1 while m2 is not available", func() bool { return has("m2") && has("m1") })
	fedtest.Eventually(t, "m2's Deployment status written", func() bool {
		u, err := members["m2"].Get(ctx, deployments, ns, "web")
		if err != nil {
			return false
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		u.Object["status"] = map[string]any{"observedGeneration": u.GetGeneration(), "replicas": n,
			"updatedReplicas": n, "readyReplicas": n, "availableReplicas": n}
		_, err = members["m2"].UpdateStatus(ctx, deployments, u)
		return err == nil
	})
	fedtest.Eventually(t, "all three moved to m2", func() bool { return has("m2") && gone("m1") })
}
