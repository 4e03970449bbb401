package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
)

// condition returns a policy's status condition of type typ ("" status when absent).
func (w *world) condition(t *testing.T, gvr schema.GroupVersionResource, namespace, name, typ string) metav1.Condition {
	t.Helper()
	u, err := w.Host.Peek(gvr, namespace, name)
	if err != nil {
		return metav1.Condition{}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(s), Reason: r, Message: msg}
		}
	}
	return metav1.Condition{}
}

// managed reports, per member that has shop/name, whether its copy carries fedkit's
// managed-by label.
func (w *world) managed(t *testing.T, name string) map[string]bool {
	out := map[string]bool{}
	for _, m := range []string{"a", "b", "c"} {
		u, err := w.Member(t, m).Peek(deployments, "shop", name)
		if err != nil {
			continue
		}
		out[m] = u.GetLabels()[federation.ManagedByLabel] != ""
	}
	return out
}

// runsWeb starts a control plane, the web policy and Deployment, and waits until a and b
// run nginx:1 and the host Deployment reports their four replicas.
func runsWeb(t *testing.T) *world {
	t.Helper()
	w := start(t)
	fedtest.Create(t, w.Host, cpps, webPolicy)
	fedtest.Create(t, w.Host, deployments, nativeDeployment("web", "nginx:1"))
	want := map[string]string{"a": "nginx:1", "b": "nginx:1"}
	w.untilRuns(t, "web", want)
	w.until(t, func() string { s, _ := w.nativeStatus(t, "web"); return fmt.Sprintf("native status %v", s) },
		func() bool { s, _ := w.nativeStatus(t, "web"); return s["readyReplicas"] == 4 })
	return w
}

// Item 1: a policy edit that fedkit's validation refuses (the API server without the CRD's
// rules accepts it) never removes what the policy federated: the generated object is not
// written, the members keep running, and the policy's status and a Warning event name the
// field and the error. Fixing the policy applies it again.
func TestInvalidPolicyKeepsTheLastValidDecision(t *testing.T) {
	for _, tc := range []struct {
		name, spec, field, detail string
	}{
		{"override path without its slash", `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusters: [{name: c}]}
  overrides: [{clusterName: c, clusterOverrides: [{path: spec/replicas, value: 1}]}]`,
			"spec.overrides[0].clusterOverrides[0].path", `must be a JSON pointer starting with "/"`},
		{"selector operator without values", `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchExpressions: [{key: app, operator: In}]}}]
  placement: {clusters: [{name: c}]}`,
			"spec.resourceSelectors[0].labelSelector.matchExpressions[0].values", "values set can't be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := runsWeb(t)
			before, err := w.Host.Peek(fdeployments, "shop", "web")
			require.NoError(t, err)
			fedtest.Apply(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:`+tc.spec)
			w.until(t, func() string {
				return fmt.Sprintf("no Valid=False on the policy, members run %v", w.images(t, "web"))
			}, func() bool {
				return w.condition(t, cpps, "", "web", federation.ConditionValid).Status == metav1.ConditionFalse ||
					len(w.images(t, "web")) < 2
			})
			for range 5 {
				w.Clock.Step(time.Second)
			}
			require.Equal(t, map[string]string{"a": "nginx:1", "b": "nginx:1"}, w.images(t, "web"), "the members keep running the last valid decision")
			after, err := w.Host.Peek(fdeployments, "shop", "web")
			require.NoError(t, err, "the generated object stays")
			require.Equal(t, before.GetResourceVersion(), after.GetResourceVersion(), "the generated object is not written")

			c := w.condition(t, cpps, "", "web", federation.ConditionValid)
			require.Equal(t, federation.ReasonInvalidPolicy, c.Reason)
			require.Contains(t, c.Message, tc.field)
			require.Contains(t, c.Message, tc.detail)
			warned := false
			for _, e := range w.events.all() {
				if strings.HasPrefix(e, "ClusterPropagationPolicy web Warning InvalidPolicy") && strings.Contains(e, tc.field) && strings.Contains(e, tc.detail) {
					warned = true
				}
			}
			require.True(t, warned, "no Warning naming %s: %v", tc.field, w.events.all())

			// Fixed, the policy applies again: web moves to c.
			fedtest.Apply(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusters: [{name: c}]}`)
			w.untilRuns(t, "web", map[string]string{"c": "nginx:1"})
			require.Equal(t, metav1.ConditionTrue, w.condition(t, cpps, "", "web", federation.ConditionValid).Status)
		})
	}
}

