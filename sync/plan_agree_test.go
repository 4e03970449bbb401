package sync_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// planFromHost is what a preview knows: the federated object, the Clusters and the member
// objects as they are, and nothing of the Syncer's memory (no verified versions).
func (e *env) planFromHost(t *testing.T) []fedsync.Change {
	t.Helper()
	fed := e.fed(t)
	federation.DefaultFederatedObject(fed)
	var clusters []federation.Cluster
	for _, u := range e.host.Objects(federation.ClusterGVR) {
		c, err := federation.ClusterFromUnstructured(u)
		require.NoError(t, err)
		clusters = append(clusters, *c)
	}
	members := map[string]fedsync.MemberState{}
	for _, name := range clusterNames {
		members[name] = fedsync.MemberState{Object: e.member(t, name)}
	}
	changes, _, err := fedsync.Plan(fedsync.PlanInput{
		Type: e.typ, Object: fed, Clusters: clusters, Members: members,
		Adopt: fed.GetAnnotations()[federation.AdoptAnnotation] == "true",
	})
	require.NoError(t, err)
	return changes
}

// outcome is one cluster's decision as "Action/Reason", and the drift paths of an update.
type outcome struct {
	Act   string
	Drift string
}

func planned(changes []fedsync.Change) map[string]outcome {
	out := map[string]outcome{}
	for _, ch := range changes {
		out[ch.Cluster] = outcome{Act: ch.Action.String() + "/" + ch.Reason, Drift: strings.Join(ch.Drift, ",")}
	}
	return out
}

// observed is what the Syncer did in each cluster: the change it made to the member object
// (before is each cluster's object before the pass), the propagation reason it wrote for the
// cluster, and the paths its DriftCorrected event names. Effects are compared rather than
// attempts: the Syncer reads members through caches that see only managed objects, so on its
// first meeting with an unmanaged object of the same name it tries a create, which the member
// refuses (AlreadyExists), and then decides on the object read live, as Plan does.
func (e *env) observed(t *testing.T, before map[string]*unstructured.Unstructured, eventsBefore int) map[string]outcome {
	t.Helper()
	fed := e.fed(t)
	reasons := map[string]string{}
	for _, c := range fed.Status.Clusters {
		reasons[c.Name] = c.Propagation
	}
	out := map[string]outcome{}
	for _, name := range clusterNames {
		was, is := before[name], e.member(t, name)
		act := fedsync.ActionNone
		switch {
		case was == nil && is != nil:
			act = fedsync.ActionCreate
		case was != nil && (is == nil || is.GetUID() != was.GetUID() || is.GetDeletionTimestamp() != nil && was.GetDeletionTimestamp() == nil):
			act = fedsync.ActionDelete
		case was != nil && is.GetResourceVersion() != was.GetResourceVersion():
			act = fedsync.ActionUpdate
		}
		drift := ""
		for _, ev := range e.events.list()[eventsBefore:] {
			// "Normal DriftCorrected corrected drift of Deployment in 2 clusters: aws (/a, /b), gcp (/c)"
			p, ok := strings.CutPrefix(ev, "Normal DriftCorrected corrected drift of Deployment in ")
			if !ok {
				continue
			}
			_, list, _ := strings.Cut(p, ": ")
			for item := range strings.SplitSeq(list, "), ") {
				if paths, ok := strings.CutPrefix(item, name+" ("); ok {
					drift = strings.ReplaceAll(strings.TrimSuffix(paths, ")"), ", ", ",")
				}
			}
		}
		if _, listed := reasons[name]; listed || act != fedsync.ActionNone {
			out[name] = outcome{Act: act.String() + "/" + reasons[name], Drift: drift}
		}
	}
	return out
}

// unmanaged is a Deployment of the federated object's name that no federation (or another,
// when manager is set) created.
func unmanaged(manager string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "mine"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "mine"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "mine:1"}}},
			},
		},
	}}
	if manager != "" {
		u.SetLabels(map[string]string{federation.ManagedByLabel: manager})
	}
	return u
}

