package sync_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// normalised is a FederatedDeployment whose template a real member server does not store as
// written: quantities as numbers and in other notations (stored canonical), empty fields
// (dropped), a container a webhook puts a sidecar next to.
const normalised = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    metadata: {labels: {app: frontend}}
    spec:
      replicas: 3
      paused: false
      selector: {matchLabels: {app: frontend}}
      template:
        metadata: {labels: {app: frontend}}
        spec:
          nodeSelector: {}
          serviceAccountName: ""
          containers:
          - name: nginx
            image: "nginx:1.21"
            args: []
            env: [{name: MODE, value: prod}]
            ports: [{containerPort: 8080}]
            resources:
              requests: {cpu: 0.5, memory: 512Mi}
              limits: {cpu: 1, memory: 1024Mi}
  placement:
    clusters: [{name: aws}, {name: gcp}, {name: azure}]
`

// sidecarWebhook makes every member act as if a mutating admission webhook appended a sidecar
// to each Deployment's containers on create and update (as Istio's injector does).
func sidecarWebhook(e *env, t *testing.T) {
	t.Helper()
	inject := func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
		if gvr != deployments {
			return obj
		}
		obj = obj.DeepCopy()
		cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range cs {
			if c.(map[string]any)["name"] == "istio-proxy" {
				return obj
			}
		}
		cs = append(cs, map[string]any{"name": "istio-proxy", "image": "proxy:1.0",
			"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}})
		require.NoError(t, unstructured.SetNestedSlice(obj.Object, cs, "spec", "template", "spec", "containers"))
		return obj
	}
	for _, name := range clusterNames {
		e.cluster(t, name).SetHooks(fake.Hooks{
			Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return next.Create(ctx, gvr, inject(gvr, obj))
			},
			Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return next.Update(ctx, gvr, inject(gvr, obj))
			},
		})
	}
}

// containerNamed returns the member's container called name, nil when there is none.
func containerNamed(t *testing.T, u *unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m := c.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// editContainer changes the member's container called name by hand.
func editContainer(t *testing.T, e *env, cluster, name string, edit func(c map[string]any)) {
	t.Helper()
	require.NoError(t, e.cluster(t, cluster).Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range cs {
			if m := c.(map[string]any); m["name"] == name {
				edit(m)
			}
		}
		require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	}))
}

// noMemberWrites fails when a member was written since the actions were cleared.
func noMemberWrites(t *testing.T, e *env, what string) {
	t.Helper()
	for _, name := range clusterNames {
		for _, a := range e.cluster(t, name).Actions() {
			if writeVerbs[a.Verb] {
				t.Errorf("%s: %s: a write: %s", what, name, a)
			}
		}
	}
}

// Drift is corrected on every field the federation owns, compared as the member's server
// stores it: quantities canonical, empty fields dropped, a webhook's sidecar appended. A hand
// edit of the image or of the cpu request is put back, the sidecar is left alone, and nothing
// is written again and again (sync gave up on the whole containers list the server changed,
// so a hand-edited image was never put back).
func TestDriftCorrectedThroughServerNormalisation(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	sidecarWebhook(e, t)
	e.apply(t, e.typ.FederatedGVR(), normalised)
	e.converge(t, 5)

	aws := e.member(t, "aws")
	require.NotNil(t, containerNamed(t, aws, "istio-proxy"), "the webhook's sidecar")
	if diff := cmp.Diff(map[string]any{
		"requests": map[string]any{"cpu": "500m", "memory": "512Mi"},
		"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
	}, containerNamed(t, aws, "nginx")["resources"]); diff != "" {
		t.Fatalf("the member stores quantities canonical (-want +got):\n%s", diff)
	}

	// Someone else's change makes sync compare the object again: nothing to write.
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["team.example.com/seen"] = "yes"
		u.SetAnnotations(a)
	}))
	e.clearActions()
	e.reconcile(t)
	noMemberWrites(t, e, "after another writer's annotation")

	// Hand edits of owned fields are put back.
	editContainer(t, e, "aws", "nginx", func(c map[string]any) { c["image"] = "evil:1" })
	editContainer(t, e, "gcp", "nginx", func(c map[string]any) {
		c["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "700m"
	})
	editContainer(t, e, "azure", "nginx", func(c map[string]any) { c["env"] = []any{map[string]any{"name": "MODE", "value": "debug"}} })
	e.reconcile(t)
	for cluster, check := range map[string]func(c map[string]any) any{
		"aws": func(c map[string]any) any { return c["image"] },
		"gcp": func(c map[string]any) any {
			return c["resources"].(map[string]any)["requests"].(map[string]any)["cpu"]
		},
		"azure": func(c map[string]any) any { return c["env"] },
	} {
		u := e.member(t, cluster)
		want := map[string]any{"aws": "nginx:1.21", "gcp": "500m", "azure": []any{map[string]any{"name": "MODE", "value": "prod"}}}[cluster]
		if diff := cmp.Diff(want, check(containerNamed(t, u, "nginx"))); diff != "" {
			t.Errorf("%s: the hand edit is put back (-want +got):\n%s", cluster, diff)
		}
		require.NotNil(t, containerNamed(t, u, "istio-proxy"), "%s: the sidecar stays", cluster)
	}

	// The webhook's sidecar is not the federation's: a hand edit of it is left alone, and
	// nothing is written again.
	editContainer(t, e, "aws", "istio-proxy", func(c map[string]any) { c["image"] = "proxy:1.1" })
	e.clearActions()
	e.reconcile(t)
	e.reconcile(t)
	noMemberWrites(t, e, "after the sidecar's edit")
	require.Equal(t, "proxy:1.1", containerNamed(t, e.member(t, "aws"), "istio-proxy")["image"])
}

// What sync knows of the members' normalisation survives a restart: a new Syncer over
// members that already run the desired objects (stored canonical, with a webhook's sidecar)
// makes zero writes, on the members or on the host (it wrote each member once more, as its
// memory of what the server changed was gone).
func TestNewSyncerOverRunningMembersWritesNothing(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	sidecarWebhook(e, t)
	e.apply(t, e.typ.FederatedGVR(), normalised)
	e.converge(t, 5)
	for _, name := range clusterNames {
		require.NotNil(t, e.member(t, name), name)
	}

	restarted, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	e.clearActions()
	_, err = restarted.Reconcile(ctx, key)
	require.NoError(t, err)
	noMemberWrites(t, e, "a new Syncer")
	for _, a := range e.host.Actions() {
		if writeVerbs[a.Verb] {
			t.Errorf("host: a write: %s", a)
		}
	}
}

// A template field the member's types do not have (a typo, a field of a newer Kubernetes) is
// pruned by a real server; a new Syncer does not write it again for that (it knew only from
// its memory of the last write, which a restart loses).
func TestNewSyncerOverPrunedFieldsWritesNothing(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	for _, name := range clusterNames {
		e.cluster(t, name).SetHooks(fake.Hooks{
			Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return pruning(next.Create)(ctx, next, gvr, obj)
			},
			Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return pruning(next.Update)(ctx, next, gvr, obj)
			},
		})
	}
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(3), "spec", "template", "spec", "replicaz"))
	})
	e.converge(t, 5)
	_, found, _ := unstructured.NestedFieldNoCopy(e.member(t, "aws").Object, "spec", "replicaz")
	require.False(t, found, "the member dropped it")

	restarted, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	e.clearActions()
	_, err = restarted.Reconcile(ctx, key)
	require.NoError(t, err)
	noMemberWrites(t, e, "a new Syncer")
}

// pruning makes a member drop spec.replicaz on every write, as a real API server drops the
// fields its types do not have.
func pruning(next func(context.Context, schema.GroupVersionResource, *unstructured.Unstructured) (*unstructured.Unstructured, error)) func(ctx context.Context, _ federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return func(ctx context.Context, _ federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		obj = obj.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "spec", "replicaz")
		return next(ctx, gvr, obj)
	}
}

// A template field the member's server does not keep (unknown to its types) is not drift:
// once sync has seen the server drop it, another writer's change to the object (a member
// controller's status, an annotation) causes no update (found with real API servers by the
// hostile input table, test/sync: one useless update per change of anyone else's).
func TestFieldsTheMemberDropsAreNotDrift(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	for _, name := range clusterNames {
		c := e.cluster(t, name)
		c.SetHooks(fake.Hooks{
			Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return pruning(next.Create)(ctx, next, gvr, obj)
			},
			Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return pruning(next.Update)(ctx, next, gvr, obj)
			},
		})
	}
	e.apply(t, e.typ.FederatedGVR(), frontend)
	u, err := e.host.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(3), "spec", "template", "spec", "replicaz"))
	_, err = e.host.Update(ctx, e.typ.FederatedGVR(), u)
	require.NoError(t, err)
	e.reconcile(t)
	_, found, _ := unstructured.NestedFieldNoCopy(e.member(t, "aws").Object, "spec", "replicaz")
	require.False(t, found, "the member dropped it")

	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["team.example.com/seen"] = "yes"
		u.SetAnnotations(a)
	}))
	e.cluster(t, "aws").ClearActions()
	e.reconcile(t)
	for _, a := range e.cluster(t, "aws").Actions() {
		require.False(t, writeVerbs[a.Verb], "a write for a field the member does not keep: %s", a)
	}

	// Real drift is still corrected.
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) { setMemberImage(u, "evil:1") }))
	e.reconcile(t)
	cs, _, _ := unstructured.NestedSlice(e.member(t, "aws").Object, "spec", "template", "spec", "containers")
	require.Equal(t, frontendImage, cs[0].(map[string]any)["image"])
}
