package autoscale_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
	"github.com/fedkit/fedkit/scheduler"
)

var (
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	servicesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	podMetricsGVR  = schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}
)

// metricsServer is a small metrics.k8s.io server, as metrics-server serves it: discovery of
// its group version and a List of PodMetrics per namespace, with the pods' labels. Usage is
// what the test sets, per pod.
type metricsServer struct {
	mu     gosync.Mutex
	usage  map[string]string // pod -> cpu
	labels map[string]map[string]string
}

func (m *metricsServer) set(pod, cpu string, podLabels map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage[pod], m.labels[pod] = cpu, podLabels
}

func (m *metricsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const gv = "/apis/metrics.k8s.io/v1beta1"
	switch {
	case r.URL.Path == gv:
		writeJSON(w, metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "metrics.k8s.io/v1beta1",
			APIResources: []metav1.APIResource{{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}}},
		})
	case strings.HasPrefix(r.URL.Path, gv+"/namespaces/") && strings.HasSuffix(r.URL.Path, "/pods"):
		ns := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, gv+"/namespaces/"), "/pods")
		sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, m.list(ns, sel))
	default:
		http.NotFound(w, r)
	}
}

func (m *metricsServer) list(ns string, sel labels.Selector) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC3339)
	var items []any
	for pod, cpu := range m.usage {
		if !sel.Matches(labels.Set(m.labels[pod])) {
			continue
		}
		items = append(items, map[string]any{
			"metadata":  map[string]any{"name": pod, "namespace": ns, "labels": m.labels[pod], "creationTimestamp": now},
			"timestamp": now, "window": "30s",
			"containers": []any{map[string]any{"name": "app", "usage": map[string]any{"cpu": cpu, "memory": "10Mi"}}},
		})
	}
	return map[string]any{"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": map[string]any{}, "items": items}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// clusterSet hands out the members' real clients by name.
type clusterSet map[string]*kube.Client

func (s clusterSet) Client(name string) (federation.ClusterClient, error) {
	c, ok := s[name]
	if !ok {
		return nil, fmt.Errorf("test: %q: %w", name, federation.ErrClusterNotFound)
	}
	return c, nil
}

// serveMetrics makes srv the member's metrics.k8s.io, as an aggregated APIService: a Service
// of type ExternalName for localhost (no kube-proxy or endpoints are needed to reach it) and
// the APIService v1beta1.metrics.k8s.io on it, then waits for the member to serve it.
func serveMetrics(t *testing.T, member *kube.Client, srv *httptest.Server) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	fedtest.Create(t, member, servicesGVR, `{apiVersion: v1, kind: Service, metadata: {name: metrics-server, namespace: kube-system}, spec: {type: ExternalName, externalName: localhost}}`)
	fedtest.Create(t, member, apiServicesGVR, fmt.Sprintf(`
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {namespace: kube-system, name: metrics-server, port: %s}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
`, u.Port()))
	fedtest.Eventually(t, "the member serves metrics.k8s.io through the aggregator", func() bool {
		_, err := member.List(context.Background(), podMetricsGVR, "shop", metav1.ListOptions{})
		return err == nil
	})
}

// runPods creates the member's Deployment shop/web with n Running, Ready pods that started
// ten minutes ago (past the cpu initialization period), as its controllers would.
func runPods(t *testing.T, member *kube.Client, n int) {
	t.Helper()
	ctx := context.Background()
	fedtest.Create(t, member, namespacesGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	fedtest.Create(t, member, federation.DeploymentType.TargetGVR(), `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]}
`)
	d, err := member.Get(ctx, federation.DeploymentType.TargetGVR(), "shop", "web")
	require.NoError(t, err)
	d.Object["status"] = map[string]any{"replicas": int64(n), "readyReplicas": int64(n), "availableReplicas": int64(n)}
	_, err = member.UpdateStatus(ctx, federation.DeploymentType.TargetGVR(), d)
	require.NoError(t, err)
	started := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	for i := range n {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "shop", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
		require.NoError(t, err)
		created, err := member.Create(ctx, podsGVR, &unstructured.Unstructured{Object: obj})
		require.NoError(t, err)
		created.Object["status"] = map[string]any{
			"phase": "Running", "startTime": started.UTC().Format(time.RFC3339),
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": started.UTC().Format(time.RFC3339)}},
		}
		_, err = member.UpdateStatus(ctx, podsGVR, created)
		require.NoError(t, err)
	}
}

// TestScaleUpThroughAggregatedMetricsAPI: a member whose metrics.k8s.io is an aggregated
// APIService reports its two pods at 90% of a 60% cpu target through its kube-apiserver;
// the autoscaler reads them with the member's ClusterClient, writes 3 to the preference's
// status, and the scheduler divides 3.
func TestScaleUpThroughAggregatedMetricsAPI(t *testing.T) {
	env, host := hostWithCRDs(t, "shop")
	member := env.Client(t, memberName)
	metrics := &metricsServer{usage: map[string]string{}, labels: map[string]map[string]string{}}
	srv := httptest.NewTLSServer(metrics)
	defer srv.Close()
	runPods(t, member, 2)
	for i := range 2 {
		metrics.set(fmt.Sprintf("web-%d", i), "900m", map[string]string{"app": "web"})
	}
	serveMetrics(t, member, srv)

	env.Register(t, host, memberName, memberName, "fedkit-system")
	testenv.MarkReady(t, host, memberName)
	fedtest.Create(t, host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]}}
  placement: {clusters: [{name: member}]}
`)
	fedtest.Create(t, host, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 2
  clusters: {"*": {weight: 1}}
  autoscale:
    minReplicas: 1
    maxReplicas: 10
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
`)
	ctx := context.Background()
	key := federation.Key{Namespace: "shop", Name: "web"}
	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
	require.NoError(t, err)
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)

	a, err := autoscale.New(host, clusterSet{memberName: member}, autoscale.Options{})
	require.NoError(t, err)
	_, err = a.Reconcile(ctx, key)
	require.NoError(t, err)
	u, err := host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, "shop", "web")
	require.NoError(t, err)
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	require.NoError(t, err)
	require.NotNil(t, rsp.Status.Autoscale)
	require.Equal(t, int64(3), federation.FleetTotal(rsp), "conditions: %+v", rsp.Status.Autoscale.Conditions)

	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	fu, err := host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
	require.NoError(t, err)
	fed, err := federation.FederatedObjectFromUnstructured(fu)
	require.NoError(t, err)
	require.Equal(t, int64(3), fed.Status.Schedule.Clusters[0].Replicas)
}
