package scheduler_test

import (
	"context"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
)

var (
	ctx = context.Background()
	key = federation.Key{Namespace: "production", Name: "app-frontend"}
	now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
)

// env is a fake host with three registered member Clusters.
type env struct {
	host  *fake.Cluster
	clock *clocktesting.FakeClock
	s     *scheduler.Scheduler
}

func newEnv(t *testing.T, typ federation.TypeConfig) *env {
	t.Helper()
	f := fedtest.New(t, fedtest.Options{Now: now, Namespaces: []string{key.Namespace}, Members: []fedtest.Member{
		{Name: "aws", Labels: map[string]string{federation.RegionLabel: "us-east-1"}},
		{Name: "gcp", Labels: map[string]string{federation.RegionLabel: "europe-west1"}},
		{Name: "azure", Labels: map[string]string{federation.RegionLabel: "southeastasia"}},
	}})
	e := &env{host: f.Host, clock: f.Clock}
	s, err := scheduler.New(e.host, typ, scheduler.Options{Clock: e.clock})
	require.NoError(t, err)
	e.s = s
	return e
}

func (e *env) createCluster(t *testing.T, c federation.Cluster) {
	t.Helper()
	u, err := federation.ToUnstructured(&c)
	require.NoError(t, err)
	status := u.Object["status"]
	created, err := e.host.Create(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	created.Object["status"] = status
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, created)
	require.NoError(t, err)
}

// apply creates or replaces an object on the host from YAML.
func (e *env) apply(t *testing.T, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	fedtest.Apply(t, e.host, gvr, doc)
}

func (e *env) federated(t *testing.T, typ federation.TypeConfig) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Get(ctx, typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return obj
}

// schedule is the division status.schedule records: a cluster under eviction counts at the
// eviction's target, not at what it keeps meanwhile (evict_test.go tests that), and leaves
// the map at 0.
func schedule(obj *federation.FederatedObject) map[string]int64 {
	if obj.Status.Schedule == nil {
		return nil
	}
	out := map[string]int64{}
	for _, c := range obj.Status.Schedule.Clusters {
		out[c.Name] = c.Replicas
	}
	for _, e := range obj.Status.Schedule.Evictions {
		if e.Release {
			continue
		}
		out[e.Cluster] = e.Replicas
		if e.Replicas == 0 {
			delete(out, e.Cluster)
		}
	}
	return out
}

func scheduled(obj *federation.FederatedObject) metav1.Condition {
	if c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled); c != nil {
		return *c
	}
	return metav1.Condition{}
}

const frontend = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    spec:
      replicas: 6
      template: {spec: {containers: [{name: nginx, image: "nginx:1.21", resources: {requests: {cpu: 500m}}}]}}
  placement:
    clusters: [{name: aws}, {name: gcp}, {name: azure}]
`

const rsp = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  clusters:
    "*": {weight: 1}
    aws: {minReplicas: 2, maxReplicas: 6, weight: 2}
`

func TestReconcileWithoutPreferenceDuplicates(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)

	res, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter, "without a preference nothing needs rebalancing")
	obj := e.federated(t, federation.DeploymentType)
	if diff := cmp.Diff(map[string]int64{"aws": 6, "gcp": 6, "azure": 6}, schedule(obj)); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	c := scheduled(obj)
	require.Equal(t, metav1.ConditionTrue, c.Status)
	require.Equal(t, scheduler.ReasonScheduled, c.Reason)
	require.Equal(t, obj.Generation, c.ObservedGeneration)
	require.Equal(t, now, c.LastTransitionTime.Time.UTC())
	require.Contains(t, c.Message, "6 replicas each on 3 of 3 clusters")
}

