package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// TestPodMetricsSeries: metrics.k8s.io serves each pod's usage series at the cluster's clock,
// labelled as the pod, selected by label as metrics-server's List; a pod with no point yet
// has no PodMetrics; a cluster without a series set serves no metrics API at all.
func TestPodMetricsSeries(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	c := fake.NewCluster("eu")
	c.SetClock(clk)
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")

	_, err := c.List(ctx, fake.PodMetricsGVR, "shop", metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "no metrics-server yet: %v", err)

	require.NoError(t, c.Apply(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
spec: {containers: [{name: app, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: shop, labels: {app: web}}
spec: {containers: [{name: app, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db-1, namespace: shop, labels: {app: db}}
spec: {containers: [{name: app, image: postgres}]}
`))
	_, err = c.Get(ctx, podsGVR, "shop", "web-1")
	require.NoError(t, err)
	use := func(cpu string) map[string]corev1.ResourceList {
		return map[string]corev1.ResourceList{"app": {corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	c.SetPodMetrics("shop", "web-1", fake.PodMetricsPoint{At: t0, Containers: use("100m")}, fake.PodMetricsPoint{At: t0.Add(time.Minute), Containers: use("900m")})
	c.SetPodMetrics("shop", "web-2", fake.PodMetricsPoint{At: t0.Add(30 * time.Second), Containers: use("200m")})
	c.SetPodMetrics("shop", "db-1", fake.PodMetricsPoint{At: t0, Containers: use("1")})

	usage := func() map[string]string {
		list, err := c.List(ctx, fake.PodMetricsGVR, "shop", metav1.ListOptions{LabelSelector: "app=web"})
		require.NoError(t, err)
		out := map[string]string{}
		for _, m := range list.Items {
			require.Equal(t, "PodMetrics", m.GetKind())
			require.Equal(t, map[string]string{"app": "web"}, m.GetLabels())
			cs := m.Object["containers"].([]any)
			out[m.GetName()] = cs[0].(map[string]any)["usage"].(map[string]any)["cpu"].(string)
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"web-1": "100m"}, usage()); diff != "" {
		t.Errorf("at t0 (-want +got):\n%s", diff)
	}
	clk.Step(time.Minute)
	if diff := cmp.Diff(map[string]string{"web-1": "900m", "web-2": "200m"}, usage()); diff != "" {
		t.Errorf("at t0+1m (-want +got):\n%s", diff)
	}
	res, err := c.ServedResources(ctx)
	require.NoError(t, err)
	require.Contains(t, res, metav1.APIResource{Name: "pods", Group: "metrics.k8s.io", Version: "v1beta1", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}})

	c.Partition()
	_, err = c.List(ctx, fake.PodMetricsGVR, "shop", metav1.ListOptions{})
	require.True(t, errors.Is(err, federation.ErrUnreachable), "partitioned: %v", err)
}

// TestCustomAndExternalMetrics: custom.metrics.k8s.io answers a Pods metric for the pods a
// selector selects and an Object metric for one object; external.metrics.k8s.io lists the
// series a selector selects; each only once a series of its own was set.
func TestCustomAndExternalMetrics(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	c := fake.NewCluster("eu")
	c.SetClock(clk)
	_, err := c.GetCustomMetric(ctx, "shop", "pods", "*", "qps", "app=web", "")
	require.True(t, apierrors.IsNotFound(err), "no adapter yet: %v", err)

	require.NoError(t, c.Apply(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
spec: {containers: [{name: app, image: nginx}]}
`))
	c.SetCustomMetric("shop", "pods", "web-1", "qps", fake.MetricPoint{At: t0, Value: resource.MustParse("20")})
	c.SetCustomMetric("shop", "ingresses.networking.k8s.io", "main", "rps", fake.MetricPoint{At: t0, Value: resource.MustParse("300")})
	c.SetExternalMetric("shop", "queue", map[string]string{"queue": "orders"}, fake.MetricPoint{At: t0, Value: resource.MustParse("80")})
	c.SetExternalMetric("shop", "queue", map[string]string{"queue": "mail"}, fake.MetricPoint{At: t0, Value: resource.MustParse("5")})

	pods, err := c.GetCustomMetric(ctx, "shop", "pods", "*", "qps", "app=web", "")
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	require.Equal(t, "20", pods.Items[0].Object["value"])
	obj, err := c.GetCustomMetric(ctx, "shop", "ingresses.networking.k8s.io", "main", "rps", "", "")
	require.NoError(t, err)
	require.Equal(t, "300", obj.Items[0].Object["value"])
	_, err = c.GetCustomMetric(ctx, "shop", "ingresses.networking.k8s.io", "other", "rps", "", "")
	require.True(t, apierrors.IsNotFound(err), "no such object's metric: %v", err)

	ext, err := c.List(ctx, fake.ExternalMetricsGroupVersion.WithResource("queue"), "shop", metav1.ListOptions{LabelSelector: "queue=orders"})
	require.NoError(t, err)
	require.Len(t, ext.Items, 1)
	require.Equal(t, "80", ext.Items[0].Object["value"])
}
