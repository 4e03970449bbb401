package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

var (
	deployments = federation.DeploymentType.TargetGVR()
	fedDeploys  = federation.DeploymentType.FederatedGVR()
)

// link is the agent's connection to the host: cut, every call fails as a network failure
// does, while the control plane keeps its own connection.
type link struct {
	federation.ClusterClient
	cut atomic.Bool
}

func (l *link) down(op string) error {
	if l.cut.Load() {
		return fmt.Errorf("%w: %s: the link between the agent and the host is cut", federation.ErrUnreachable, op)
	}
	return nil
}

func (l *link) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if err := l.down("get"); err != nil {
		return nil, err
	}
	return l.ClusterClient.Get(ctx, gvr, ns, name)
}

func (l *link) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := l.down("list"); err != nil {
		return nil, err
	}
	return l.ClusterClient.List(ctx, gvr, ns, o)
}

func (l *link) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := l.down("create"); err != nil {
		return nil, err
	}
	return l.ClusterClient.Create(ctx, gvr, obj)
}

func (l *link) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := l.down("update"); err != nil {
		return nil, err
	}
	return l.ClusterClient.Update(ctx, gvr, obj)
}

func (l *link) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := l.down("update status"); err != nil {
		return nil, err
	}
	return l.ClusterClient.UpdateStatus(ctx, gvr, obj)
}

func (l *link) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	if err := l.down("patch"); err != nil {
		return nil, err
	}
	return l.ClusterClient.Patch(ctx, gvr, ns, name, pt, data)
}

func (l *link) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, o metav1.DeleteOptions) error {
	if err := l.down("delete"); err != nil {
		return err
	}
	return l.ClusterClient.Delete(ctx, gvr, ns, name, o)
}

func (l *link) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (watch.Interface, error) {
	if err := l.down("watch"); err != nil {
		return nil, err
	}
	return l.ClusterClient.Watch(ctx, gvr, ns, o)
}

// pullEnv is a fake host and fleet (eu and us in push mode, edge in pull mode: registered
// without a connection, its namespace on the host made), a control plane over the
// ClusterSet of both modes, and edge's agent reaching the host through a link the test can
// cut.
type pullEnv struct {
	*fedtest.Env
	edge *fake.Cluster
	link *link
}

func newPullEnv(t *testing.T) *pullEnv {
	t.Helper()
	e := &pullEnv{Env: fedtest.New(t, fedtest.Options{
		Members:    []fedtest.Member{{Name: "eu"}, {Name: "us"}, {Name: "edge"}},
		Workloads:  fake.Workloads{Apps: true},
		Namespaces: []string{federation.PullNamespace("edge")},
	})}
	e.edge = e.Member(t, "edge")
	e.link = &link{ClusterClient: e.Host}
	ctx := context.Background()
	u, err := e.Host.Get(ctx, federation.ClusterGVR, "", "edge")
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"] = map[string]any{"mode": "Pull", "region": "edge"}
	if _, err := e.Host.Update(ctx, federation.ClusterGVR, u); err != nil {
		t.Fatal(err)
	}
	return e
}

