package sync_test

import (
	"context"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
)

var (
	ctx           = context.Background()
	key           = federation.Key{Namespace: "production", Name: "app-frontend"}
	now           = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	deployments   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces    = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	revisionsGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	clusterNames  = []string{"aws", "azure", "gcp"}
	writeVerbs    = map[fake.Verb]bool{fake.VerbCreate: true, fake.VerbUpdate: true, fake.VerbUpdateStatus: true, fake.VerbPatch: true, fake.VerbDelete: true}
	frontendImage = "nginx:1.21"
)

// env is a fake host, a fleet of three registered members, a fake clock and a Syncer for
// FederatedDeployments.
type env struct {
	host   *fake.Cluster
	fleet  *fake.Fleet
	clock  *clocktesting.FakeClock
	s      *fedsync.Syncer
	events *recorder
	typ    federation.TypeConfig
	reg    *prometheus.Registry
}

func newEnv(t *testing.T, opts fedsync.Options) *env {
	t.Helper()
	f := fedtest.New(t, fedtest.Options{Now: now, Namespaces: []string{"production"}, Members: []fedtest.Member{
		{Name: "aws", Labels: map[string]string{federation.RegionLabel: "us-east-1", "provider": "aws"}},
		{Name: "gcp", Labels: map[string]string{federation.RegionLabel: "europe-west1", "provider": "gcp"}},
		{Name: "azure", Labels: map[string]string{federation.RegionLabel: "southeastasia", "provider": "azure"}},
	}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock, events: &recorder{}, typ: federation.DeploymentType, reg: f.Registry}
	if opts.Clock == nil {
		opts.Clock = e.clock
	}
	if opts.Events == nil {
		opts.Events = e.events
	}
	if opts.Registerer == nil {
		opts.Registerer = e.reg
	}
	s, err := fedsync.New(e.host, e.fleet, e.typ, opts)
	require.NoError(t, err)
	e.s = s
	return e
}

// passes counts the Syncer's reconciles so far (its metric).
func (e *env) passes(t *testing.T) float64 {
	t.Helper()
	return fedtest.Sum(t, e.reg, "fedkit_reconciles_total", nil)
}

func (e *env) mustCreate(t *testing.T, c *fake.Cluster, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	t.Helper()
	_, err := c.Create(ctx, gvr, u)
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

// apply creates or replaces (spec, labels, annotations) an object on the host from YAML.
func (e *env) apply(t *testing.T, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	fedtest.Apply(t, e.host, gvr, doc)
}

// edit changes the federated object on the host, as a user would, without going through
// the host's recorded (and fault-injected) client.
func (e *env) edit(t *testing.T, mutate func(u *unstructured.Unstructured)) {
	t.Helper()
	require.NoError(t, e.host.Drift(e.typ.FederatedGVR(), key.Namespace, key.Name, mutate))
}

// reconcile runs one pass and fails the test on an error.
func (e *env) reconcile(t *testing.T) federation.Result {
	t.Helper()
	res, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	return res
}

// converge runs passes until one returns no error and the next makes no write, at most n.
func (e *env) converge(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		before := e.writes()
		_, err := e.s.Reconcile(ctx, key)
		if err == nil && e.writes() == before {
			return
		}
	}
	t.Fatalf("no convergence after %d passes", n)
}

// fed reads the federated object.
func (e *env) fed(t *testing.T) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return obj
}

// member reads the member object in cluster without recording an action; nil when absent.
func (e *env) member(t *testing.T, cluster string) *unstructured.Unstructured {
	t.Helper()
	c, ok := e.fleet.Member(cluster)
	require.True(t, ok, cluster)
	obj, err := c.Peek(deployments, key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return obj
}

func (e *env) cluster(t *testing.T, name string) *fake.Cluster {
	t.Helper()
	c, ok := e.fleet.Member(name)
	require.True(t, ok, name)
	return c
}

// writes counts the write actions on the members and the host so far.
func (e *env) writes() int {
	n := countWrites(e.host)
	for _, name := range e.fleet.Names() {
		c, _ := e.fleet.Member(name)
		n += countWrites(c)
	}
	return n
}

// memberWrites counts the write actions on one member, by verb.
func (e *env) memberWrites(t *testing.T, cluster string) map[fake.Verb]int {
	t.Helper()
	out := map[fake.Verb]int{}
	for _, a := range e.cluster(t, cluster).Actions() {
		if writeVerbs[a.Verb] {
			out[a.Verb]++
		}
	}
	return out
}

func (e *env) clearActions() {
	e.host.ClearActions()
	for _, name := range e.fleet.Names() {
		c, _ := e.fleet.Member(name)
		c.ClearActions()
	}
}

func countWrites(c *fake.Cluster) int {
	n := 0
	for _, a := range c.Actions() {
		if writeVerbs[a.Verb] {
			n++
		}
	}
	return n
}

func image(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	require.NoError(t, err)
	require.NotEmpty(t, containers)
	img, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
	return img
}

func replicas(obj *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	return n
}

func propagated(obj *federation.FederatedObject) metav1.Condition {
	if c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionPropagated); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// propagation returns status.clusters as cluster -> "propagation@revision".
func propagation(obj *federation.FederatedObject) map[string]string {
	out := map[string]string{}
	for _, c := range obj.Status.Clusters {
		out[c.Name] = fmt.Sprintf("%s@%d", c.Propagation, c.Revision)
	}
	return out
}

func setImage(img string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		c["image"] = img
		_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "template", "spec", "containers")
	}
}

// recorder collects events.
type recorder struct {
	mu     gosync.Mutex
	events []string
}

func (r *recorder) Eventf(_ runtime.Object, typ, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

const frontend = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    metadata: {labels: {app: frontend}}
    spec:
      replicas: 3
      selector: {matchLabels: {app: frontend}}
      template:
        metadata: {labels: {app: frontend}}
        spec: {containers: [{name: nginx, image: "nginx:1.21"}]}
  placement:
    clusters: [{name: aws}, {name: gcp}, {name: azure}]
  overrides:
  - clusterName: gcp
    clusterOverrides:
    - {op: replace, path: /spec/replicas, value: 4}
`

func yamlInto(doc string, u *unstructured.Unstructured) error {
	return yaml.Unmarshal([]byte(doc), &u.Object)
}

func deleteOpts() metav1.DeleteOptions { return metav1.DeleteOptions{} }
