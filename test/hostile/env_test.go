package hostile_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

var ctx = context.Background()

// kinds are the federated kinds the table uses; each has a scheduler, a syncer and a
// collector.
var kinds = []federation.TypeConfig{federation.NamespaceType, federation.ConfigMapType, federation.DeploymentType, federation.ServiceType}

// env is a host, three members and every loop, driven round by round on a fake clock.
type env struct {
	host   *fake.Cluster
	fleet  *fake.Fleet
	clock  *clocktesting.FakeClock
	events *recorder

	monitor    *status.ClusterMonitor
	schedulers []*scheduler.Scheduler
	syncers    []*fedsync.Syncer
	collectors []*status.Collector
}

func newEnv(t *testing.T) *env {
	t.Helper()
	f := fedtest.New(t, fedtest.Options{Now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Workloads: fake.Workloads{Apps: true},
		Members: []fedtest.Member{{Name: "a", Labels: map[string]string{federation.RegionLabel: "region-a"}},
			{Name: "b", Labels: map[string]string{federation.RegionLabel: "region-b"}}, {Name: "c", Labels: map[string]string{federation.RegionLabel: "region-c"}}}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock, events: &recorder{}}
	for _, ns := range []string{"apps", "other"} {
		require.NoError(t, e.host.Seed(obj(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns))))
	}
	var err error
	e.monitor, err = status.NewClusterMonitor(e.host, e.fleet, status.MonitorOptions{Clock: e.clock})
	require.NoError(t, err)
	for _, typ := range kinds {
		s, err := scheduler.New(e.host, typ, scheduler.Options{Clock: e.clock})
		require.NoError(t, err)
		y, err := fedsync.New(e.host, e.fleet, typ, fedsync.Options{Clock: e.clock, Events: e.events, WaitForScheduler: true})
		require.NoError(t, err)
		c, err := status.New(e.host, e.fleet, typ, status.Options{Clock: e.clock})
		require.NoError(t, err)
		e.schedulers, e.syncers, e.collectors = append(e.schedulers, s), append(e.syncers, y), append(e.collectors, c)
	}
	return e
}

// round runs every loop over every key once, then lets ten seconds pass. It returns the
// errors the loops returned, by loop and key.
func (e *env) round(t *testing.T) map[string]error {
	t.Helper()
	errs := map[string]error{}
	for _, n := range e.fleet.Names() {
		if _, err := e.monitor.Reconcile(ctx, federation.Key{Name: n}); err != nil {
			errs["monitor "+n] = err
		}
	}
	for i, typ := range kinds {
		var keys []federation.Key
		for _, u := range e.host.Objects(typ.FederatedGVR()) {
			keys = append(keys, federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()})
		}
		for _, k := range keys {
			if _, err := e.schedulers[i].Reconcile(ctx, k); err != nil {
				errs["scheduler "+typ.Federated.Kind+" "+k.String()] = err
			}
			if _, err := e.syncers[i].Reconcile(ctx, k); err != nil {
				errs["sync "+typ.Federated.Kind+" "+k.String()] = err
			}
		}
		e.fleet.Tick()
		for _, k := range keys {
			if _, err := e.collectors[i].Reconcile(ctx, k); err != nil {
				errs["status "+typ.Federated.Kind+" "+k.String()] = err
			}
		}
	}
	e.clock.Step(10 * time.Second)
	return errs
}

// fed reads a federated object.
func (e *env) fed(t *testing.T, typ federation.TypeConfig, ns, name string) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Peek(typ.FederatedGVR(), ns, name)
	require.NoError(t, err)
	f, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return f
}

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

// recorder records events as "Type Reason Kind ns/name: message".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(o runtime.Object, typ, reason, format string, args ...any) {
	u, _ := o.(interface {
		GetNamespace() string
		GetName() string
	})
	ref := ""
	if u != nil {
		ref = u.GetNamespace() + "/" + u.GetName()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", typ, reason, ref, fmt.Sprintf(format, args...)))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// rounds runs n rounds.
func (e *env) rounds(t *testing.T, n int) {
	t.Helper()
	for range n {
		e.round(t)
	}
}

// goodNeighbour creates a well-formed FederatedConfigMap next to the hostile object.
func (e *env) goodNeighbour(t *testing.T) {
	t.Helper()
	_, err := e.host.Create(ctx, federation.ConfigMapType.FederatedGVR(), obj(t,
		`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: good, namespace: apps}, spec: {placement: {clusterSelector: {}}, template: {data: {fine: "yes"}}}}`))
	require.NoError(t, err)
}

// requireGoodNeighbour requires the well-formed object to be everywhere, in sync and ready.
func (e *env) requireGoodNeighbour(t *testing.T) {
	t.Helper()
	f := e.fed(t, federation.ConfigMapType, "apps", "good")
	for _, typ := range []string{federation.ConditionScheduled, federation.ConditionPropagated, federation.ConditionReady} {
		c := meta.FindStatusCondition(f.Status.Conditions, typ)
		require.NotNil(t, c, "the well-formed object has no %s condition", typ)
		require.Equal(t, metav1.ConditionTrue, c.Status, "the well-formed object: %s %s: %s", typ, c.Reason, c.Message)
	}
	for _, n := range e.fleet.Names() {
		m, _ := e.fleet.Member(n)
		_, err := m.Peek(federation.ConfigMapType.TargetGVR(), "apps", "good")
		require.NoError(t, err, "the well-formed object is missing in %s", n)
	}
}

// has reports whether an event starts with prefix and contains sub.
func (r *recorder) has(prefix, sub string) bool {
	for _, ev := range r.list() {
		if strings.HasPrefix(ev, prefix) && strings.Contains(ev, sub) {
			return true
		}
	}
	return false
}
