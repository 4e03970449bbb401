// Command policy federates a plain Deployment with a ClusterPropagationPolicy, on an
// in-memory fleet: the Deployment is applied to the host as it is, the propagation loop
// writes its FederatedDeployment, the other loops place and run it, and the host
// Deployment's status shows the fleet's ready replicas.
//
//	go run ./examples/policy
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var (
	deployment = federation.DeploymentType
	key        = federation.Key{Namespace: "shop", Name: "web"}
)

// The policy: every Deployment labelled app=web goes to the gold clusters, five replicas
// divided 3:2.
const policy = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusterSelector: {matchLabels: {tier: gold}}}
  scheduling: {totalReplicas: 5, clusters: {eu: {weight: 3}, us: {weight: 2}}}`

// The team's Deployment, as they would kubectl apply it to one cluster.
const web = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}`

type world struct {
	ctx   context.Context
	clock *clocktesting.FakeClock
	host  *fake.Cluster
	fleet *fake.Fleet

	propagator *propagation.Propagator
	monitor    *status.ClusterMonitor
	scheduler  *scheduler.Scheduler
	syncer     *fedsync.Syncer
	collector  *status.Collector
}

func newWorld(ctx context.Context) (*world, error) {
	w := &world{ctx: ctx, clock: clocktesting.NewFakeClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))}
	w.host = fake.NewHost("host") // serves fedkit's CRDs, the policies' included
	w.host.SetClock(w.clock)
	w.fleet = fake.NewFleet()
	w.fleet.SetClock(w.clock)
	w.fleet.SetWorkloads(fake.Workloads{Apps: true})
	w.fleet.Add("eu", map[string]string{"tier": "gold"})
	w.fleet.Add("us", map[string]string{"tier": "gold"})
	w.fleet.Add("ap", nil)
	if err := w.fleet.Register(ctx, w.host); err != nil {
		return nil, err
	}
	var err error
	if w.propagator, err = propagation.New(w.host, []federation.TypeConfig{deployment}, propagation.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	if w.monitor, err = status.NewClusterMonitor(w.host, w.fleet, status.MonitorOptions{Clock: w.clock}); err != nil {
		return nil, err
	}
	if w.scheduler, err = scheduler.New(w.host, deployment, scheduler.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	if w.syncer, err = fedsync.New(w.host, w.fleet, deployment, fedsync.Options{Clock: w.clock, WaitForScheduler: true}); err != nil {
		return nil, err
	}
	if w.collector, err = status.New(w.host, w.fleet, deployment, status.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	return w, nil
}

// round runs every loop once, in the order data flows (an embedder calls each Run instead).
func (w *world) round() error {
	for _, name := range w.fleet.Names() {
		if _, err := w.monitor.Reconcile(w.ctx, federation.Key{Name: name}); err != nil {
			return err
		}
	}
	if _, err := w.propagator.Reconcile(w.ctx, key); err != nil {
		return err
	}
	if _, err := w.scheduler.Reconcile(w.ctx, key); err != nil && federation.IsTerminal(err) {
		return err
	}
	_, _ = w.syncer.Reconcile(w.ctx, key) // status records what failed; the next round retries
	w.fleet.Tick()
	_, _ = w.collector.Reconcile(w.ctx, key)
	// The propagation loop again: the fleet's counts into the host Deployment's status.
	_, err := w.propagator.Reconcile(w.ctx, key)
	return err
}

func (w *world) rounds(n int) error {
	for range n {
		w.clock.Step(10 * time.Second)
		if err := w.round(); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) apply(gvr schema.GroupVersionResource, doc string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return err
	}
	_, err := w.host.Create(w.ctx, gvr, u)
	return err
}

func run(ctx context.Context, out io.Writer) error {
	w, err := newWorld(ctx)
	if err != nil {
		return err
	}
	if err := w.apply(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`); err != nil {
		return err
	}
	fmt.Fprintln(out, "1. A ClusterPropagationPolicy and a plain Deployment, applied to the host as they are.")
	if err := w.apply(federation.ClusterPropagationPolicyGVR, policy); err != nil {
		return err
	}
	if err := w.apply(deployment.TargetGVR(), web); err != nil {
		return err
	}
	if err := w.rounds(3); err != nil {
		return err
	}
	fed, err := w.host.Get(ctx, deployment.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return err
	}
	native, err := w.host.Get(ctx, deployment.TargetGVR(), key.Namespace, key.Name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "2. The propagation loop wrote FederatedDeployment %s (%s=%s), owned by the Deployment; the Deployment says %s=%s.\n",
		key, federation.GeneratedByLabel, fed.GetLabels()[federation.GeneratedByLabel],
		federation.PolicyAnnotation, native.GetAnnotations()[federation.PolicyAnnotation])
	fmt.Fprintln(out, "3. The other loops placed it, as any federated object:")
	for _, name := range w.fleet.Names() {
		c, _ := w.fleet.Member(name)
		u, err := c.Peek(deployment.TargetGVR(), key.Namespace, key.Name)
		if err != nil {
			fmt.Fprintf(out, "   %s: none\n", name)
			continue
		}
		replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		fmt.Fprintf(out, "   %s: %d replicas, %d ready\n", name, replicas, ready)
	}
	var fields []string
	for _, f := range []string{"replicas", "readyReplicas", "availableReplicas", "updatedReplicas"} {
		v, _, _ := unstructured.NestedInt64(native.Object, "status", f)
		fields = append(fields, fmt.Sprintf("%s=%d", f, v))
	}
	fmt.Fprintf(out, "4. kubectl get deploy -n shop web on the host tells the fleet's truth: %s.\n", strings.Join(fields, " "))
	return nil
}