func TestReconcileWithPreference(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, rsp)

	res, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, federation.DefaultRebalancePeriod, res.RequeueAfter)
	obj := e.federated(t, federation.DeploymentType)

	// The loop must agree with the pure function given the same inputs (minReplicas defaulted
	// to 1, the clusters in placement order: name ascending).
	one := int64(1)
	plan, err := scheduler.Divide(scheduler.Request{
		Key: key.String(), TotalReplicas: 9,
		Clusters: []scheduler.ClusterState{{Name: "aws"}, {Name: "azure"}, {Name: "gcp"}},
		Preferences: map[string]federation.ClusterPreferences{
			"*":   {Weight: 1, MinReplicas: &one},
			"aws": {MinReplicas: ptr(int64(2)), MaxReplicas: ptr(int64(6)), Weight: 2},
		},
	})
	require.NoError(t, err)
	if diff := cmp.Diff(plan.Replicas, schedule(obj)); diff != "" {
		t.Errorf("schedule (-Divide +loop):\n%s", diff)
	}
	require.Equal(t, map[string]int64{"aws": 5, "azure": 2, "gcp": 2}, schedule(obj))
	require.Contains(t, scheduled(obj).Message, "9/9 replicas on 3 of 3 clusters (Webster, Weighted)")

	// A second pass with nothing changed writes nothing.
	e.host.ClearActions()
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	for _, a := range e.host.Actions() {
		require.NotEqual(t, fake.VerbUpdateStatus, a.Verb, "an unchanged schedule must not be written: %s", a)
	}
}

func TestReconcileInvalidPreferenceKeepsSchedule(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, rsp)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	good := schedule(e.federated(t, federation.DeploymentType))

	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  clusters: {aws: {minReplicas: 4, maxReplicas: 2}}
`)
	_, err = e.s.Reconcile(ctx, key)
	require.Error(t, err)
	require.True(t, federation.IsTerminal(err), "an invalid preference is not worth retrying: %v", err)
	require.ErrorIs(t, err, federation.ErrInvalidObject)

	obj := e.federated(t, federation.DeploymentType)
	require.Equal(t, good, schedule(obj), "the last good schedule must stay")
	c := scheduled(obj)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, scheduler.ReasonInvalidPreference, c.Reason)
	require.Contains(t, c.Message, "spec.clusters[aws].maxReplicas")
}

func TestReconcileInvalidPlacement(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template: {spec: {replicas: 2}}
  placement: {clusterSelector: {matchExpressions: [{key: region, operator: Near}]}}
`)
	_, err := e.s.Reconcile(ctx, key)
	require.True(t, federation.IsTerminal(err))
	c := scheduled(e.federated(t, federation.DeploymentType))
	require.Equal(t, scheduler.ReasonInvalidPlacement, c.Reason)
	require.Contains(t, c.Message, "spec.placement.clusterSelector")
}

func TestReconcileLeavesOutUnreadyClustersAndExplains(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "gcp")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"type": "Ready", "status": "False", "reason": "ClusterUnreachable", "message": "no heartbeat",
		"lastTransitionTime": "2026-11-29T00:00:00Z",
	}}, "status", "conditions"))
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, rsp)

	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	obj := e.federated(t, federation.DeploymentType)
	require.Equal(t, map[string]int64{"aws": 6, "azure": 3}, schedule(obj))
	require.Contains(t, scheduled(obj).Message, "gcp")
}

func TestReconcileCapacity(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	// azure has room for two more 500m replicas.
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "azure")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedStringMap(u.Object, map[string]string{"cpu": "1200m", "pods": "50"}, "status", "available"))
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 30, clusters: {"*": {weight: 1, maxReplicas: 10}}}
`)
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	obj := e.federated(t, federation.DeploymentType)
	require.Equal(t, map[string]int64{"aws": 10, "azure": 2, "gcp": 10}, schedule(obj))
	c := scheduled(obj)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, scheduler.ReasonUnschedulable, c.Reason)
	require.Contains(t, c.Message, "8 unplaced")
}

func TestReconcileNotDivisible(t *testing.T) {
	e := newEnv(t, federation.ConfigMapType)
	e.apply(t, federation.ConfigMapType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: app-frontend, namespace: production}
spec:
  template: {data: {a: b}}
  placement: {clusterSelector: {matchLabels: {topology.kubernetes.io/region: europe-west1}}}
`)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	obj := e.federated(t, federation.ConfigMapType)
	require.Equal(t, map[string]int64{"gcp": 0}, schedule(obj))
	require.Contains(t, scheduled(obj).Message, "placed in 1 cluster(s): gcp")
}

