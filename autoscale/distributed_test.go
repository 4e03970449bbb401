package autoscale_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

const distributed = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 6
  clusters: {"*": {weight: 1}}
  autoscale:
    mode: Distributed
    minReplicas: 3
    maxReplicas: 30
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
`

// memberHPA returns the HorizontalPodAutoscaler web in member m, or nil.
func (e *env) memberHPA(t *testing.T, m string) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	u, err := e.Member(t, m).Get(ctx, autoscale.HPAGVR, "shop", "web")
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, h))
	return h
}

// TestDistributedMode: every member gets a HorizontalPodAutoscaler bounded by its share of
// the fleet's bounds, only once the federated object keeps the members' replicas; the sum of
// what the members run is shown, a member HPA that cannot compute its metrics (its desired
// 0) is shown at what runs, never 0; an HPA that is not the autoscaler's is left alone; back
// in Central mode the autoscaler's HPAs go and nothing else.
func TestDistributedMode(t *testing.T) {
	e := newEnv(t, distributed, autoscale.Options{})
	guard := fedtest.NewDeleteGuard() // every HPA delete goes through the gate
	for _, m := range []string{"ap", "eu", "us"} {
		guard.Watch(e.Member(t, m), m)
	}
	require.NoError(t, e.Member(t, "us").Apply(`
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 4}
`))

	// Without spec.retainReplicas sync would undo what member HPAs do: none is written.
	require.NoError(t, e.pass(t))
	c := e.condition(t, federation.ConditionScalingActive)
	require.Equal(t, autoscale.ReasonRetainReplicasRequired, c.Reason)
	require.Nil(t, e.memberHPA(t, "ap"))
	require.Equal(t, []string{"Warning RetainReplicasRequired: " + c.Message}, e.events.take())

	fedtest.Apply(t, e.Host, fedGVR, strings.Replace(web, "  placement:", "  retainReplicas: true\n  placement:", 1))
	require.NoError(t, e.pass(t))
	for _, m := range []string{"ap", "eu"} {
		h := e.memberHPA(t, m)
		require.NotNil(t, h, m)
		require.Equal(t, int32(1), *h.Spec.MinReplicas, m)
		require.Equal(t, int32(10), h.Spec.MaxReplicas, m)
		require.Equal(t, "Deployment", h.Spec.ScaleTargetRef.Kind)
		require.Equal(t, federation.ManagedByValue, h.Labels[federation.ManagedByLabel])
		require.Equal(t, string(e.rsp(t).UID), h.Annotations[federation.AutoscalerAnnotation])
	}
	require.Equal(t, int32(4), e.memberHPA(t, "us").Spec.MaxReplicas, "not the autoscaler's: left as it is")
	st := e.rsp(t).Status.Autoscale
	require.Nil(t, st.DesiredReplicas, "the members decide; no fleet total")
	require.Equal(t, int32(6), st.CurrentReplicas)
	require.Contains(t, st.Clusters[2].Message, "not the autoscaler's")

	// eu's HPA scaled it to 4, then lost its metrics: its status says desired 0.
	e.setPods(t, e.Member(t, "eu"), 4)
	h := e.memberHPA(t, "eu")
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 4, DesiredReplicas: 0, Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: "FailedGetResourceMetric", Message: "no metrics"},
	}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(h)
	require.NoError(t, err)
	_, err = e.Member(t, "eu").UpdateStatus(ctx, autoscale.HPAGVR, &unstructured.Unstructured{Object: obj})
	require.NoError(t, err)
	_, err = e.a.Reconcile(ctx, key)
	require.NoError(t, err)
	st = e.rsp(t).Status.Autoscale
	require.Equal(t, int32(8), st.CurrentReplicas, "2 + 4 + 2: the members' sum, shown, not fought")
	eu := st.Clusters[1]
	require.Equal(t, "eu", eu.Name)
	require.Equal(t, int32(4), *eu.DesiredReplicas, "an HPA that cannot compute its metrics never counts as 0")
	require.Equal(t, map[string]int64{"ap": 2, "eu": 2, "us": 2}, e.shares(t), "the scheduler's shares do not move: the members keep their replicas")

	// Back to Central: the autoscaler's HPAs go, the one that is not its stays.
	fedtest.Apply(t, e.Host, rspGVR, cpu60)
	require.NoError(t, e.pass(t))
	require.Nil(t, e.memberHPA(t, "ap"))
	require.Nil(t, e.memberHPA(t, "eu"))
	require.NotNil(t, e.memberHPA(t, "us"))
	guard.Check(t, "github.com/fedkit/fedkit/autoscale")
}
