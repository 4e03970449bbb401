package propagation_test

import (
	"context"
	"fmt"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/propagation"
)

var (
	deployments  = federation.DeploymentType.TargetGVR()
	fdeployments = federation.DeploymentType.FederatedGVR()
	cpps         = federation.ClusterPropagationPolicyGVR
	pps          = federation.PropagationPolicyGVR
)

// recorder keeps the events the loops record.
type recorder struct {
	mu     gosync.Mutex
	events []string // "<kind> <name> <type> <reason>: <message>"
}

func (r *recorder) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	u, _ := obj.(*unstructured.Unstructured)
	name := ""
	if u != nil {
		name = u.GetKind() + " " + u.GetName()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", name, typ, reason, fmt.Sprintf(format, args...)))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if len(e) >= len(prefix) && e[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

const webPolicy = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusters: [{name: a}, {name: b}]}`

func nativeDeployment(name, image string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "` + image + `"}]}`
}

type world struct {
	*fedtest.Env
	events *recorder
}

// start runs a whole control plane (the propagation loop with the other loops) on a fake
// host and a fleet of three members whose Deployments become ready.
func start(t *testing.T) *world {
	t.Helper()
	e := fedtest.New(t, fedtest.Options{
		Members:    []fedtest.Member{{Name: "a"}, {Name: "b"}, {Name: "c"}},
		Workloads:  fake.Workloads{Apps: true},
		Namespaces: []string{"shop"},
	})
	w := &world{Env: e, events: &recorder{}}
	cp, err := controlplane.New(e.Host, e.Fleet, controlplane.Options{
		Types: []federation.TypeConfig{federation.DeploymentType}, Clock: e.Clock, Events: w.events,
		Disable: controlplane.Parts{DNS: true},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return w
}

func (w *world) until(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	fedtest.StepUntil(t, w.Clock.Step, time.Second, 300, what, cond)
}

// untilRuns steps the clock until the members run shop/name with the images of want, and
// nowhere else.
func (w *world) untilRuns(t *testing.T, name string, want map[string]string) {
	t.Helper()
	w.until(t, func() string { return fmt.Sprintf("members run %v, want %v", w.images(t, name), want) },
		func() bool { return cmp.Equal(w.images(t, name), want) })
}

// image is the image of member's Deployment shop/name, "" when it has none.
func (w *world) image(t *testing.T, member, name string) string {
	u, err := w.Member(t, member).Peek(deployments, "shop", name)
	if err != nil {
		return ""
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	img, _ := cs[0].(map[string]any)["image"].(string)
	return img
}

func (w *world) images(t *testing.T, name string) map[string]string {
	out := map[string]string{}
	for _, m := range []string{"a", "b", "c"} {
		if img := w.image(t, m, name); img != "" {
			out[m] = img
		}
	}
	return out
}

// status returns the native Deployment's status counts and observedGeneration, and its
// generation.
func (w *world) nativeStatus(t *testing.T, name string) (map[string]int64, int64) {
	u, err := w.Host.Peek(deployments, "shop", name)
	if err != nil {
		return nil, 0
	}
	out := map[string]int64{}
	for _, k := range []string{"replicas", "readyReplicas", "availableReplicas", "updatedReplicas", "observedGeneration"} {
		if v, ok, _ := unstructured.NestedInt64(u.Object, "status", k); ok {
			out[k] = v
		}
	}
	return out, u.GetGeneration()
}

// A plain Deployment and a ClusterPropagationPolicy: the Deployment runs in the placed
// clusters, its image edit flows through, a placement edit moves it, the host Deployment's
// status shows the fleet's ready replicas, and deleting it deletes the generated object
// and the member copies.
func TestPolicyFederatesANativeDeployment(t *testing.T) {
	w := start(t)
	fedtest.Create(t, w.Host, cpps, webPolicy)
	fedtest.Create(t, w.Host, deployments, nativeDeployment("web", "nginx:1"))

	want := map[string]string{"a": "nginx:1", "b": "nginx:1"}
	w.untilRuns(t, "web", want)

	fed, err := w.Host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, federation.GeneratedByPropagation, fed.GetLabels()[federation.GeneratedByLabel])
	require.Equal(t, "cluster/web", fed.GetAnnotations()[federation.PolicyAnnotation])
	native, err := w.Host.Peek(deployments, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, "cluster/web", native.GetAnnotations()[federation.PolicyAnnotation])
	owners := fed.GetOwnerReferences()
	require.Len(t, owners, 1)
	require.Equal(t, native.GetUID(), owners[0].UID)
	require.True(t, *owners[0].Controller)
	_, hasStatus, _ := unstructured.NestedMap(fed.Object, "spec", "template", "status")
	require.False(t, hasStatus, "the template carries no status")
	_, hasUID, _ := unstructured.NestedString(fed.Object, "spec", "template", "metadata", "uid")
	require.False(t, hasUID, "the template carries no server fields")

	// Two replicas in each of a and b: the host Deployment reports the fleet's four.
	wantStatus := func() map[string]int64 {
		_, gen := w.nativeStatus(t, "web")
		return map[string]int64{"replicas": 4, "readyReplicas": 4, "availableReplicas": 4, "updatedReplicas": 4, "observedGeneration": gen}
	}
	w.until(t, func() string {
		s, _ := w.nativeStatus(t, "web")
		return fmt.Sprintf("native status %v, want %v", s, wantStatus())
	},
		func() bool { s, _ := w.nativeStatus(t, "web"); return cmp.Equal(s, wantStatus()) })

	// The image edit flows through.
	fedtest.Apply(t, w.Host, deployments, nativeDeployment("web", "nginx:2"))
	want = map[string]string{"a": "nginx:2", "b": "nginx:2"}
	w.untilRuns(t, "web", want)
	w.until(t, func() string {
		s, _ := w.nativeStatus(t, "web")
		return fmt.Sprintf("native status %v, want %v", s, wantStatus())
	},
		func() bool { s, _ := w.nativeStatus(t, "web"); return cmp.Equal(s, wantStatus()) })

	// The policy's placement moves it.
	fedtest.Apply(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusters: [{name: c}]}`)
	want = map[string]string{"c": "nginx:2"}
	w.untilRuns(t, "web", want)

	// Deleting the Deployment deletes the generated object and the member copies.
	require.NoError(t, w.Host.Delete(context.Background(), deployments, "shop", "web", metav1.DeleteOptions{}))
	w.until(t, func() string { return fmt.Sprintf("members still run %v", w.images(t, "web")) }, func() bool {
		_, err := w.Host.Peek(fdeployments, "shop", "web")
		return apierrors.IsNotFound(err) && len(w.images(t, "web")) == 0
	})
	require.Equal(t, 1, w.events.count("Deployment web Normal PolicyChanged"), w.events.all())
}

// A FederatedDeployment written by hand is never taken over: a Warning on the native
// Deployment of its name, once, and both are left alone.
func TestPolicyLeavesAHandFederatedObjectAlone(t *testing.T) {
	w := start(t)
	fedtest.Create(t, w.Host, fdeployments, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "byhand:1"}]}
  placement: {clusters: [{name: c}]}`)
	w.until(t, func() string { return fmt.Sprintf("members run %v", w.images(t, "web")) },
		func() bool { return cmp.Equal(w.images(t, "web"), map[string]string{"c": "byhand:1"}) })
	before, err := w.Host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)

	fedtest.Create(t, w.Host, cpps, webPolicy)
	fedtest.Create(t, w.Host, deployments, nativeDeployment("web", "nginx:1"))
	w.until(t, func() string { return fmt.Sprintf("no FederatedByHand warning in %v", w.events.all()) },
		func() bool { return w.events.count("Deployment web Warning FederatedByHand") > 0 })
	for range 5 {
		w.Clock.Step(time.Second)
	}
	after, err := w.Host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)
	if diff := cmp.Diff(before.Object["spec"], after.Object["spec"]); diff != "" {
		t.Errorf("the hand-written spec changed (-before +after):\n%s", diff)
	}
	require.Empty(t, after.GetLabels()[federation.GeneratedByLabel])
	require.Empty(t, after.GetOwnerReferences())
	require.Equal(t, map[string]string{"c": "byhand:1"}, w.images(t, "web"))
	native, err := w.Host.Peek(deployments, "shop", "web")
	require.NoError(t, err)
	require.Empty(t, native.GetAnnotations()[federation.PolicyAnnotation])
	require.Equal(t, 1, w.events.count("Deployment web Warning FederatedByHand"), w.events.all())
}