// TestReconcileNotDivisibleNowhere: a type without replicas placed in no cluster says so,
// with no empty list before the reasons.
func TestReconcileNotDivisibleNowhere(t *testing.T) {
	e := newEnv(t, federation.ConfigMapType)
	e.apply(t, federation.ConfigMapType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: app-frontend, namespace: production}
spec:
  template: {data: {a: b}}
  placement: {clusterSelector: {matchLabels: {topology.kubernetes.io/region: mars}}}
`)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	msg := scheduled(e.federated(t, federation.ConfigMapType)).Message
	require.True(t, strings.HasPrefix(msg, "placed in no cluster; 0 of 3 clusters selected; left out: "), msg)
}

func TestReconcileMissingObjectAndErrors(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	res, err := e.s.Reconcile(ctx, federation.Key{Namespace: "production", Name: "gone"})
	require.NoError(t, err)
	require.Zero(t, res)

	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	// A pass decides again on a fresh read after a Conflict, three times; a fourth is returned.
	e.host.FailOn(fake.VerbUpdateStatus, apierrors.NewConflict(schema.GroupResource{}, "app-frontend", nil), 4)
	_, err = e.s.Reconcile(ctx, key)
	require.True(t, apierrors.IsConflict(err), "a conflict is returned for a retry: %v", err)
	require.False(t, federation.IsTerminal(err))
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err, "the retry succeeds")
}

func TestRun(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	reg := prometheus.NewRegistry()
	s, err := scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Registerer: reg})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()

	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	require.Eventually(t, func() bool { return len(schedule(e.federated(t, federation.DeploymentType))) == 3 }, 10*time.Second, 10*time.Millisecond)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, rsp)
	require.Eventually(t, func() bool {
		return cmp.Equal(map[string]int64{"aws": 5, "azure": 2, "gcp": 2}, schedule(e.federated(t, federation.DeploymentType)))
	}, 10*time.Second, 10*time.Millisecond, "an RSP change reschedules its object")

	// A new Cluster reschedules every object.
	e.createCluster(t, federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "onprem"}, Spec: federation.ClusterSpec{APIEndpoint: "https://onprem.example"},
		Status: federation.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Ok", LastTransitionTime: metav1.NewTime(now)}}}})
	require.Eventually(t, func() bool { return len(schedule(e.federated(t, federation.DeploymentType))) == 4 }, 10*time.Second, 10*time.Millisecond)

	cancel()
	require.NoError(t, <-done)
	require.Positive(t, reconciles(t, reg))
}

// reconciles sums fedkit_reconciles_total{loop="scheduler"} over its outcomes.
func reconciles(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "fedkit_reconciles_total" {
			var total float64
			for _, m := range f.GetMetric() {
				if isScheduler(m.GetLabel()) {
					total += m.GetCounter().GetValue()
				}
			}
			return total
		}
	}
	t.Fatal("fedkit_reconciles_total not registered")
	return 0
}

// isScheduler reports whether a series has the label loop="scheduler".
func isScheduler[L interface {
	GetName() string
	GetValue() string
}](labels []L) bool {
	for _, l := range labels {
		if l.GetName() == "loop" {
			return l.GetValue() == "scheduler"
		}
	}
	return false
}

func TestNew(t *testing.T) {
	_, err := scheduler.New(nil, federation.DeploymentType, scheduler.Options{})
	require.Error(t, err)
	_, err = scheduler.New(fake.NewHost("h"), federation.TypeConfig{}, scheduler.Options{})
	require.ErrorIs(t, err, federation.ErrUnknownType)
	reg := prometheus.NewRegistry()
	for range 2 { // a second scheduler of the same kind shares the collectors
		_, err = scheduler.New(fake.NewHost("h"), federation.DeploymentType, scheduler.Options{Registerer: reg})
		require.NoError(t, err)
	}
}

func TestSchedulerExplain(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, rsp)
	e.host.ClearActions()

	x, err := e.s.Explain(ctx, key)
	require.NoError(t, err)
	for _, a := range e.host.Actions() {
		require.NotEqual(t, fake.VerbUpdateStatus, a.Verb, "Explain must not write: %s", a)
	}
	require.Equal(t, []string{"aws", "azure", "gcp"}, x.Placement.Names())
	require.Equal(t, "aws: 5 = min 2 + weight 3 (weight 2)", x.Plan.Explain("aws"))
	require.Equal(t, int64(5), x.Schedule.Clusters[0].Replicas)

	// Reconcile writes exactly what Explain showed.
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	obj := e.federated(t, federation.DeploymentType)
	if diff := cmp.Diff(&x.Schedule, obj.Status.Schedule); diff != "" {
		t.Errorf("Reconcile wrote another schedule than Explain showed (-explain +reconcile):\n%s", diff)
	}
	require.Equal(t, x.Message, scheduled(obj).Message)

	_, err = e.s.Explain(ctx, federation.Key{Namespace: "production", Name: "missing"})
	require.True(t, apierrors.IsNotFound(err))
}

// TestReconcileKubeFedKeepsZeroMinimums: with algorithm KubeFed the loop does not default
// minReplicas to 1, so a plan migrated from KubeFed (where it defaults to 0) stays the same.
func TestReconcileKubeFedKeepsZeroMinimums(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 3, algorithm: KubeFed, clusters: {"*": {weight: 1}, aws: {weight: 10}}}
`)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 3, "azure": 0, "gcp": 0}, schedule(e.federated(t, federation.DeploymentType)))

	// Webster applies the specification's default of 1.
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 3, rebalance: true, clusters: {"*": {weight: 1}, aws: {weight: 10}}}
`)
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 1, "azure": 1, "gcp": 1}, schedule(e.federated(t, federation.DeploymentType)))
}

// When another loop writes the object between the scheduler's read and its status write (sync
// patches its finalizer, the collector writes its fields, as soon as the object appears), the
// write meets a Conflict; the pass decides again on a fresh read and writes, keeping the other
// loop's fields, instead of failing the pass into the queue's backoff (on real servers with
// 48 workers, 1.8 conflicting scheduler writes per new object).
func TestConflictIsDecidedAgainInThePass(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	var once gosync.Once
	e.host.SetHooks(fake.Hooks{
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			once.Do(func() {
				// The collector's write lands first.
				u, err := next.Get(ctx, gvr, obj.GetNamespace(), obj.GetName())
				require.NoError(t, err)
				require.NoError(t, unstructured.SetNestedField(u.Object, int64(7), "status", "aggregated", "replicas"))
				_, err = next.UpdateStatus(ctx, gvr, u)
				require.NoError(t, err)
			})
			return next.UpdateStatus(ctx, gvr, obj)
		},
	})
	e.host.ClearActions()
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	calls := map[fake.Verb]int{}
	for _, a := range e.host.Actions() {
		if a.Resource == federation.DeploymentType.FederatedGVR() {
			calls[a.Verb]++
		}
	}
	require.Equal(t, map[fake.Verb]int{fake.VerbGet: 2, fake.VerbUpdateStatus: 2}, calls,
		"the pass's read, the re-read after the Conflict, the conflicting write and the one that lands")
	obj := e.federated(t, federation.DeploymentType)
	require.NotNil(t, obj.Status.Schedule)
	require.NotEmpty(t, schedule(obj))
	require.NotNil(t, obj.Status.Aggregated)
	require.EqualValues(t, 7, obj.Status.Aggregated.Replicas, "the collector's field")
}
