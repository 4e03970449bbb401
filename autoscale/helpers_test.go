package autoscale_test

import (
	"context"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
)

var (
	ctx      = context.Background()
	key      = federation.Key{Namespace: "shop", Name: "web"}
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	fedGVR   = federation.DeploymentType.FederatedGVR()
	rspGVR   = federation.ReplicaSchedulingPreferenceGVR
	members  = []string{"ap", "eu", "us"}
	podStart = 10 * time.Minute // how long before a pod's creation it started (cool cpu)
)

// env is a fake host and three members (ap, eu, us) on one fake clock, with the scheduler
// (the real one, so the autoscaler's total is divided as in a control plane) and the
// autoscaler under test. follow plays sync and the members' controllers: each member runs
// the pods its share of the schedule says, and load spreads each cluster's cpu over them.
type env struct {
	*fedtest.Env
	sched  *scheduler.Scheduler
	a      *autoscale.Autoscaler
	events *recorder
	// load is the cpu each member's pods use between them, in millicores.
	load map[string]int64
	// metrics reports whether a member serves metrics.k8s.io.
	metrics map[string]bool
	// running is how many pods each member was last made to run.
	running map[string]int
}

func newEnv(t *testing.T, rsp string, opts autoscale.Options) *env {
	t.Helper()
	var ms []fedtest.Member
	for _, m := range members {
		ms = append(ms, fedtest.Member{Name: m})
	}
	e := &env{Env: fedtest.New(t, fedtest.Options{Now: t0, Members: ms, Namespaces: []string{key.Namespace}}),
		events: &recorder{}, load: map[string]int64{}, metrics: map[string]bool{}, running: map[string]int{}}
	for _, m := range members {
		e.metrics[m] = true
		require.NoError(t, e.Member(t, m).Apply(`{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`))
	}
	var err error
	e.sched, err = scheduler.New(e.Host, federation.DeploymentType, scheduler.Options{Clock: e.Clock})
	require.NoError(t, err)
	opts.Clock, opts.Events = e.Clock, e.events
	e.a, err = autoscale.New(e.Host, e.Fleet, opts)
	require.NoError(t, err)
	fedtest.Apply(t, e.Host, fedGVR, web)
	fedtest.Apply(t, e.Host, rspGVR, rsp)
	e.schedule(t)
	e.follow(t)
	return e
}

const web = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]}
  placement: {clusters: [{name: ap}, {name: eu}, {name: us}]}
`

// schedule runs one scheduler pass.
func (e *env) schedule(t *testing.T) {
	t.Helper()
	_, err := e.sched.Reconcile(ctx, key)
	require.NoError(t, err)
}

// shares returns status.schedule.
func (e *env) shares(t *testing.T) map[string]int64 {
	t.Helper()
	u, err := e.Host.Get(ctx, fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	fed, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	out := map[string]int64{}
	if fed.Status.Schedule != nil {
		for _, c := range fed.Status.Schedule.Clusters {
			out[c.Name] = c.Replicas
		}
	}
	return out
}

// follow makes every reachable member run its share: a Deployment and that many Running,
// Ready pods, with the member's load spread over them (when it serves metrics).
func (e *env) follow(t *testing.T) {
	t.Helper()
	for name, n := range e.shares(t) {
		m := e.Member(t, name)
		if m.Partitioned() || e.running[name] == int(n) {
			continue // out of reach (nothing changes there), or nothing to change
		}
		e.setPods(t, m, int(n))
	}
	e.setLoad(t)
}

// setPods makes m run n pods of web.
func (e *env) setPods(t *testing.T, m *fake.Cluster, n int) {
	t.Helper()
	e.running[m.Name()] = n
	now := e.Clock.Now()
	require.NoError(t, m.Apply(fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {%s: fedkit}}
spec: {replicas: %d, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}}
status: {replicas: %d, readyReplicas: %d}
`, federation.ManagedByLabel, n, n, n)))
	list, err := m.List(ctx, podsGVR, "shop", metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	for i := n; i < len(list.Items); i++ {
		require.NoError(t, m.DriftDelete(podsGVR, "shop", list.Items[i].GetName()))
	}
	for i := len(list.Items); i < n; i++ {
		started := metav1.NewTime(now.Add(-podStart))
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%03d", i), Namespace: "shop", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}},
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
		require.NoError(t, err)
		require.NoError(t, m.Seed(&unstructured.Unstructured{Object: obj}))
	}
}

// setLoad spreads each member's load over its pods, from now on.
func (e *env) setLoad(t *testing.T) {
	t.Helper()
	for _, name := range members {
		m := e.Member(t, name)
		if !e.metrics[name] {
			continue
		}
		if m.Partitioned() {
			continue // its metrics-server keeps what it had
		}
		list, err := m.List(ctx, podsGVR, "shop", metav1.ListOptions{LabelSelector: "app=web"})
		require.NoError(t, err)
		for _, p := range list.Items {
			per := e.load[name] / int64(len(list.Items))
			m.SetPodMetrics("shop", p.GetName(), fake.PodMetricsPoint{At: e.Clock.Now(), Containers: map[string]corev1.ResourceList{
				"app": {corev1.ResourceCPU: *resource.NewMilliQuantity(per, resource.DecimalSI)},
			}})
		}
	}
}

// pass runs one autoscaler pass, then the scheduler and the members follow.
func (e *env) pass(t *testing.T) error {
	t.Helper()
	_, err := e.a.Reconcile(ctx, key)
	e.schedule(t)
	e.follow(t)
	return err
}

// rsp returns the preference.
func (e *env) rsp(t *testing.T) *federation.ReplicaSchedulingPreference {
	t.Helper()
	u, err := e.Host.Get(ctx, rspGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	require.NoError(t, err)
	return rsp
}

// total is the total the scheduler divides.
func (e *env) total(t *testing.T) int64 {
	t.Helper()
	return federation.FleetTotal(e.rsp(t))
}

// condition returns status.autoscale's condition of type typ.
func (e *env) condition(t *testing.T, typ string) metav1.Condition {
	t.Helper()
	st := e.rsp(t).Status.Autoscale
	require.NotNil(t, st, "status.autoscale")
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no condition %s in %v", typ, st.Conditions)
	return metav1.Condition{}
}

// recorder records events.
type recorder struct {
	mu     gosync.Mutex
	events []string
}

func (r *recorder) Eventf(_ runtime.Object, typ, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+" "+reason+": "+fmt.Sprintf(format, args...))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

const cpu60 = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 6
  clusters: {"*": {weight: 1}}
  autoscale:
    minReplicas: 3
    maxReplicas: 30
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
`
