package preview_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

var (
	ctx         = context.Background()
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	webKey      = federation.Key{Namespace: "shop", Name: "web"}
)

// loops is a fake host and fleet with the real Scheduler and Syncer (waiting for the
// scheduler, as in a control plane).
type loops struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	sched *scheduler.Scheduler
	sync  *fedsync.Syncer
}

func newLoops(t *testing.T, docs ...string) *loops {
	t.Helper()
	clock := clocktesting.NewFakeClock(now)
	l := &loops{host: fake.NewHost("host"), fleet: fake.NewFleet()}
	for _, name := range []string{"a", "b", "c"} {
		l.fleet.Add(name, map[string]string{federation.RegionLabel: "region-" + name})
	}
	require.NoError(t, l.fleet.Register(ctx, l.host))
	l.create(t, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	for _, doc := range docs {
		gvr := federation.DeploymentType.FederatedGVR()
		if strings.Contains(doc, "kind: ReplicaSchedulingPreference") {
			gvr = federation.ReplicaSchedulingPreferenceGVR
		}
		l.create(t, gvr, doc)
	}
	var err error
	l.sched, err = scheduler.New(l.host, federation.DeploymentType, scheduler.Options{Clock: clock})
	require.NoError(t, err)
	// As package controlplane runs sync next to the scheduler.
	l.sync, err = fedsync.New(l.host, l.fleet, federation.DeploymentType, fedsync.Options{Clock: clock, WaitForScheduler: true})
	require.NoError(t, err)
	return l
}

func (l *loops) create(t *testing.T, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	_, err := l.host.Create(ctx, gvr, u)
	require.NoError(t, err)
}

// pass runs the scheduler, then sync, once each.
func (l *loops) pass(t *testing.T) {
	t.Helper()
	_, err := l.sched.Reconcile(ctx, webKey)
	require.NoError(t, err)
	_, err = l.sync.Reconcile(ctx, webKey)
	require.NoError(t, err)
}

// input is what the host and the members hold now, as a preview reads it.
func (l *loops) input(t *testing.T) preview.Input {
	t.Helper()
	in := inputFrom(t, l.host, l.fleet)
	in.Now = now
	return in
}

// inputFrom reads what a preview reads: the federated Deployments, preferences and Clusters
// of the host, and the Deployments of every member as live objects.
func inputFrom(t *testing.T, host *fake.Cluster, fleet *fake.Fleet) preview.Input {
	t.Helper()
	in := preview.Input{Live: map[string][]*unstructured.Unstructured{}}
	for _, u := range host.Objects(federation.DeploymentType.FederatedGVR()) {
		o, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		in.Objects = append(in.Objects, *o)
	}
	for _, u := range host.Objects(federation.ReplicaSchedulingPreferenceGVR) {
		o, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
		require.NoError(t, err)
		in.Preferences = append(in.Preferences, *o)
	}
	for _, u := range host.Objects(federation.ClusterGVR) {
		o, err := federation.ClusterFromUnstructured(u)
		require.NoError(t, err)
		in.Clusters = append(in.Clusters, *o)
	}
	for _, name := range fleet.Names() {
		m, _ := fleet.Member(name)
		in.Live[name] = m.Objects(deployments)
	}
	return in
}

func (l *loops) member(t *testing.T, cluster string) *unstructured.Unstructured {
	t.Helper()
	m, _ := l.fleet.Member(cluster)
	u, err := m.Peek(deployments, webKey.Namespace, webKey.Name)
	if err != nil {
		return nil
	}
	return u
}

// TestRunLiveAgreesWithTheLoops: with the live member objects, the preview's change in each
// cluster is what the Scheduler and the Syncer then do there, and its diff names the fields
// they rewrite.
func TestRunLiveAgreesWithTheLoops(t *testing.T) {
	// Purge mode Immediately: c's copy goes at once (graceful eviction is tested in scheduler).
	l := newLoops(t, web(`{clusters: [{name: a}, {name: b}, {name: c}], failover: {purgeMode: Immediately}}`, ""),
		webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}`))
	l.pass(t)
	l.pass(t)

	// c leaves the placement (its object goes, a and b get its replicas), someone scales a by
	// hand (drift), and a member-owned field changes in b (not part of the diff).
	require.NoError(t, l.host.Drift(federation.DeploymentType.FederatedGVR(), webKey.Namespace, webKey.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}, "spec", "placement", "clusters")
	}))
	_, err := l.sched.Reconcile(ctx, webKey) // the schedule for the new placement: a 3, b 3
	require.NoError(t, err)
	a, _ := l.fleet.Member("a")
	require.NoError(t, a.Drift(deployments, webKey.Namespace, webKey.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(7), "spec", "replicas")
	}))
	b, _ := l.fleet.Member("b")
	require.NoError(t, b.Drift(deployments, webKey.Namespace, webKey.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(30), "spec", "minReadySeconds")
	}))

	rep, err := preview.Run(l.input(t))
	require.NoError(t, err)
	require.True(t, rep.Live)
	o := rep.Objects[0]
	got := map[string]string{}
	for _, c := range o.Clusters {
		require.NotNil(t, c.Change, c.Name)
		s := c.Change.Action + "/" + c.Change.Reason
		for _, d := range c.Change.Diff {
			s += " " + d.String()
		}
		got[c.Name] = s
	}
	want := map[string]string{"a": "Update/ /spec/replicas: 7 -> 3", "b": "Update/ /spec/replicas: 2 -> 3", "c": "Delete/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("preview (-want +got):\n%s", diff)
	}

	before := map[string]*unstructured.Unstructured{}
	for _, n := range []string{"a", "b", "c"} {
		before[n] = l.member(t, n)
	}
	l.pass(t)
	did := map[string]string{}
	for n, was := range before {
		is := l.member(t, n)
		switch {
		case is == nil:
			did[n] = "Delete"
		case is.GetResourceVersion() != was.GetResourceVersion():
			did[n] = "Update"
		default:
			did[n] = "None"
		}
	}
	if diff := cmp.Diff(map[string]string{"a": "Update", "b": "Update", "c": "Delete"}, did); diff != "" {
		t.Errorf("the loops did (-preview +loops):\n%s", diff)
	}
	replicas, _, _ := unstructured.NestedInt64(l.member(t, "a").Object, "spec", "replicas")
	require.EqualValues(t, 3, replicas)
	require.EqualValues(t, 2, o.Revision, "the placement changed: sync records revision 2")
	require.Equal(t, "2", l.member(t, "a").GetAnnotations()[federation.RevisionAnnotation])
	for _, c := range o.Clusters {
		if c.Manifest == nil {
			continue
		}
		// The manifest is what sync wrote, but for what the member and its server own.
		live := l.member(t, c.Name)
		require.Empty(t, plan.OwnedDiff(c.Manifest, live), "cluster %s", c.Name)
		require.Equal(t, live.GetAnnotations()[federation.RevisionAnnotation], c.Manifest.GetAnnotations()[federation.RevisionAnnotation])
	}

	// Without live objects, the same preview has no changes, and the same manifests.
	in := l.input(t)
	in.Live = nil
	dry, err := preview.Run(in)
	require.NoError(t, err)
	for i, c := range dry.Objects[0].Clusters {
		require.Nil(t, c.Change)
		require.Equal(t, c.Selected, o.Clusters[i].Selected)
		require.Equal(t, c.Replicas, o.Clusters[i].Replicas)
	}
	require.Equal(t, o.Scheduled, dry.Objects[0].Scheduled)
	require.Equal(t, metav1.ConditionTrue, o.Scheduled.Status)
}

// TestRunLiveAgreesWhileTheSchedulerRefuses: a new object whose preference is invalid. The
// preview says sync does nothing anywhere (and why); the loops then create nothing, rather
// than the template's count by the placement.
func TestRunLiveAgreesWhileTheSchedulerRefuses(t *testing.T) {
	// Purge mode Immediately: c's copy goes at once (graceful eviction is tested in scheduler).
	l := newLoops(t, web(`{clusters: [{name: a}, {name: b}, {name: c}], failover: {purgeMode: Immediately}}`, ""),
		webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {minReplicas: 3, maxReplicas: 1}}}`))
	rep, err := preview.Run(l.input(t))
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range rep.Objects[0].Clusters {
		require.NotNil(t, c.Change, c.Name)
		require.Nil(t, c.Manifest, c.Name)
		got[c.Name] = c.Change.Action + "/" + c.Change.Reason
	}
	want := map[string]string{"a": "None/NotScheduled", "b": "None/NotScheduled", "c": "None/NotScheduled"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("preview (-want +got):\n%s", diff)
	}

	_, err = l.sched.Reconcile(ctx, webKey)
	require.True(t, federation.IsTerminal(err), "%v", err)
	_, err = l.sync.Reconcile(ctx, webKey)
	require.NoError(t, err)
	for _, n := range []string{"a", "b", "c"} {
		require.Nil(t, l.member(t, n), n)
	}
}