// Items 2 and 7: a policy deleted, or edited so that it no longer selects the object, never
// deletes the member copies: they keep running without fedkit's managed-by label, and the
// host object's status copy from the fleet is cleared. Deleting the native object still
// deletes its copies (TestPolicyFederatesANativeDeployment).
func TestUnselectedObjectsCopiesAreOrphaned(t *testing.T) {
	for _, tc := range []struct {
		name     string
		unselect func(t *testing.T, w *world)
	}{
		{"policy deleted", func(t *testing.T, w *world) {
			require.NoError(t, w.Host.Delete(context.Background(), cpps, "", "web", metav1.DeleteOptions{}))
		}},
		{"policy edited", func(t *testing.T, w *world) {
			fedtest.Apply(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: api}}}]
  placement: {clusters: [{name: a}, {name: b}]}`)
		}},
		{"object relabelled", func(t *testing.T, w *world) {
			native, err := w.Host.Get(context.Background(), deployments, "shop", "web")
			require.NoError(t, err)
			native.SetLabels(map[string]string{"app": "other"})
			_, err = w.Host.Update(context.Background(), deployments, native)
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := runsWeb(t)
			tc.unselect(t, w)
			w.until(t, func() string { return "the generated object is still there" }, func() bool {
				_, err := w.Host.Peek(fdeployments, "shop", "web")
				return apierrors.IsNotFound(err)
			})
			for range 5 {
				w.Clock.Step(time.Second)
			}
			w.until(t, func() string { s, _ := w.nativeStatus(t, "web"); return fmt.Sprintf("native status %v, want none", s) },
				func() bool { s, _ := w.nativeStatus(t, "web"); return len(s) == 0 })
			require.Equal(t, map[string]string{"a": "nginx:1", "b": "nginx:1"}, w.images(t, "web"), "the member copies keep running")
			require.Equal(t, map[string]bool{"a": false, "b": false}, w.managed(t, "web"), "the member copies are no longer managed")
			native, err := w.Host.Peek(deployments, "shop", "web")
			require.NoError(t, err)
			require.NotContains(t, native.GetAnnotations(), federation.PolicyAnnotation)
		})
	}
}

// Item 2: a policy that asks for it (removal: Delete) has the member copies deleted when it
// stops federating an object, even once the policy itself is gone.
func TestPolicyRemovalDeleteDeletesTheCopies(t *testing.T) {
	w := start(t)
	fedtest.Create(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusters: [{name: a}, {name: b}]}
  removal: Delete`)
	fedtest.Create(t, w.Host, deployments, nativeDeployment("web", "nginx:1"))
	want := map[string]string{"a": "nginx:1", "b": "nginx:1"}
	w.untilRuns(t, "web", want)
	require.NoError(t, w.Host.Delete(context.Background(), cpps, "", "web", metav1.DeleteOptions{}))
	w.until(t, func() string { return fmt.Sprintf("members still run %v", w.images(t, "web")) },
		func() bool { return len(w.images(t, "web")) == 0 })
}

// Item 7: when every cluster has left, the host object's status copy from the fleet says
// nothing runs.
func TestNativeStatusClearedWhenEveryClusterLeft(t *testing.T) {
	w := runsWeb(t)
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, w.Host.Delete(context.Background(), federation.ClusterGVR, "", name, metav1.DeleteOptions{}))
	}
	w.until(t, func() string {
		s, _ := w.nativeStatus(t, "web")
		return fmt.Sprintf("native status %v, want no replicas", s)
	},
		func() bool {
			s, _ := w.nativeStatus(t, "web")
			return s["replicas"] == 0 && s["readyReplicas"] == 0 && s["availableReplicas"] == 0 && s["updatedReplicas"] == 0
		})
}

