package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/sync/plan"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// unit is a host with edge's namespace, edge's member, edge's HubClient and its agent, on
// one fake clock, without a control plane: the test plays sync through the HubClient.
type unit struct {
	host, member *fake.Cluster
	hub          *agent.HubClient
	agent        *agent.Agent
	clock        *clocktesting.FakeClock
}

func newUnit(t testing.TB) *unit {
	t.Helper()
	env := fedtest.New(t, fedtest.Options{Namespaces: []string{federation.PullNamespace("edge")}})
	u := &unit{host: env.Host, member: fake.NewCluster("edge"), clock: env.Clock}
	u.member.SetClock(env.Clock)
	u.hub = agent.NewHubClient(env.Host, "edge", env.Clock)
	a, err := agent.New(env.Host, u.member, agent.Options{Cluster: "edge", Clock: env.Clock})
	if err != nil {
		t.Fatal(err)
	}
	u.agent = a
	if err := a.Reconcile(context.Background()); err != nil { // the Lease
		t.Fatal(err)
	}
	return u
}

func configMap(name string, labels map[string]string, data string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{"k": data}}}
	u.SetNamespace("default")
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

var ours = map[string]string{federation.ManagedByLabel: federation.ManagedByValue}

// applied returns the reason of the Applied condition of the Assignment of ConfigMap
// default/name.
func (u *unit) applied(t *testing.T, name string) string {
	t.Helper()
	obj, err := u.host.Peek(federation.AssignmentGVR, federation.PullNamespace("edge"), federation.AssignmentName(configMaps, "default", name))
	if err != nil {
		t.Fatal(err)
	}
	a := &federation.Assignment{}
	if err := federation.FromUnstructured(obj, a); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(a.Status.Conditions, federation.ConditionApplied)
	if c == nil {
		return ""
	}
	return c.Reason
}

