package controlplane_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// A plain Deployment and a ClusterPropagationPolicy on a real host: the control plane's
// propagation loop generates the FederatedDeployment, the members get the Deployment, the
// host Deployment's status shows the fleet's ready replicas once the members report them
// (the test writes their status as the Deployment controller would), and deleting the
// Deployment deletes the generated object and the member copies.
func TestPropagationPolicyOnRealServers(t *testing.T) {
	ns := fmt.Sprintf("policy-%d", runs.Add(1))
	env, members := setup(t, ns)
	ctx := context.Background()
	host, err := kube.New(env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	cpHost, set, err := kube.Connect(env.Config(hostName), kube.ClusterSetOptions{})
	require.NoError(t, err)
	cp, err := controlplane.New(cpHost, set, controlplane.Options{
		Types: []federation.TypeConfig{federation.DeploymentType}, Registerer: prometheus.NewRegistry(),
		Disable: controlplane.Parts{DNS: true},
	})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cp.Run(rctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	fedtest.Create(t, host, federation.ClusterPropagationPolicyGVR, fmt.Sprintf(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %s, name: api}]
  placement: {clusters: [{name: m1}, {name: m2}]}`, ns, ns))
	defer func() {
		_ = host.Delete(ctx, federation.ClusterPropagationPolicyGVR, "", ns, metav1.DeleteOptions{})
	}()
	fedtest.Create(t, host, deployments, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: %s, labels: {app: api}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "api:1"}]}`, ns))

	for _, m := range memberNames {
		fedtest.Eventually(t, m+": the Deployment created", func() bool {
			_, err := members[m].Get(ctx, deployments, ns, "api")
			return err == nil
		})
	}
	fed, err := host.Get(ctx, fedDeployments, ns, "api")
	require.NoError(t, err)
	require.Equal(t, federation.GeneratedByPropagation, fed.GetLabels()[federation.GeneratedByLabel])
	require.Equal(t, "cluster/"+ns, fed.GetAnnotations()[federation.PolicyAnnotation])

	for _, m := range memberNames {
		u, err := members[m].Get(ctx, deployments, ns, "api")
		require.NoError(t, err)
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		u.Object["status"] = map[string]any{
			"observedGeneration": u.GetGeneration(),
			"replicas":           n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n,
		}
		_, err = members[m].UpdateStatus(ctx, deployments, u)
		require.NoError(t, err)
	}
	fedtest.Eventually(t, "the host Deployment's status shows the fleet's 4 ready replicas", func() bool {
		u, err := host.Get(ctx, deployments, ns, "api")
		require.NoError(t, err)
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return ready == 4 && observed == u.GetGeneration()
	})

	require.NoError(t, host.Delete(ctx, deployments, ns, "api", metav1.DeleteOptions{}))
	fedtest.Eventually(t, "the generated object and the member copies deleted", func() bool {
		_, err := host.Get(ctx, fedDeployments, ns, "api")
		if !apierrors.IsNotFound(err) {
			return false
		}
		for _, m := range memberNames {
			if _, err := members[m].Get(ctx, deployments, ns, "api"); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
}