// Item 3: a policy never takes over an object another policy federates unless it says so
// (preemption: Always). Both policies' status name the winner and the loser.
func TestPolicyPreemptsOnlyWhenItSaysSo(t *testing.T) {
	w := runsWeb(t)
	team := `
apiVersion: core.federation.k8s.io/v1alpha1
kind: PropagationPolicy
metadata: {name: team, namespace: shop}
spec:
  priority: 10
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusters: [{name: c}]}`
	fedtest.Create(t, w.Host, pps, team)
	w.until(t, func() string {
		return fmt.Sprintf("no Conflict on either policy, members run %v", w.images(t, "web"))
	}, func() bool {
		return (w.condition(t, pps, "shop", "team", federation.ConditionConflict).Status == metav1.ConditionTrue &&
			w.condition(t, cpps, "", "web", federation.ConditionConflict).Status == metav1.ConditionTrue) ||
			w.image(t, "c", "web") != ""
	})
	for range 5 {
		w.Clock.Step(time.Second)
	}
	require.Equal(t, map[string]string{"a": "nginx:1", "b": "nginx:1"}, w.images(t, "web"), "the higher priority policy does not take over")
	fed, err := w.Host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, "cluster/web", fed.GetAnnotations()[federation.PolicyAnnotation])
	loser := w.condition(t, pps, "shop", "team", federation.ConditionConflict)
	require.Equal(t, federation.ReasonNotPreempting, loser.Reason)
	require.Contains(t, loser.Message, "cluster/web")
	require.Contains(t, loser.Message, "shop/web")
	winner := w.condition(t, cpps, "", "web", federation.ConditionConflict)
	require.Contains(t, winner.Message, "shop/team")
	require.Contains(t, winner.Message, "shop/web")

	fedtest.Apply(t, w.Host, pps, team+`
  preemption: Always`)
	w.untilRuns(t, "web", map[string]string{"c": "nginx:1"})
	fed, err = w.Host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, "shop/team", fed.GetAnnotations()[federation.PolicyAnnotation])
	w.until(t, func() string {
		return fmt.Sprintf("cluster/web's Conflict: %+v", w.condition(t, cpps, "", "web", federation.ConditionConflict))
	}, func() bool {
		c := w.condition(t, cpps, "", "web", federation.ConditionConflict)
		return c.Status == metav1.ConditionTrue && c.Reason == federation.ReasonLowerPrecedence && strings.Contains(c.Message, "shop/team")
	})
}

// Item 4: no policy selects an object in kube-system, kube-public, kube-node-lease or the
// control plane's own namespace, whatever its selectors say; and the default conflict
// resolution never takes over a member object the federation does not manage.
func TestPoliciesNeverSelectSystemNamespaces(t *testing.T) {
	w := start(t)
	fedtest.Create(t, w.Host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	coreDNS := func(ns, image string) string {
		return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: ` + ns + `, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec: {containers: [{name: coredns, image: "` + image + `"}]}`
	}
	for _, m := range []string{"a", "b", "c"} {
		fedtest.Create(t, w.Member(t, m), deployments, coreDNS("kube-system", "member-dns:1"))
	}
	// c runs a web of its own that no federation manages.
	fedtest.Create(t, w.Member(t, "c"), namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	fedtest.Create(t, w.Member(t, "c"), deployments, nativeDeployment("web", "theirs:1"))
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease", "fedkit-system", "shop"} {
		fedtest.Create(t, w.Host, deployments, coreDNS(ns, "host-dns:1"))
	}
	fedtest.Create(t, w.Host, deployments, nativeDeployment("web", "nginx:1"))
	fedtest.Create(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: everything}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  - {apiVersion: apps/v1, kind: Deployment, namespace: kube-system, name: coredns}
  placement: {clusters: [{name: a}, {name: b}, {name: c}]}`)

	w.until(t, func() string {
		return fmt.Sprintf("shop/coredns not federated: members run %v", w.images(t, "coredns"))
	},
		func() bool {
			return len(w.images(t, "coredns")) == 3 && w.image(t, "a", "web") != "" && w.image(t, "b", "web") != ""
		})
	for range 5 {
		w.Clock.Step(time.Second)
	}
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease", "fedkit-system"} {
		_, err := w.Host.Peek(fdeployments, ns, "coredns")
		require.True(t, apierrors.IsNotFound(err), "%s/coredns was federated: %v", ns, err)
	}
	for _, m := range []string{"a", "b", "c"} {
		u, err := w.Member(t, m).Peek(deployments, "kube-system", "coredns")
		require.NoError(t, err)
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		require.Equal(t, "member-dns:1", cs[0].(map[string]any)["image"], "%s's own CoreDNS", m)
	}
	require.Equal(t, map[string]string{"a": "nginx:1", "b": "nginx:1", "c": "theirs:1"}, w.images(t, "web"), "c's own web is not taken over")
	require.Equal(t, map[string]bool{"a": true, "b": true, "c": false}, w.managed(t, "web"))
}

