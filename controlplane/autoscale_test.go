package controlplane_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestAutoscalerRunsInTheControlPlane: a control plane runs the autoscaler with its other
// loops. A workload's two pods in eu at 90% of a 60% cpu target make the fleet total 3,
// which the scheduler divides and sync pushes: eu's Deployment runs 3. Disable.Autoscale
// leaves it out.
func TestAutoscalerRunsInTheControlPlane(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eu, _ := e.fleet.Member("eu")
	for _, c := range []federation.ClusterClient{e.host, eu} {
		fedtest.Create(t, c, federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	}
	cp, err := controlplane.New(e.host, e.fleet, e.options(federation.DeploymentType))
	require.NoError(t, err)
	require.Contains(t, states(cp), controlplane.AutoscaleLoop)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()

	fedtest.Create(t, e.host, fedDeploys, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment, metadata: {name: web, namespace: shop},
  spec: {template: {spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}}},
    placement: {clusters: [{name: eu}]}}}`)
	fedtest.Create(t, e.host, federation.ReplicaSchedulingPreferenceGVR, `{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference, metadata: {name: web, namespace: shop},
  spec: {targetKind: FederatedDeployment, totalReplicas: 2, clusters: {eu: {weight: 1}},
    autoscale: {maxReplicas: 10, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]}}}`)
	replicas := func() int64 {
		u, err := eu.Get(ctx, federation.DeploymentType.TargetGVR(), "shop", "web")
		if err != nil {
			return -1
		}
		n, _ := u.Object["spec"].(map[string]any)["replicas"].(int64)
		return n
	}
	stepUntil(t, e.clock, time.Second, "eu runs the first total, 2", func() bool { return replicas() == 2 })

	// What the member's controllers would run: two pods, each using 0.9 of the 1 cpu it asks.
	started := e.clock.Now().Add(-time.Hour).Format(time.RFC3339)
	for i := 1; i <= 2; i++ {
		// Apply sets the status too, as the member's kubelet would.
		require.NoError(t, eu.Apply(fmt.Sprintf(`{apiVersion: v1, kind: Pod,
  metadata: {name: web-%d, namespace: shop, labels: {app: web}},
  spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]},
  status: {phase: Running, startTime: %q, conditions: [{type: Ready, status: "True", lastTransitionTime: %q}]}}`, i, started, started)))
		eu.SetPodMetrics("shop", fmt.Sprintf("web-%d", i), fake.PodMetricsPoint{At: e.clock.Now(),
			Containers: map[string]corev1.ResourceList{"app": {corev1.ResourceCPU: resource.MustParse("900m")}}})
	}
	stepUntilf(t, e.clock, 15*time.Second, func() string {
		rsp, _ := e.host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, "shop", "web")
		return fmt.Sprintf("the autoscaler's total, 3, runs in eu; eu runs %d; the preference: %v", replicas(), rsp.Object["status"])
	}, func() bool { return replicas() == 3 })

	o := e.options(federation.DeploymentType)
	o.Disable.Autoscale = true
	off, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	require.NotContains(t, states(off), controlplane.AutoscaleLoop)
}