// Reconcile alone: the generated object and the policy's preference are written once; a
// second pass over the same objects writes nothing; a native object no policy selects any
// more loses its generated object and preference; a member copy (ManagedByLabel) on the
// host is never selected.
func TestReconcileWritesOnlyRealChanges(t *testing.T) {
	ctx := context.Background()
	host := shopWithWeb(t, `
  scheduling: {clusters: {"*": {weight: 1}}}
  conflictResolution: Overwrite
  propagateDependencies: true`)
	p, err := propagation.New(host, []federation.TypeConfig{federation.DeploymentType, federation.ConfigMapType}, propagation.Options{})
	require.NoError(t, err)
	key := federation.Key{Namespace: "shop", Name: "web"}

	_, err = p.Reconcile(ctx, key)
	require.NoError(t, err)
	fed, err := host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, "true", fed.GetAnnotations()[federation.AdoptAnnotation])
	deps, _, _ := unstructured.NestedBool(fed.Object, "spec", "propagateDependencies")
	require.True(t, deps)
	rsp, err := host.Peek(federation.ReplicaSchedulingPreferenceGVR, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, fed.GetUID(), rsp.GetOwnerReferences()[0].UID)
	total, _, _ := unstructured.NestedInt64(rsp.Object, "spec", "totalReplicas")
	require.Equal(t, int64(2), total, "totalReplicas defaults to the native replicas")

	host.ClearActions()
	_, err = p.Reconcile(ctx, key)
	require.NoError(t, err)
	if w := writes(host.Actions()); len(w) > 0 {
		t.Errorf("a pass over unchanged objects wrote %v", w)
	}

	// A member copy on the host (the host is also a member) is not selected.
	fedtest.Create(t, host, deployments, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: copy, namespace: shop, labels: {app: web, federation.k8s.io/managed-by: fedkit}}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: x}]}}}`)
	fedtest.Apply(t, host, pps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]`)
	// Nor is a Secret holding a Cluster's credentials, whatever selects every Secret.
	fedtest.Create(t, host, federation.SecretGVR, `{apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: shop, labels: {federation.k8s.io/cluster: a}}, data: {token: dG9rZW4=}}`)
	fedtest.Create(t, host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: secrets}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Secret}]`)
	ps, err := propagation.New(host, []federation.TypeConfig{federation.SecretType}, propagation.Options{})
	require.NoError(t, err)
	host.ClearActions()
	_, err = p.Reconcile(ctx, federation.Key{Namespace: "shop", Name: "copy"})
	require.NoError(t, err)
	_, err = ps.Reconcile(ctx, federation.Key{Namespace: "shop", Name: "creds"})
	require.NoError(t, err)
	require.Empty(t, writes(host.Actions()))

	// No policy selects web any more: its generated object and preference go.
	require.NoError(t, host.Delete(ctx, pps, "shop", "web", metav1.DeleteOptions{}))
	_, err = p.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = host.Peek(fdeployments, "shop", "web")
	require.True(t, apierrors.IsNotFound(err), "generated object: %v", err)
	_, err = host.Peek(federation.ReplicaSchedulingPreferenceGVR, "shop", "web")
	require.True(t, apierrors.IsNotFound(err), "generated preference: %v", err)
	native, err := host.Peek(deployments, "shop", "web")
	require.NoError(t, err)
	require.NotContains(t, native.GetAnnotations(), federation.PolicyAnnotation)
}

func writes(actions []fake.Action) []string {
	var out []string
	for _, a := range actions {
		if slices.Contains([]fake.Verb{fake.VerbCreate, fake.VerbUpdate, fake.VerbUpdateStatus, fake.VerbPatch, fake.VerbDelete}, a.Verb) {
			out = append(out, a.String())
		}
	}
	return out
}

// shopWithWeb is a host with Cluster a, namespace shop, the native Deployment shop/web and
// the PropagationPolicy shop/web that selects it by name and places it in a, with more
// (YAML lines of its spec, indented by two).
func shopWithWeb(t *testing.T, more string) *fake.Cluster {
	t.Helper()
	host := fake.NewHost("host")
	fedtest.Create(t, host, federation.ClusterGVR, `{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: a}, spec: {apiEndpoint: "https://a"}}`)
	fedtest.Create(t, host, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	fedtest.Create(t, host, pps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusters: [{name: a}]}`+more)
	fedtest.Create(t, host, deployments, nativeDeployment("web", "nginx:1"))
	return host
}