// start runs the control plane (and with it the fleet's simulated controllers: the set's
// Run is the fleet's) and edge's agent until the test ends.
func (e *pullEnv) start(t *testing.T) {
	t.Helper()
	set, err := agent.NewClusterSet(e.Host, e.Fleet, agent.SetOptions{Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	o := controlplane.Options{Types: []federation.TypeConfig{federation.DeploymentType}, Clock: e.Clock, RetryPeriod: 30 * time.Second, Registerer: prometheus.NewRegistry()}
	o.Disable.DNS = true
	o.Scheduler.CacheSyncTimeout, o.Sync.CacheSyncTimeout, o.Status.CacheSyncTimeout, o.Monitor.CacheSyncTimeout = 2*time.Minute, 2*time.Minute, 2*time.Minute, 2*time.Minute
	cp, err := controlplane.New(e.Host, set, o)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.New(e.link, e.edge, agent.Options{Cluster: "edge", Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- cp.Run(ctx) }() // and the fleet's Run, the set's (its simulated controllers)
	go func() { done <- ag.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	})
}

// step steps the fake clock by d until cond holds.
func (e *pullEnv) step(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	fedtest.StepUntil(t, e.Clock.Step, d, 300, func() string { return what }, cond)
}

func replicas(c *fake.Cluster, name string) int64 {
	u, err := c.Peek(deployments, "default", name)
	if err != nil {
		return -1
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n
}

// condition returns the status of the federated object's condition typ, "" when absent.
func (e *pullEnv) condition(name, typ string) string {
	u, err := e.Host.Peek(fedDeploys, "default", name)
	if err != nil {
		return ""
	}
	var fed federation.FederatedObject
	if federation.FromUnstructured(u, &fed) != nil {
		return ""
	}
	if c := meta.FindStatusCondition(fed.Status.Conditions, typ); c != nil {
		return string(c.Status)
	}
	return ""
}

func (e *pullEnv) clusterReady(name string) bool {
	u, err := e.Host.Peek(federation.ClusterGVR, "", name)
	if err != nil {
		return false
	}
	c, err := federation.ClusterFromUnstructured(u)
	return err == nil && meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady)
}

const web = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusters: [{name: eu}, {name: us}, {name: edge}]}
  overrides:
  - clusterName: edge
    clusterOverrides: [{path: /spec/replicas, value: 2}]
`

// TestPullClusterAmongPush: one pull cluster among push ones, a whole control plane and the
// pull cluster's agent in process. The FederatedDeployment reaches edge through its
// Assignment, with edge's override; a drift in edge is corrected by the agent; edge's
// status, as the agent reports it, counts in Ready. When the link between the agent and the
// host is cut, edge keeps running what it has, the monitor marks it not Ready by its
// Lease's age, its data goes stale, and on heal it is Ready again with the same Deployment
// (never re-created). Deleting the federated object deletes edge's copy.
func TestPullClusterAmongPush(t *testing.T) {
	e := newPullEnv(t)
	e.start(t)
	fedtest.Create(t, e.Host, fedDeploys, web)

	e.step(t, "propagated to eu and us, and to edge with its override", 5*time.Second, func() bool {
		return replicas(e.Member(t, "eu"), "web") == 4 && replicas(e.Member(t, "us"), "web") == 4 && replicas(e.edge, "web") == 2
	})
	as, err := e.Host.Peek(federation.AssignmentGVR, federation.PullNamespace("edge"), federation.AssignmentName(deployments, "default", "web"))
	if err != nil {
		t.Fatalf("edge's Assignment of default/web: %v", err)
	}
	if got, _, _ := unstructured.NestedString(as.Object, "spec", "change"); got != "Apply" {
		t.Errorf("edge's Assignment spec.change = %q, want Apply", got)
	}
	e.step(t, "Propagated and Ready, edge's status reported by its agent", 5*time.Second, func() bool {
		return e.condition("web", "Propagated") == "True" && e.condition("web", "Ready") == "True"
	})
	if got := e.clusterStatus(t, "web", "edge", "readyReplicas"); got != int64(2) {
		t.Errorf("status.clusters[edge].readyReplicas = %v, want 2 (the agent's report)", got)
	}

	// Drift in edge: the agent puts back what edge was assigned.
	u, err := e.edge.Get(context.Background(), deployments, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	uid := u.GetUID()
	if err := unstructured.SetNestedField(u.Object, int64(7), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.edge.Update(context.Background(), deployments, u); err != nil {
		t.Fatal(err)
	}
	e.step(t, "edge's drift corrected", 5*time.Second, func() bool { return replicas(e.edge, "web") == 2 })

	// A partition between the agent and the host.
	e.link.cut.Store(true)
	e.step(t, "edge not Ready by its Lease's age", 5*time.Second, func() bool { return !e.clusterReady("edge") })
	if msg := e.readyMessage(t, "edge"); !strings.Contains(msg, "last renewed its Lease") {
		t.Errorf("edge's Ready message = %q, want the Lease's age", msg)
	}
	// Its reports are not read while its Lease is expired: its data ages out of the quorum
	// as an unreachable push cluster's does.
	e.step(t, "edge's data stale", 5*time.Second, func() bool { return e.staleClusters(t, "web") == 1 })
	if got := replicas(e.edge, "web"); got != 2 {
		t.Errorf("edge's Deployment during the partition: replicas %d, want 2 (it keeps running what it has)", got)
	}
	e.link.cut.Store(false)
	e.step(t, "edge Ready again after the heal", 5*time.Second, func() bool { return e.clusterReady("edge") })
	e.step(t, "Ready again", 5*time.Second, func() bool { return e.condition("web", "Ready") == "True" })
	after, err := e.edge.Get(context.Background(), deployments, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != uid {
		t.Errorf("edge's Deployment was re-created after the heal: uid %s, was %s", after.GetUID(), uid)
	}

	// Deleting the federated object deletes edge's copy through its Assignment, which goes
	// once the agent has reported it done; then sync's finalizer goes.
	if err := e.Host.Delete(context.Background(), fedDeploys, "default", "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.step(t, "edge's Deployment, its Assignment and the FederatedDeployment gone", 5*time.Second, func() bool {
		_, errMember := e.edge.Peek(deployments, "default", "web")
		_, errAssigned := e.Host.Peek(federation.AssignmentGVR, federation.PullNamespace("edge"), federation.AssignmentName(deployments, "default", "web"))
		_, errFed := e.Host.Peek(fedDeploys, "default", "web")
		return apierrors.IsNotFound(errMember) && apierrors.IsNotFound(errAssigned) && apierrors.IsNotFound(errFed)
	})
}

// clusterStatus returns the field of the federated object's status.clusters entry of
// cluster, nil when absent.
func (e *pullEnv) clusterStatus(t *testing.T, name, cluster, field string) any {
	t.Helper()
	u, err := e.Host.Peek(fedDeploys, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["name"] == cluster {
			return m[field]
		}
	}
	return nil
}

// staleClusters returns the federated object's status.aggregated.staleClusters.
func (e *pullEnv) staleClusters(t *testing.T, name string) int64 {
	t.Helper()
	u, err := e.Host.Peek(fedDeploys, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "status", "aggregated", "staleClusters")
	return n
}

// readyMessage returns the message of the Cluster's Ready condition.
func (e *pullEnv) readyMessage(t *testing.T, name string) string {
	t.Helper()
	u, err := e.Host.Peek(federation.ClusterGVR, "", name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := federation.ClusterFromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	if r := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady); r != nil {
		return r.Message
	}
	return ""
}
