package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// web is the object of the tests in this file and the other loop_*_test.go files, in the
// namespace every API server has.
var web = federation.Key{Namespace: "default", Name: "web"}

// get reads web's federated object.
func (e *env) get(t *testing.T) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), web.Namespace, web.Name)
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return obj
}

// setAvailable sets a Cluster's status.available, as the cluster monitor would.
func (e *env) setAvailable(t *testing.T, cluster string, available map[string]string) {
	t.Helper()
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedStringMap(u.Object, available, "status", "available"))
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
}

// setMembers sets web's status.clusters as the status loop would: replicas observed per
// cluster, fresh.
func (e *env) setMembers(t *testing.T, replicas map[string]int64) {
	t.Helper()
	u, err := e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), web.Namespace, web.Name)
	require.NoError(t, err)
	var list []any
	for _, name := range []string{"aws", "azure", "gcp"} {
		if n, ok := replicas[name]; ok {
			list = append(list, map[string]any{"name": name, "replicas": n})
		}
	}
	require.NoError(t, unstructured.SetNestedSlice(u.Object, list, "status", "clusters"))
	_, err = e.host.UpdateStatus(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)
}

// webDeployment is web with replicas and a 500m CPU request per replica, on all three
// clusters.
func webDeployment(replicas string) string {
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      replicas: ` + replicas + `
      template: {spec: {containers: [{name: app, image: "app:1", resources: {requests: {cpu: 500m, memory: 1Gi}}}]}}
  placement: {clusters: [{name: aws}, {name: gcp}, {name: azure}]}
`
}

const webEven = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}
`

// TestReconcileFullClusterKeepsItsReplicas: status.available is headroom, what is left once
// running pods (this object's included) are counted. A cluster that the object's own
// replicas fill has no headroom, yet still holds them: its capacity for the object is its
// headroom plus what the object runs there, so the schedule does not change as pods start.
func TestReconcileFullClusterKeepsItsReplicas(t *testing.T) {
	for _, observed := range []bool{false, true} {
		name := "previous schedule"
		if observed {
			name = "status loop observation"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			for _, c := range []string{"aws", "gcp", "azure"} {
				e.setAvailable(t, c, map[string]string{"cpu": "1500m"}) // room for 3 replicas
			}
			e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, webEven)
			_, err := e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			want := map[string]int64{"aws": 3, "gcp": 3, "azure": 3}
			require.Equal(t, want, schedule(e.get(t)))

			// The 9 replicas start: every cluster's headroom is gone.
			for _, c := range []string{"aws", "gcp", "azure"} {
				e.setAvailable(t, c, map[string]string{"cpu": "0"})
			}
			if observed {
				e.setMembers(t, want)
			}
			_, err = e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			obj := e.get(t)
			require.Equal(t, want, schedule(obj), "the replicas that fill the clusters stay")
			c := scheduled(obj)
			require.Equal(t, metav1.ConditionTrue, c.Status, "%s: %s", c.Reason, c.Message)

			// One more replica has no room anywhere: it is reported, the 9 stay.
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 10, clusters: {"*": {weight: 1}}}
`)
			_, err = e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			obj = e.get(t)
			require.Equal(t, want, schedule(obj))
			c = scheduled(obj)
			require.Equal(t, scheduler.ReasonUnschedulable, c.Reason)
			require.Contains(t, c.Message, "1 unplaced")
		})
	}
}

// TestReconcileWithoutPreferenceCapacity: without a preference every cluster gets the
// template's replicas. A cluster that its own replicas fill keeps them, and a cluster without
// room for them is reported (Scheduled=False), never cut silently.
func TestReconcileWithoutPreferenceCapacity(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	for _, c := range []string{"aws", "gcp", "azure"} {
		e.setAvailable(t, c, map[string]string{"cpu": "3"}) // room for 6 replicas
	}
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("6"))
	_, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 6, "gcp": 6, "azure": 6}, schedule(e.get(t)))

	for _, c := range []string{"aws", "gcp", "azure"} {
		e.setAvailable(t, c, map[string]string{"cpu": "0"}) // the 6 replicas run
	}
	_, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	obj := e.get(t)
	require.Equal(t, map[string]int64{"aws": 6, "gcp": 6, "azure": 6}, schedule(obj))
	require.Equal(t, metav1.ConditionTrue, scheduled(obj).Status, scheduled(obj).Message)

	// A new object of the same shape has nothing running: the full clusters cannot take it,
	// and the condition says so.
	_, err = e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), web.Namespace, web.Name)
	require.NoError(t, err)
	require.NoError(t, e.host.Delete(ctx, federation.DeploymentType.FederatedGVR(), web.Namespace, web.Name, metav1.DeleteOptions{}))
	e.setAvailable(t, "gcp", map[string]string{"cpu": "1"}) // room for 2
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("6"))
	_, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	obj = e.get(t)
	c := scheduled(obj)
	require.Equal(t, metav1.ConditionFalse, c.Status, "a cluster cut below the template's replicas is not Scheduled: %s", c.Message)
	require.Equal(t, scheduler.ReasonUnschedulable, c.Reason)
	require.Contains(t, c.Message, "capped: aws by capacity 0, azure by capacity 0, gcp by capacity 2; 16 unplaced")
}

// TestReconcileHugeHeadroom: petabytes of headroom overflow an int64 in milli-units; the
// capacity saturates instead of wrapping around to a negative number that blamed the
// preference.
func TestReconcileHugeHeadroom(t *testing.T) {
	for _, mem := range []string{"9Pi", "100Pi", "900Ei"} {
		t.Run(mem, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			e.setAvailable(t, "aws", map[string]string{"memory": mem})
			e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, webEven)
			_, err := e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			obj := e.get(t)
			require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": 3}, schedule(obj))
			require.Equal(t, metav1.ConditionTrue, scheduled(obj).Status, scheduled(obj).Message)
		})
	}
}

// TestReconcileDrainedCluster: {maxReplicas: 0} drains a cluster; the default minReplicas
// must not turn it into an invalid preference.
func TestReconcileDrainedCluster(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}, gcp: {maxReplicas: 0}}}
`)
	res, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, res.RequeueAfter)
	obj := e.get(t)
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 0, "azure": 5}, schedule(obj))
	require.Equal(t, metav1.ConditionTrue, scheduled(obj).Status, scheduled(obj).Message)
}

// TestReconcileBadMemberNumbers: a negative replica count in status.clusters (which no API
// server writes) is the member's problem, never reported as an invalid preference.
func TestReconcileBadMemberNumbers(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, webEven)
	e.setMembers(t, map[string]int64{"aws": -2, "gcp": 3})
	_, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	obj := e.get(t)
	require.Equal(t, metav1.ConditionTrue, scheduled(obj).Status, scheduled(obj).Message)
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": 3}, schedule(obj))
}
