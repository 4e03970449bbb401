package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

var services = schema.GroupVersionResource{Version: "v1", Resource: "services"}

const frontendService = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedService
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    spec:
      selector: {app: frontend}
      ports: [{name: http, port: 80}]
  placement:
    clusters: [{name: aws}, {name: gcp}]
`

func TestServiceClusterIPIsRetained(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.typ = federation.ServiceType
	s, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock})
	require.NoError(t, err)
	e.s = s
	e.apply(t, e.typ.FederatedGVR(), frontendService)
	e.reconcile(t)
	// The member's API server allocates a cluster IP (the fake does not: do it as a member
	// controller would).
	require.NoError(t, e.cluster(t, "aws").Drift(services, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "10.0.0.7", "spec", "clusterIP")
		_ = unstructured.SetNestedStringSlice(u.Object, []string{"10.0.0.7"}, "spec", "clusterIPs")
	}))
	e.clearActions()
	e.reconcile(t)
	require.Empty(t, e.memberWrites(t, "aws"), "an allocated IP is the member's, not drift")

	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "http", "port": int64(8080)}}, "spec", "template", "spec", "ports")
	})
	e.reconcile(t)
	svc, err := e.cluster(t, "aws").Peek(services, key.Namespace, key.Name)
	require.NoError(t, err)
	ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP")
	require.Equal(t, "10.0.0.7", ip, "an update keeps the allocated IP")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	require.EqualValues(t, 8080, ports[0].(map[string]any)["port"])
}

func TestRetainReplicasLeavesAnHPAAlone(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "retainReplicas")
	})
	e.reconcile(t)
	// An HPA in aws scales the Deployment.
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(17), "spec", "replicas")
	}))
	e.clearActions()
	e.reconcile(t)
	require.Empty(t, e.memberWrites(t, "aws"))
	e.edit(t, setImage("nginx:1.22"))
	e.reconcile(t)
	require.EqualValues(t, 17, replicas(e.member(t, "aws")), "the HPA's count survives an update")
	require.Equal(t, "nginx:1.22", image(t, e.member(t, "aws")))
}

func TestScheduleDecidesClustersAndReplicas(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	// The scheduler divided 8 replicas over aws and gcp for this generation.
	u, err := e.host.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	gen := u.GetGeneration()
	u.Object["status"] = map[string]any{
		"schedule": map[string]any{"clusters": []any{
			map[string]any{"name": "aws", "replicas": int64(5)},
			map[string]any{"name": "gcp", "replicas": int64(3)},
		}},
		"conditions": []any{map[string]any{"type": federation.ConditionScheduled, "status": "True", "reason": "Scheduled",
			"message": "", "observedGeneration": gen, "lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z")}},
	}
	_, err = e.host.UpdateStatus(ctx, e.typ.FederatedGVR(), u)
	require.NoError(t, err)
	e.reconcile(t)
	require.EqualValues(t, 5, replicas(e.member(t, "aws")))
	require.EqualValues(t, 4, replicas(e.member(t, "gcp")), "overrides apply after the schedule")
	require.Nil(t, e.member(t, "azure"), "not in the schedule")
	fed := e.fed(t)
	require.NotNil(t, fed.Status.Schedule, "sync keeps the scheduler's fields")
	require.Len(t, fed.Status.Schedule.Clusters, 2)

	// A new generation the scheduler has not seen yet: sync waits instead of pushing the
	// template's replica count.
	e.edit(t, setImage("nginx:1.22"))
	e.clearActions()
	res := e.reconcile(t)
	require.Positive(t, res.RequeueAfter)
	require.Empty(t, e.memberWrites(t, "aws"))
}