// TestRunLiveAgreesOnAnInvalidMember: a template every member's API server refuses (the
// selector does not match the pod labels). The preview's change in each placed cluster is
// plan.Decide's InvalidMember, with the field as a problem; the loops then write nothing and
// report the same reason.
func TestRunLiveAgreesOnAnInvalidMember(t *testing.T) {
	bad := strings.Replace(web(`{clusters: [{name: a}, {name: b}]}`, ""), "selector: {matchLabels: {app: web}}", "selector: {matchLabels: {app: api}}", 1)
	l := newLoops(t, bad)
	rep, err := preview.Run(l.input(t))
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range rep.Objects[0].Clusters {
		if c.Change != nil {
			got[c.Name] = c.Change.Action + "/" + c.Change.Reason
		}
	}
	want := map[string]string{"a": "None/" + plan.ReasonInvalidMember, "b": "None/" + plan.ReasonInvalidMember}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	var fields []string
	for _, p := range rep.Objects[0].Problems {
		fields = append(fields, p.Cluster+" "+p.Field)
	}
	if diff := cmp.Diff([]string{"a spec.template.spec.template.metadata.labels", "b spec.template.spec.template.metadata.labels"}, fields); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	l.pass(t)
	fed, err := l.host.Peek(federation.DeploymentType.FederatedGVR(), webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	o, err := federation.FederatedObjectFromUnstructured(fed)
	require.NoError(t, err)
	did := map[string]string{}
	for _, st := range o.Status.Clusters {
		did[st.Name] = st.Propagation
	}
	if diff := cmp.Diff(map[string]string{"a": plan.ReasonInvalidMember, "b": plan.ReasonInvalidMember}, did); diff != "" {
		t.Errorf("the loops report (-want +got):\n%s", diff)
	}
	for _, n := range []string{"a", "b", "c"} {
		require.Nil(t, l.member(t, n), n)
	}
}