// data returns the member ConfigMap's data.k, "(absent)" when there is none.
func (u *unit) data(name string) string {
	obj, err := u.member.Peek(configMaps, "default", name)
	if apierrors.IsNotFound(err) {
		return "(absent)"
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", "k")
	return v
}

// TestAgentFollowsSyncRules: the agent applies an Assignment by sync's rules: it creates,
// corrects drift and deletes what carries the federation's identity, and never changes or
// deletes what another federation manages or what the federation did not create: it
// reports why instead.
func TestAgentFollowsSyncRules(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	for _, cm := range []*unstructured.Unstructured{
		configMap("foreign", nil, "theirs"),
		configMap("other", map[string]string{federation.ManagedByLabel: "another"}, "theirs"),
	} {
		if _, err := u.member.Create(ctx, configMaps, cm); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"web", "foreign", "other"} {
		if _, err := u.hub.Create(ctx, configMaps, configMap(name, ours, "v1")); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	type state struct{ Web, Foreign, Other, WebReason, ForeignReason, OtherReason string }
	got := state{u.data("web"), u.data("foreign"), u.data("other"), u.applied(t, "web"), u.applied(t, "foreign"), u.applied(t, "other")}
	want := state{"v1", "theirs", "theirs", "Applied", plan.ReasonAlreadyExists, plan.ReasonManagedByOther}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Apply (-want +got):\n%s", diff)
	}

	// Drift in the member is corrected on the next pass.
	live, err := u.member.Get(ctx, configMaps, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(live.Object, "drifted", "data", "k")
	if _, err := u.member.Update(ctx, configMaps, live); err != nil {
		t.Fatal(err)
	}
	u.clock.Step(time.Second)
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := u.data("web"); got != "v1" {
		t.Errorf("after drift: data.k = %q, want v1", got)
	}

	// Deletes: ours goes, the others stay, and every Assignment goes once read after the
	// agent reported.
	for _, name := range []string{"web", "foreign", "other"} {
		presented, err := u.hub.Get(ctx, configMaps, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		uid, rv := presented.GetUID(), presented.GetResourceVersion()
		if err := u.hub.Delete(ctx, configMaps, "default", name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got = state{Web: u.data("web"), Foreign: u.data("foreign"), Other: u.data("other")}
	want = state{Web: "(absent)", Foreign: "theirs", Other: "theirs"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Delete (-want +got):\n%s", diff)
	}
	for _, name := range []string{"web", "foreign", "other"} {
		if _, err := u.hub.Get(ctx, configMaps, "default", name); !apierrors.IsNotFound(err) {
			t.Errorf("Get %s after the agent deleted it: %v, want NotFound", name, err)
		}
		if _, err := u.host.Peek(federation.AssignmentGVR, federation.PullNamespace("edge"), federation.AssignmentName(configMaps, "default", name)); !apierrors.IsNotFound(err) {
			t.Errorf("Assignment of %s: %v, want NotFound (collected)", name, err)
		}
	}
}

// TestAgentCreatesTheNamespace: an object whose namespace the member lacks gets it, as sync
// creates it in push mode: marked as the federation's and as created for its objects.
func TestAgentCreatesTheNamespace(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	cm := configMap("web", ours, "v1")
	cm.SetNamespace("shop")
	if _, err := u.hub.Create(ctx, configMaps, cm); err != nil {
		t.Fatal(err)
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := u.member.Peek(configMaps, "shop", "web"); err != nil {
		t.Errorf("ConfigMap shop/web in the member: %v", err)
	}
	ns, err := u.member.Peek(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "shop")
	if err != nil {
		t.Fatalf("namespace shop in the member: %v", err)
	}
	if !plan.CreatedNamespace(ns, "") {
		t.Errorf("namespace shop: labels %v, annotations %v; want it marked as created by the federation", ns.GetLabels(), ns.GetAnnotations())
	}
}

// TestAgentRefusesAnInvalidAssignment: an Assignment whose manifest is not the object its
// name says (written by hand, or by something else than sync) is reported and never
// applied; the others are.
func TestAgentRefusesAnInvalidAssignment(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	if _, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v1")); err != nil {
		t.Fatal(err)
	}
	forged := &federation.Assignment{Spec: federation.AssignmentSpec{Resource: federation.AssignedResourceOf(configMaps),
		Change: federation.AssignmentApply, Manifest: federation.RawObject{Object: configMap("kube-proxy", ours, "forged").Object}}}
	forged.APIVersion, forged.Kind = federation.AssignmentGVK.ToAPIVersionAndKind()
	forged.Namespace, forged.Name = federation.PullNamespace("edge"), federation.AssignmentName(configMaps, "default", "other")
	obj, err := federation.ToUnstructured(forged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.host.Create(ctx, federation.AssignmentGVR, obj); err != nil {
		t.Fatal(err)
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := u.data("kube-proxy"); got != "(absent)" {
		t.Errorf("the forged manifest was applied: data.k %q", got)
	}
	if got := u.data("web"); got != "v1" {
		t.Errorf("web: data.k %q, want v1 (the valid Assignment applied all the same)", got)
	}
	if got := u.applied(t, "other"); got != "InvalidAssignment" {
		t.Errorf("the forged Assignment's Applied reason = %q, want InvalidAssignment", got)
	}
}

// TestAgentOfAMemberThatDoesNotAnswer: an agent whose member does not answer stops renewing
// its Lease (the host then sees the cluster as an unreachable push member) and leaves its
// reports as they were.
func TestAgentOfAMemberThatDoesNotAnswer(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	if _, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v1")); err != nil {
		t.Fatal(err)
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	u.member.Partition()
	u.clock.Step(agent.DefaultLeaseDuration / 2)
	if err := u.agent.Reconcile(ctx); !errors.Is(err, federation.ErrUnreachable) {
		t.Errorf("Reconcile with the member cut off: %v, want ErrUnreachable", err)
	}
	u.clock.Step(agent.DefaultLeaseDuration/2 + time.Second)
	if err := u.hub.Healthy(ctx); !errors.Is(err, federation.ErrUnreachable) {
		t.Errorf("Healthy while the member does not answer: %v, want ErrUnreachable (the Lease not renewed)", err)
	}
	u.member.Heal()
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := u.hub.Get(ctx, configMaps, "default", "web")
	if err != nil {
		t.Fatalf("Get after the heal: %v", err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "k"); v != "v1" {
		t.Errorf("reported data.k %q, want v1", v)
	}
}

// TestHubClientSurfacesTheAgentsFailure: when the member refuses what the agent writes, sync
// learns it as it would from a push member: the object is NotFound, and creating it again
// with the same manifest fails with the member's answer.
func TestHubClientSurfacesTheAgentsFailure(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	u.member.FailOn(fake.VerbCreate, apierrors.NewForbidden(configMaps.GroupResource(), "web", errors.New("quota exceeded")), 0)
	if _, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v1")); err != nil {
		t.Fatal(err)
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := u.hub.Get(ctx, configMaps, "default", "web"); !apierrors.IsNotFound(err) {
		t.Errorf("Get after the member refused the create: %v, want NotFound", err)
	}
	_, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v1"))
	if err == nil || !strings.Contains(err.Error(), "quota exceeded") {
		t.Errorf("Create again: %v, want the member's answer", err)
	}
	u.member.FailOn(fake.VerbCreate, nil, 0)
	if _, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v2")); err != nil {
		t.Errorf("Create with a new manifest: %v", err)
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := u.data("web"); got != "v2" {
		t.Errorf("member data.k %q, want v2", got)
	}
}

// TestRunAppliesAChangeAtOnce: Run watches the cluster's Assignments, so a new one is
// applied without waiting for the period (the fake clock does not move here).
func TestRunAppliesAChangeAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	u := newUnit(t)
	done := make(chan error, 1)
	go func() { done <- u.agent.Run(ctx) }()
	if _, err := u.hub.Create(context.Background(), configMaps, configMap("web", ours, "v1")); err != nil {
		t.Fatal(err)
	}
	fedtest.Eventually(t, "web applied in the member", func() bool { return u.data("web") == "v1" })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestNewValidates: New refuses what it cannot run with, naming the field.
func TestNewValidates(t *testing.T) {
	host, member := fake.NewCluster("host"), fake.NewCluster("edge")
	for _, tc := range []struct {
		name string
		opts agent.Options
		want string
	}{
		{"no cluster", agent.Options{}, "Cluster is required"},
		{"a cluster whose namespace is no name", agent.Options{Cluster: "Edge_1"}, `Cluster "Edge_1"`},
		{"a Lease shorter than the period", agent.Options{Cluster: "edge", Period: time.Minute}, "LeaseDuration"},
	} {
		_, err := agent.New(host, member, tc.opts)
		if !errors.Is(err, agent.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New: %v, want ErrInvalidOptions naming %q", tc.name, err, tc.want)
		}
	}
}

// TestHubClientLocksOnTheAssignment: writes through the HubClient are locked on the
// Assignment as a member's writes are on the object: a stale version or uid is a Conflict,
// and nothing changes.
func TestHubClientLocksOnTheAssignment(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	created, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.hub.Create(ctx, configMaps, configMap("web", ours, "v1")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second Create: %v, want AlreadyExists", err)
	}
	next := configMap("web", ours, "v2")
	next.SetResourceVersion(created.GetResourceVersion())
	updated, err := u.hub.Update(ctx, configMaps, next)
	if err != nil {
		t.Fatal(err)
	}
	stale := configMap("web", ours, "v3")
	stale.SetResourceVersion(created.GetResourceVersion())
	if _, err := u.hub.Update(ctx, configMaps, stale); !apierrors.IsConflict(err) {
		t.Errorf("Update at a stale version: %v, want Conflict", err)
	}
	rv, uid := created.GetResourceVersion(), updated.GetUID()
	if err := u.hub.Delete(ctx, configMaps, "default", "web", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}); !apierrors.IsConflict(err) {
		t.Errorf("Delete at a stale version: %v, want Conflict", err)
	}
	got, err := u.hub.Get(ctx, configMaps, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "k"); v != "v2" || got.GetDeletionTimestamp() != nil {
		t.Errorf("after the refused writes: data.k %q, deleting %v; want v2, not deleting", v, got.GetDeletionTimestamp() != nil)
	}
}

// TestHubClientHealthIsTheLease: a pull cluster is healthy while its agent's Lease is
// fresh; once it is older than its duration, Healthy and every read fail as an unreachable
// member's do.
func TestHubClientHealthIsTheLease(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	if err := u.hub.Healthy(ctx); err != nil {
		t.Fatalf("Healthy right after the agent's pass: %v", err)
	}
	u.clock.Step(agent.DefaultLeaseDuration + time.Second)
	for what, err := range map[string]error{
		"Healthy": u.hub.Healthy(ctx),
		"Get":     func() error { _, err := u.hub.Get(ctx, configMaps, "default", "web"); return err }(),
	} {
		if !errors.Is(err, federation.ErrUnreachable) {
			t.Errorf("%s with an expired Lease: %v, want ErrUnreachable", what, err)
		}
	}
	if err := u.agent.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if err := u.hub.Healthy(ctx); err != nil {
		t.Errorf("Healthy after the agent renewed: %v", err)
	}
}
