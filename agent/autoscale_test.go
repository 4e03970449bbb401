package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// loaded runs n pods of web in c, each using milli of the 1 cpu it asks, as the member's
// controllers and metrics-server would.
func loaded(t *testing.T, c *fake.Cluster, now time.Time, n int, milli int64) {
	t.Helper()
	started := now.Add(-time.Hour).Format(time.RFC3339)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("web-%d", i)
		if err := c.Apply(fmt.Sprintf(`{apiVersion: v1, kind: Pod,
  metadata: {name: %s, namespace: default, labels: {app: web}},
  spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: "1"}}}]},
  status: {phase: Running, startTime: %q, conditions: [{type: Ready, status: "True", lastTransitionTime: %q}]}}`, name, started, started)); err != nil {
			t.Fatal(err)
		}
		c.SetPodMetrics("default", name, fake.PodMetricsPoint{At: now,
			Containers: map[string]corev1.ResourceList{"web": {corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}})
	}
}

// desired is the preference's status.autoscale.desiredReplicas, -1 without one.
func (e *pullEnv) desired() int64 {
	u, err := e.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, "default", "web")
	if err != nil {
		return -1
	}
	n, ok, _ := unstructured.NestedInt64(u.Object, "status", "autoscale", "desiredReplicas")
	if !ok {
		return -1
	}
	return n
}

