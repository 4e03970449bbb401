package main

import (
	"context"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// world is the in-memory federation: a host, three members, and every loop, built the way an
// embedder builds them. An embedder calls each loop's Run(ctx); here one round calls each
// loop's Reconcile once per key, so the story is deterministic and prints step by step.
type world struct {
	ctx   context.Context
	clock *clocktesting.FakeClock
	host  *fake.Cluster
	fleet *fake.Fleet

	monitor   *status.ClusterMonitor
	scheduler *scheduler.Scheduler
	syncers   []*fedsync.Syncer // Deployments, Services
	collector *status.Collector
	dns       *dnsrecord.Controller
	autoscale *autoscale.Autoscaler

	// load is the cpu (millicores) app-frontend's pods use in each member, once set (see
	// pods): nil before.
	load map[string]int64
}

var (
	deployment = federation.DeploymentType
	service    = federation.ServiceType
	key        = federation.Key{Namespace: "production", Name: "app-frontend"}
	crdGVR     = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func newWorld(ctx context.Context) (*world, error) {
	w := &world{ctx: ctx, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))}
	// 1. The host serves fedkit's CRDs (NewHost); the DNS ones are installed like any CRD.
	w.host = fake.NewHost("host")
	w.host.SetClock(w.clock)
	crds, err := dnsrecord.CRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return nil, err
		}
		if _, err := w.host.Create(ctx, crdGVR, &unstructured.Unstructured{Object: m}); err != nil {
			return nil, err
		}
	}
	// 2. Three member clusters whose simulated controllers run Deployments (ready 30s after a
	// change) and give LoadBalancer Services an IP.
	w.fleet = fake.NewFleet()
	w.fleet.SetClock(w.clock)
	w.fleet.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 30 * time.Second, LoadBalancers: true, FailingImages: []string{brokenImage}})
	w.fleet.Add("cluster-aws-us-east", topology("aws", "us-east-1", "us-east-1a"))
	w.fleet.Add("cluster-gcp-eu-west", topology("gcp", "europe-west1", "europe-west1-b"))
	w.fleet.Add("cluster-azure-southeastasia", topology("azure", "southeastasia", "southeastasia-1"))

	// 3. The loops, each New(deps, Options) with the fake clock.
	if w.monitor, err = status.NewClusterMonitor(w.host, w.fleet, status.MonitorOptions{Clock: w.clock}); err != nil {
		return nil, err
	}
	if w.scheduler, err = scheduler.New(w.host, deployment, scheduler.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	for _, typ := range []federation.TypeConfig{deployment, service} {
		// Deployments have a scheduler: sync waits for its schedule rather than push the
		// template's replica count first. Services have none.
		s, err := fedsync.New(w.host, w.fleet, typ, fedsync.Options{Clock: w.clock, WaitForScheduler: typ.Federated.Kind == deployment.Federated.Kind})
		if err != nil {
			return nil, err
		}
		w.syncers = append(w.syncers, s)
	}
	if w.collector, err = status.New(w.host, w.fleet, deployment, status.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	if w.dns, err = dnsrecord.New(w.host, w.fleet, dnsrecord.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	if w.autoscale, err = autoscale.New(w.host, w.fleet, autoscale.Options{Clock: w.clock}); err != nil {
		return nil, err
	}
	return w, nil
}

// round runs every loop once, in the order data flows: the monitor probes the clusters, the
// autoscaler sets the fleet's total from the members' metrics, the scheduler divides, sync
// pushes, the members' controllers act, the collector pulls, DNS publishes. Errors that a loop would retry (a cluster that cannot be reached) are not
// fatal: the next round retries, as Run would.
func (w *world) round() error {
	for _, name := range w.fleet.Names() {
		if _, err := w.monitor.Reconcile(w.ctx, federation.Key{Name: name}); err != nil {
			return err
		}
	}
	_, _ = w.autoscale.Reconcile(w.ctx, key) // a preference without spec.autoscale: nothing to do
	if _, err := w.scheduler.Reconcile(w.ctx, key); err != nil && federation.IsTerminal(err) {
		return err
	}
	for _, s := range w.syncers {
		_, _ = s.Reconcile(w.ctx, key) // status records what failed; the next round retries
	}
	w.fleet.Tick()
	if err := w.pods(); err != nil {
		return err
	}
	_, _ = w.collector.Reconcile(w.ctx, key)
	_, _ = w.dns.Reconcile(w.ctx, key)
	return nil
}

// wait lets d pass on the clock, one 10-second probe period at a time, with a round each.
func (w *world) wait(d time.Duration) error {
	for step := time.Duration(0); step < d; step += 10 * time.Second {
		w.clock.Step(10 * time.Second)
		if err := w.round(); err != nil {
			return err
		}
	}
	return nil
}

func topology(provider, region, zone string) map[string]string {
	return map[string]string{federation.ProviderLabel: provider, federation.RegionLabel: region, federation.ZoneLabel: zone}
}

// apply creates an object from YAML on the host.
func (w *world) apply(gvr schema.GroupVersionResource, doc string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return err
	}
	if _, err := w.host.Create(w.ctx, gvr, u); err != nil {
		return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// federated reads the FederatedDeployment.
func (w *world) federated() (*federation.FederatedObject, error) {
	u, err := w.host.Get(w.ctx, deployment.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return nil, err
	}
	return federation.FederatedObjectFromUnstructured(u)
}

// editTemplate changes the FederatedDeployment's template as a user would.
func (w *world) editTemplate(mutate func(tmpl map[string]any)) error {
	return w.editSpec(func(spec map[string]any) {
		tmpl, _ := spec["template"].(map[string]any)
		mutate(tmpl)
	})
}

// editSpec changes the FederatedDeployment's spec as a user would (kubectl edit).
func (w *world) editSpec(mutate func(spec map[string]any)) error {
	u, err := w.host.Get(w.ctx, deployment.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return err
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	mutate(spec)
	if err := unstructured.SetNestedMap(u.Object, spec, "spec"); err != nil {
		return err
	}
	_, err = w.host.Update(w.ctx, deployment.FederatedGVR(), u)
	return err
}

// taint adds a taint to a Cluster, as a person draining it with kubectl would.
func (w *world) taint(cluster string, t corev1.Taint) error {
	u, err := w.host.Get(w.ctx, federation.ClusterGVR, "", cluster)
	if err != nil {
		return err
	}
	taints, _, _ := unstructured.NestedSlice(u.Object, "spec", "taints")
	taints = append(taints, map[string]any{"key": t.Key, "value": t.Value, "effect": string(t.Effect)})
	if err := unstructured.SetNestedSlice(u.Object, taints, "spec", "taints"); err != nil {
		return err
	}
	_, err = w.host.Update(w.ctx, federation.ClusterGVR, u)
	return err
}