// Item 5: a policy that can select nothing this control plane federates says so in its
// status; a PropagationPolicy whose selector names its own namespace is valid.
func TestPolicyThatSelectsNothingSaysSo(t *testing.T) {
	w := start(t)
	for _, tc := range []struct{ name, selector, detail string }{
		{"misspelt", "{apiVersion: apps/v1, kind: Deploymnet}", "Deploymnet"},
		{"secrets", "{apiVersion: v1, kind: Secret}", "Secret"},
		{"unknown", "{apiVersion: apps/v1, kind: StatefulSet}", "StatefulSet"},
		{"version", "{apiVersion: apps/v1beta1, kind: Deployment}", "apps/v1"},
	} {
		fedtest.Create(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: `+tc.name+`}
spec:
  resourceSelectors: [`+tc.selector+`]`)
		w.until(t, func() string {
			return fmt.Sprintf("%s: Selectable is %+v", tc.name, w.condition(t, cpps, "", tc.name, federation.ConditionSelectable))
		}, func() bool {
			return w.condition(t, cpps, "", tc.name, federation.ConditionSelectable).Status == metav1.ConditionFalse
		})
		c := w.condition(t, cpps, "", tc.name, federation.ConditionSelectable)
		require.Contains(t, c.Message, tc.detail, tc.name)
		require.Contains(t, c.Message, "spec.resourceSelectors[0]", tc.name)
	}

	fedtest.Create(t, w.Host, pps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}]
  placement: {clusters: [{name: a}]}`)
	fedtest.Create(t, w.Host, deployments, nativeDeployment("web", "nginx:1"))
	w.untilRuns(t, "web", map[string]string{"a": "nginx:1"})
	w.until(t, func() string { return "shop/web's Valid and Selectable are not True" }, func() bool {
		return w.condition(t, pps, "shop", "web", federation.ConditionValid).Status == metav1.ConditionTrue &&
			w.condition(t, pps, "shop", "web", federation.ConditionSelectable).Status == metav1.ConditionTrue
	})
}

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Item 6: rolling back a Federated<Kind> a policy generated rolls back the native object
// the user owns (the propagation loop would undo a change to the generated object), and
// refuses, naming the policy, a revision whose overrides the policy no longer has.
func TestRollbackOfAGeneratedObjectRollsBackTheNativeObject(t *testing.T) {
	w := runsWeb(t)
	ctx := context.Background()
	key := federation.Key{Namespace: "shop", Name: "web"}
	fedtest.Apply(t, w.Host, deployments, nativeDeployment("web", "nginx:2"))
	want := map[string]string{"a": "nginx:2", "b": "nginx:2"}
	w.untilRuns(t, "web", want)

	require.NoError(t, fedsync.Rollback(ctx, w.Host, federation.DeploymentType, key, 0))
	want = map[string]string{"a": "nginx:1", "b": "nginx:1"}
	w.untilRuns(t, "web", want)
	native, err := w.Host.Peek(deployments, "shop", "web")
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(native.Object, "spec", "template", "spec", "containers")
	require.Equal(t, "nginx:1", cs[0].(map[string]any)["image"], "the native Deployment is rolled back")
	for range 5 {
		w.Clock.Step(time.Second)
	}
	require.Equal(t, want, w.images(t, "web"), "the rollback stays")

	// The policy's overrides change: a revision with other overrides is the policy's to
	// restore, not the rollback's.
	fedtest.Apply(t, w.Host, cpps, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  placement: {clusters: [{name: a}, {name: b}]}
  overrides: [{clusterName: a, replicas: 1}]`)
	w.until(t, func() string { return "a does not run the override's one replica" }, func() bool {
		u, err := w.Member(t, "a").Peek(deployments, "shop", "web")
		if err != nil {
			return false
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n == 1
	})
	err = fedsync.Rollback(ctx, w.Host, federation.DeploymentType, key, 0)
	require.ErrorIs(t, err, fedsync.ErrGenerated)
	require.ErrorContains(t, err, "cluster/web")
}
