package fedtest

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// Epoch is the fake clock's start when Options.Now is zero.
var Epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Member is one member cluster of the fleet: its name and its Cluster's labels.
type Member struct {
	Name   string
	Labels map[string]string
}

// Options say what New builds. The zero value is a host and an empty fleet at Epoch.
type Options struct {
	// Now is the fake clock's start; zero is Epoch.
	Now time.Time
	// Members are added to the fleet, in order, and registered on the host.
	Members []Member
	// Workloads are the simulated member controllers (none by default).
	Workloads fake.Workloads
	// Namespaces are created on the host.
	Namespaces []string
}

// Env is a fake host, a fleet registered on it, the fake clock both run on and a registry.
type Env struct {
	Host     *fake.Cluster
	Fleet    *fake.Fleet
	Clock    *clocktesting.FakeClock
	Registry *prometheus.Registry
}

// hosts decodes fedkit's CRDs once for every Env of a test binary: a fake host costs a
// quarter of a second to decode them under -race, and a package of tests makes hundreds.
var hosts = gosync.OnceValues(fake.NewHostTemplate)

// New builds an Env and fails the test when the fleet cannot be registered.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = Epoch
	}
	tmpl, err := hosts()
	if err != nil {
		t.Fatalf("fake host: %v", err)
	}
	e := &Env{Host: tmpl.NewHost("host"), Fleet: fake.NewFleet(), Clock: clocktesting.NewFakeClock(o.Now), Registry: prometheus.NewRegistry()}
	e.Host.SetClock(e.Clock)
	e.Fleet.SetClock(e.Clock)
	e.Fleet.SetWorkloads(o.Workloads)
	for _, m := range o.Members {
		e.Fleet.Add(m.Name, m.Labels)
	}
	if err := e.Fleet.Register(context.Background(), e.Host); err != nil {
		t.Fatalf("registering the fleet on the host: %v", err)
	}
	for _, ns := range o.Namespaces {
		Create(t, e.Host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	}
	return e
}

// Member returns the fleet's member name and fails the test when there is none.
func (e *Env) Member(t testing.TB, name string) *fake.Cluster {
	t.Helper()
	c, ok := e.Fleet.Member(name)
	if !ok {
		t.Fatalf("no member %q in the fleet %v", name, e.Fleet.Names())
	}
	return c
}

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Decode parses one YAML (or JSON) object, failing the test when it is not one.
func Decode(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("decoding %q: %v", doc, err)
	}
	return u
}

// Create creates the object doc describes in c. An object of that name already there is
// left as it is (tests sharing a real server create their namespaces more than once).
func Create(t testing.TB, c federation.ClusterClient, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	u := Decode(t, doc)
	if _, err := c.Create(context.Background(), gvr, u); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
}

// Apply creates the object doc describes in c, or replaces the existing one's spec and
// labels and adds its annotations, as a user's kubectl apply of a whole manifest would. The
// loops may write the object meanwhile (its status, its finalizer): a Conflict is retried on
// a fresh read, as kubectl's patch would not have conflicted.
func Apply(t testing.TB, c federation.ClusterClient, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	ctx := context.Background()
	u := Decode(t, doc)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		old, err := c.Get(ctx, gvr, u.GetNamespace(), u.GetName())
		if apierrors.IsNotFound(err) {
			_, err = c.Create(ctx, gvr, u.DeepCopy())
			return err
		}
		if err != nil {
			return err
		}
		old.Object["spec"] = runtime.DeepCopyJSONValue(u.Object["spec"])
		old.SetLabels(u.GetLabels())
		if a := u.GetAnnotations(); a != nil {
			merged := old.GetAnnotations()
			if merged == nil {
				merged = map[string]string{}
			}
			for k, v := range a {
				merged[k] = v
			}
			old.SetAnnotations(merged)
		}
		_, err = c.Update(ctx, gvr, old)
		return err
	})
	if err != nil {
		t.Fatalf("applying %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
}

// Limit is how long Eventually waits: long enough for real API servers on a loaded 2-core
// machine; a passing test never waits for it.
const Limit = 2 * time.Minute

// Eventually polls cond until it holds and fails the test after Limit. It polls every
// millisecond at first and backs off to every 50ms, so in-memory work is seen at once and a
// real server is not flooded with reads.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Limit)
	wait := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after %s: %s", Limit, what)
		}
		<-time.After(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// StepUntil calls step(d) (a fake clock's Step, or one that also ticks the fleet) until cond
// holds, at most steps times, giving the goroutines on that clock up to 100ms of real time
// after each step to act on it. what describes the condition when the test fails (built
// then, so it can say what was seen last).
func StepUntil(t testing.TB, step func(time.Duration), d time.Duration, steps int, what func() string, cond func() bool) {
	t.Helper()
	for range steps {
		if cond() {
			return
		}
		step(d)
		tick := time.NewTicker(time.Millisecond)
		for range 100 {
			if cond() {
				break
			}
			<-tick.C
		}
		tick.Stop()
	}
	if cond() {
		return
	}
	t.Fatalf("%s: not after %d steps of %s", what(), steps, d)
}

// Sum adds up the series of the metric name that g gathers whose labels include every pair
// of match ("loop": "sync", say; nil: every series): a counter's or a gauge's values, a
// histogram's sample counts.
func Sum(t testing.TB, g prometheus.Gatherer, name string, match map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			ok := true
			for k, v := range match {
				ok = ok && labels[k] == v
			}
			if !ok {
				continue
			}
			switch {
			case m.Gauge != nil:
				n += m.GetGauge().GetValue()
			case m.Histogram != nil:
				n += float64(m.GetHistogram().GetSampleCount())
			default:
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