// TestPlanAgreesWithReconcile: for every member state, Plan on what a preview can see (the
// objects as they are, no memory of the Syncer's) decides what the Syncer then does: the same
// write (or none) in every cluster, the same propagation reason, the same drift. The object
// is first synced to aws, gcp and azure; each case then changes one thing.
func TestPlanAgreesWithReconcile(t *testing.T) {
	notOnAzure := func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters")
	}
	replaceAzure := func(t *testing.T, e *env, manager string) {
		require.NoError(t, e.cluster(t, "azure").DriftDelete(deployments, key.Namespace, key.Name))
		require.NoError(t, e.cluster(t, "azure").Seed(unmanaged(manager)))
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env)
		want  map[string]outcome // what Plan must say, so agreement is never vacuous
	}{
		{name: "in line", setup: func(t *testing.T, e *env) {},
			want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "None/"}}},
		{name: "absent", setup: func(t *testing.T, e *env) {
			require.NoError(t, e.cluster(t, "aws").DriftDelete(deployments, key.Namespace, key.Name))
		}, want: map[string]outcome{"aws": {Act: "Create/"}, "gcp": {Act: "None/"}, "azure": {Act: "None/"}}},
		{name: "owned field drifted", setup: func(t *testing.T, e *env) {
			require.NoError(t, e.cluster(t, "gcp").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(9), "spec", "replicas")
			}))
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "Update/", Drift: "/spec/replicas"}, "azure": {Act: "None/"}}},
		{name: "member-owned field changed", setup: func(t *testing.T, e *env) {
			require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(30), "spec", "minReadySeconds")
				a := u.GetAnnotations()
				a["deployment.kubernetes.io/revision"] = "2"
				u.SetAnnotations(a)
			}))
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "None/"}}},
		{name: "template changed", setup: func(t *testing.T, e *env) {
			e.edit(t, setImage("nginx:1.25"))
		}, want: map[string]outcome{"aws": {Act: "Update/"}, "gcp": {Act: "Update/"}, "azure": {Act: "Update/"}}},
		{name: "unmanaged", setup: func(t *testing.T, e *env) { replaceAzure(t, e, "") },
			want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "None/" + fedsync.ReasonAlreadyExists}}},
		{name: "unmanaged, adoption allowed", setup: func(t *testing.T, e *env) {
			replaceAzure(t, e, "")
			e.edit(t, func(u *unstructured.Unstructured) {
				u.SetAnnotations(map[string]string{federation.AdoptAnnotation: "true"})
			})
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "Update/"}}},
		{name: "another federation's", setup: func(t *testing.T, e *env) { replaceAzure(t, e, "other") },
			want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "None/" + fedsync.ReasonManagedByOther}}},
		{name: "being deleted", setup: func(t *testing.T, e *env) {
			require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
				u.SetFinalizers([]string{"example.com/hold"})
			}))
			require.NoError(t, e.cluster(t, "aws").DriftDelete(deployments, key.Namespace, key.Name))
		}, want: map[string]outcome{"aws": {Act: "None/" + fedsync.ReasonWaitingForRemoval}, "gcp": {Act: "None/"}, "azure": {Act: "None/"}}},
		{name: "not placed, managed", setup: func(t *testing.T, e *env) { e.edit(t, notOnAzure) },
			want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "Delete/"}}},
		{name: "not placed, unmanaged", setup: func(t *testing.T, e *env) {
			replaceAzure(t, e, "")
			e.edit(t, notOnAzure)
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}}},
		{name: "not placed, being deleted", setup: func(t *testing.T, e *env) {
			require.NoError(t, e.cluster(t, "azure").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
				u.SetFinalizers([]string{"example.com/hold"})
			}))
			require.NoError(t, e.cluster(t, "azure").DriftDelete(deployments, key.Namespace, key.Name))
			e.edit(t, notOnAzure)
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/"}, "azure": {Act: "None/" + fedsync.ReasonWaitingForRemoval}}},
		{name: "override path missing", setup: func(t *testing.T, e *env) {
			e.edit(t, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"clusterName": "gcp", "clusterOverrides": []any{
					map[string]any{"op": "replace", "path": "/spec/nothing/here", "value": int64(1)}}}}, "spec", "overrides")
			})
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/" + fedsync.ReasonRenderFailed}, "azure": {Act: "None/"}}},
		{name: "cluster not ready", setup: func(t *testing.T, e *env) {
			u, err := e.host.Get(ctx, federation.ClusterGVR, "", "gcp")
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
				"type": "Ready", "status": "False", "reason": "Test", "lastTransitionTime": "2026-11-30T00:00:00Z"}}, "status", "conditions"))
			_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
			require.NoError(t, err)
		}, want: map[string]outcome{"aws": {Act: "None/"}, "gcp": {Act: "None/" + fedsync.ReasonClusterNotReady}, "azure": {Act: "None/"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			e.apply(t, e.typ.FederatedGVR(), frontend)
			e.converge(t, 3)
			tc.setup(t, e)
			e.clearActions()

			plan := planned(e.planFromHost(t))
			if diff := cmp.Diff(tc.want, plan); diff != "" {
				t.Fatalf("Plan (-want +got):\n%s", diff)
			}
			events := len(e.events.list())
			before := map[string]*unstructured.Unstructured{}
			for _, name := range clusterNames {
				before[name] = e.member(t, name)
			}
			_, err := e.s.Reconcile(ctx, key)
			require.NoError(t, err)
			if diff := cmp.Diff(plan, e.observed(t, before, events)); diff != "" {
				t.Errorf("Plan and Reconcile disagree (-Plan +Reconcile):\n%s", diff)
			}
		})
	}
}

// TestOwnedDiff: the owned fields an update changes, with their values, sorted; member-owned
// fields are not differences.
func TestOwnedDiff(t *testing.T) {
	desired := unmanaged("fedkit")
	desired.SetAnnotations(map[string]string{federation.RevisionAnnotation: "3", "team": "web"})
	live := desired.DeepCopy()
	live.SetAnnotations(map[string]string{federation.RevisionAnnotation: "2", "team": "web", "deployment.kubernetes.io/revision": "4"})
	_ = unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas")
	_ = unstructured.SetNestedField(live.Object, "Recreate", "spec", "strategy", "type")
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"name": "c", "image": "mine:2"}}, "spec", "template", "spec", "containers")
	live.SetLabels(nil)
	live.SetCreationTimestamp(metav1.Now())

	var got []string
	for _, c := range fedsync.OwnedDiff(desired, live) {
		got = append(got, c.String())
	}
	want := []string{
		`/metadata/labels/` + strings.ReplaceAll(federation.ManagedByLabel, "/", "~1") + `: (absent) -> "fedkit"`,
		`/spec/replicas: 5 -> 1`,
		`/spec/template/spec/containers/0/image: "mine:2" -> "mine:1"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OwnedDiff (-want +got):\n%s", diff)
	}
	require.Empty(t, fedsync.OwnedDiff(desired, desired.DeepCopy()))
	require.True(t, slices.ContainsFunc(fedsync.OwnedDiff(desired, nil), func(c fedsync.FieldChange) bool {
		return c.Path == "/spec" && !c.InLive
	}), "a create: every top-level field is new")
}