const autoscaledWeb = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusters: [{name: eu}, {name: us}, {name: edge}]}
`

const autoscaledRSP = `{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference, metadata: {name: web, namespace: default},
  spec: {targetKind: FederatedDeployment, totalReplicas: 6, clusters: {eu: {weight: 1}, us: {weight: 1}, edge: {weight: 1}},
    autoscale: {maxReplicas: 30, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]}}}`

// TestPullMemberDrivesAScaleUp: the hub never reaches edge, a pull member; its agent reports
// the workload's pods and their cpu usage in the Assignment's status.metrics, and the
// autoscaler reads them there (autoscale.Reports) beside eu's metrics API (a push member).
// Edge and eu under load (90% of a 60% target) with us idle at 60% make the total 6 -> 8,
// which the scheduler divides (edge runs 3). Then edge's link to the host is cut: its
// report goes stale, the quorum rule leaves it out (2 of 3 fresh), its share holds, and the
// others decide alone: us's and eu's load moving to 120% scales up again from eu and us.
func TestPullMemberDrivesAScaleUp(t *testing.T) {
	e := newPullEnv(t)
	e.start(t)
	fedtest.Create(t, e.Host, fedDeploys, autoscaledWeb)
	fedtest.Create(t, e.Host, federation.ReplicaSchedulingPreferenceGVR, autoscaledRSP)
	eu, us := e.Member(t, "eu"), e.Member(t, "us")
	e.step(t, "2 replicas in each cluster", 5*time.Second, func() bool {
		return replicas(eu, "web") == 2 && replicas(us, "web") == 2 && replicas(e.edge, "web") == 2
	})

	now := e.Clock.Now()
	loaded(t, eu, now, 2, 900)
	loaded(t, us, now, 2, 600)
	loaded(t, e.edge, now, 2, 900)
	e.step(t, "edge's agent reports its pods' usage", 5*time.Second, func() bool {
		as, err := e.Host.Peek(federation.AssignmentGVR, federation.PullNamespace("edge"), federation.AssignmentName(deployments, "default", "web"))
		if err != nil {
			return false
		}
		pods, _, _ := unstructured.NestedSlice(as.Object, "status", "metrics", "pods")
		return len(pods) == 2
	})
	// (900+600+900)/3 per pod = 800m of 1 cpu: 80% of 60%, 6 * 4/3 = 8.
	e.step(t, "the fleet total is 8, divided 3/3/2 or so, edge's load counted", 5*time.Second, func() bool {
		return e.desired() == 8 && replicas(eu, "web")+replicas(us, "web")+replicas(e.edge, "web") == 8
	})

	// Edge's link to the host is cut: its report stops; eu's and us's pods run hot.
	e.link.cut.Store(true)
	t.Cleanup(func() { e.link.cut.Store(false) })
	e.step(t, "edge is not Ready (its Lease aged)", 5*time.Second, func() bool { return !e.clusterReady("edge") })
	held := replicas(e.edge, "web")
	now = e.Clock.Now()
	loaded(t, eu, now, 2, 1200)
	loaded(t, us, now, 2, 1200)
	e.step(t, "the total scales up from eu and us alone, edge's share holds", 5*time.Second, func() bool {
		return e.desired() > 8
	})
	if got := replicas(e.edge, "web"); got != held {
		t.Errorf("edge runs %d; want %d: its share holds while it is cut off", got, held)
	}
	u, err := e.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	clusters, _, _ := unstructured.NestedSlice(u.Object, "status", "autoscale", "clusters")
	stale := map[string]bool{}
	for _, c := range clusters {
		m := c.(map[string]any)
		stale[m["name"].(string)], _ = m["stale"].(bool)
	}
	if want := map[string]bool{"edge": true, "eu": false, "us": false}; fmt.Sprint(stale) != fmt.Sprint(want) {
		t.Errorf("status.autoscale.clusters stale = %v, want %v", stale, want)
	}
}

// TestAgentReportsMetricsItCannotRead: a member that does not serve metrics.k8s.io gets its
// workload's pods reported without usage, and why (status.metrics.failed): the autoscaler
// never reads that as 0 usage.
func TestAgentReportsMetricsItCannotRead(t *testing.T) {
	e := newPullEnv(t)
	e.start(t)
	fedtest.Create(t, e.Host, fedDeploys, autoscaledWeb)
	e.step(t, "edge runs web", 5*time.Second, func() bool { return replicas(e.edge, "web") == 2 })
	started := e.Clock.Now().Add(-time.Hour).Format(time.RFC3339)
	if err := e.edge.Apply(fmt.Sprintf(`{apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default, labels: {app: web}},
  spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: "1"}}}]},
  status: {phase: Running, startTime: %q, conditions: [{type: Ready, status: "True", lastTransitionTime: %q}]}}`, started, started)); err != nil {
		t.Fatal(err)
	}
	var metrics map[string]any
	e.step(t, "edge's report lists the pod", 5*time.Second, func() bool {
		as, err := e.Host.Peek(federation.AssignmentGVR, federation.PullNamespace("edge"), federation.AssignmentName(deployments, "default", "web"))
		if err != nil {
			return false
		}
		metrics, _, _ = unstructured.NestedMap(as.Object, "status", "metrics")
		pods, _, _ := unstructured.NestedSlice(metrics, "pods")
		return len(pods) == 1
	})
	if failed, _ := metrics["failed"].(string); failed == "" {
		t.Errorf("status.metrics.failed is empty; want why metrics.k8s.io could not be read: %v", metrics)
	}
	pod := metrics["pods"].([]any)[0].(map[string]any)
	if _, sampled := pod["sampled"]; sampled {
		t.Errorf("the pod is reported sampled, with no metrics.k8s.io in the member: %v", pod)
	}
}

// hpaBounds is the HorizontalPodAutoscaler web's minReplicas and maxReplicas in c, and who
// manages it; ok is false without one.
func hpaBounds(c *fake.Cluster) (lo, hi int64, managedBy string, ok bool) {
	u, err := c.Peek(autoscale.HPAGVR, "default", "web")
	if err != nil {
		return 0, 0, "", false
	}
	lo, _, _ = unstructured.NestedInt64(u.Object, "spec", "minReplicas")
	hi, _, _ = unstructured.NestedInt64(u.Object, "spec", "maxReplicas")
	return lo, hi, u.GetLabels()[federation.ManagedByLabel], true
}

// TestPullMemberRunsItsShareInDistributedMode: in Distributed mode the autoscaler writes each
// member's HorizontalPodAutoscaler with its share of the fleet's bounds; a pull member's
// reaches it as an Assignment its agent applies (the hub never reaches edge), like the push
// members' through their clients. Back in Central mode, edge's goes too, through its agent.
func TestPullMemberRunsItsShareInDistributedMode(t *testing.T) {
	e := newPullEnv(t)
	e.start(t)
	fedtest.Create(t, e.Host, fedDeploys, strings.Replace(autoscaledWeb, "  placement:", "  retainReplicas: true\n  placement:", 1))
	fedtest.Create(t, e.Host, federation.ReplicaSchedulingPreferenceGVR, strings.Replace(autoscaledRSP, "autoscale: {", "autoscale: {mode: Distributed, minReplicas: 3, ", 1))
	eu := e.Member(t, "eu")
	e.step(t, "eu's and edge's HorizontalPodAutoscalers with a third of the bounds each", 10*time.Second, func() bool {
		for _, c := range []*fake.Cluster{eu, e.edge} {
			if lo, hi, by, ok := hpaBounds(c); !ok || lo != 1 || hi != 10 || by != federation.ManagedByValue {
				return false
			}
		}
		return true
	})
	fedtest.Apply(t, e.Host, federation.ReplicaSchedulingPreferenceGVR, autoscaledRSP)
	e.step(t, "back in Central mode, edge's HorizontalPodAutoscaler deleted through its agent", 10*time.Second, func() bool {
		_, _, _, euHas := hpaBounds(eu)
		_, _, _, edgeHas := hpaBounds(e.edge)
		return !euHas && !edgeHas
	})
}
