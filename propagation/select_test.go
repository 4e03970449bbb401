package propagation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
)

func deployment(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func policy(ns, name string, priority int32, sel ...federation.ResourceSelector) propagation.Policy {
	return propagation.Policy{Namespace: ns, Name: name, Spec: federation.PropagationSpec{Priority: priority, ResourceSelectors: sel}}
}

var (
	byKind  = federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byName  = federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	byLabel = federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
)

// TestMatchesPrecedence is the precedence table: priority, then a PropagationPolicy over a
// ClusterPropagationPolicy, then the more specific selector, then the name.
func TestMatchesPrecedence(t *testing.T) {
	obj := deployment("shop", "web", map[string]string{"app": "web"})
	for _, tc := range []struct {
		name     string
		policies []propagation.Policy
		want     []string // refs, best first
		why      []string // why each loser lost to the winner
	}{
		{name: "none", policies: []propagation.Policy{policy("shop", "other", 0, federation.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})}},
		{name: "higher priority first", policies: []propagation.Policy{
			policy("shop", "a", 0, byName), policy("", "b", 5, byKind)},
			want: []string{"cluster/b", "shop/a"}, why: []string{"priority 0 is lower than 5"}},
		{name: "namespaced over cluster at equal priority", policies: []propagation.Policy{
			policy("", "a", 1, byName), policy("shop", "z", 1, byKind)},
			want: []string{"shop/z", "cluster/a"}, why: []string{"a ClusterPropagationPolicy loses to a PropagationPolicy of equal priority"}},
		{name: "name over labels over kind", policies: []propagation.Policy{
			policy("shop", "a", 0, byKind), policy("shop", "b", 0, byLabel), policy("shop", "c", 0, byName)},
			want: []string{"shop/c", "shop/b", "shop/a"}, why: []string{
				"its selector (by labels) is less specific than the winner's (by name)",
				"its selector (by kind) is less specific than the winner's (by name)",
			}},
		{name: "the most specific of a policy's selectors counts", policies: []propagation.Policy{
			policy("shop", "a", 0, byKind, byName), policy("shop", "b", 0, byLabel)},
			want: []string{"shop/a", "shop/b"}, why: []string{"its selector (by labels) is less specific than the winner's (by name)"}},
		{name: "name ascending last", policies: []propagation.Policy{
			policy("", "b", 0, byKind), policy("", "a", 0, byKind)},
			want: []string{"cluster/a", "cluster/b"}, why: []string{"equal rank: the winner's name comes first"}},
		{name: "other namespace, other labels, other name, other kind do not match", policies: []propagation.Policy{
			policy("other", "a", 9, byKind),
			policy("", "b", 9, federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "other"}),
			policy("", "c", 9, federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}),
			policy("", "d", 9, federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "db"}),
			policy("", "e", 9, federation.ResourceSelector{APIVersion: "apps/v1beta1", Kind: "Deployment"}),
			policy("", "f", 0, federation.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop"}),
		}, want: []string{"cluster/f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := propagation.Matches(obj, tc.policies)
			var refs, why []string
			for i, m := range got {
				refs = append(refs, m.Policy.Ref())
				if i > 0 {
					why = append(why, propagation.Lost(got[0], m))
				}
			}
			if diff := cmp.Diff(tc.want, refs); diff != "" {
				t.Errorf("Matches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.why, why); diff != "" {
				t.Errorf("Lost (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecide is the preemption table: the policy that federates an object keeps it while it
// selects it, unless one ranked above it preempts (preemption Always); an invalid holder
// keeps it whatever the others say.
func TestDecide(t *testing.T) {
	obj := deployment("shop", "web", map[string]string{"app": "web"})
	always := func(p propagation.Policy) propagation.Policy { p.Spec.Preemption = federation.PreemptAlways; return p }
	invalid := func(p propagation.Policy) propagation.Policy { p.Err = federation.ErrInvalidObject; return p }
	low, high := policy("", "low", 0, byKind), policy("shop", "high", 5, byName)
	for _, tc := range []struct {
		name     string
		policies []propagation.Policy
		holder   string
		winner   string
		frozen   bool
		losers   []string // ref: reason
	}{
		{name: "none selects it", policies: []propagation.Policy{policy("", "cm", 0, federation.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})}, holder: "cluster/cm"},
		{name: "nobody holds it: the best wins", policies: []propagation.Policy{low, high},
			winner: "shop/high", losers: []string{"cluster/low: LowerPrecedence"}},
		{name: "the holder keeps it: the better one does not preempt", policies: []propagation.Policy{low, high}, holder: "cluster/low",
			winner: "cluster/low", losers: []string{"shop/high: NotPreempting"}},
		{name: "the better one preempts", policies: []propagation.Policy{low, always(high)}, holder: "cluster/low",
			winner: "shop/high", losers: []string{"cluster/low: LowerPrecedence"}},
		{name: "a cluster policy never preempts a namespaced one", policies: []propagation.Policy{always(low), high}, holder: "shop/high",
			winner: "shop/high", losers: []string{"cluster/low: LowerPrecedence"}},
		{name: "a namespaced policy preempts a cluster one whatever their priorities", policies: []propagation.Policy{policy("", "big", 9, byKind), always(policy("shop", "small", 0, byKind))}, holder: "cluster/big",
			winner: "shop/small", losers: []string{"cluster/big: CannotPreempt"}},
		{name: "a namespaced policy preempts a namespaced one of lower priority only", policies: []propagation.Policy{policy("shop", "a", 5, byKind), always(policy("shop", "b", 5, byName))}, holder: "shop/a",
			winner: "shop/a", losers: []string{"shop/b: CannotPreempt"}},
		{name: "a cluster policy preempts a cluster one of lower priority", policies: []propagation.Policy{policy("", "a", 1, byName), always(policy("", "b", 2, byKind))}, holder: "cluster/a",
			winner: "cluster/b", losers: []string{"cluster/a: LowerPrecedence"}},
		{name: "nobody holds it: one that may preempt the best takes it", policies: []propagation.Policy{policy("", "big", 9, byKind), always(policy("shop", "small", 0, byKind))},
			winner: "shop/small", losers: []string{"cluster/big: CannotPreempt"}},
		{name: "a higher priority cluster policy loses to the namespaced holder", policies: []propagation.Policy{always(policy("", "big", 9, byKind)), policy("shop", "small", 0, byKind)}, holder: "shop/small",
			winner: "shop/small", losers: []string{"cluster/big: CannotPreempt"}},
		{name: "the holder no longer selects it", policies: []propagation.Policy{low, policy("shop", "gone", 9, federation.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})}, holder: "shop/gone",
			winner: "cluster/low"},
		{name: "the holder is deleted", policies: []propagation.Policy{low, high}, holder: "shop/deleted",
			winner: "shop/high", losers: []string{"cluster/low: LowerPrecedence"}},
		{name: "an invalid holder keeps it", policies: []propagation.Policy{invalid(low), always(high)}, holder: "cluster/low",
			winner: "cluster/low", frozen: true, losers: []string{"shop/high: CannotPreempt"}},
		{name: "an invalid policy selects nothing", policies: []propagation.Policy{low, invalid(always(high))},
			winner: "cluster/low"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := propagation.Decide(obj, tc.policies, tc.holder)
			winner := ""
			if d.Winner.Policy.Name != "" {
				winner = d.Winner.Policy.Ref()
			}
			var losers []string
			for _, l := range d.Losers {
				losers = append(losers, l.Policy.Ref()+": "+propagation.LossReason(d.Winner, l))
			}
			if diff := cmp.Diff(tc.winner, winner); diff != "" {
				t.Errorf("winner (-want +got):\n%s", diff)
			}
			if d.Frozen != tc.frozen {
				t.Errorf("Frozen = %v; want %v", d.Frozen, tc.frozen)
			}
			if diff := cmp.Diff(tc.losers, losers); diff != "" {
				t.Errorf("losers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnselectable: each selector that can select nothing the types federate is named,
// with why.
func TestUnselectable(t *testing.T) {
	types := propagation.DefaultTypes([]federation.TypeConfig{federation.DeploymentType, federation.ConfigMapType, federation.SecretType})
	sel := func(apiVersion, kind string) federation.ResourceSelector {
		return federation.ResourceSelector{APIVersion: apiVersion, Kind: kind}
	}
	p := policy("shop", "p", 0, sel("apps/v1", "Deployment"), sel("apps/v1", "Deploymnet"), sel("apps/v1", "deployments"), sel("v1", "Secret"),
		sel("apps/v1beta2", "Deployment"), sel("apps/v1", "StatefulSet"), sel("v1", "ConfigMap"))
	want := []string{
		"spec.resourceSelectors[1]: apps/v1 Deploymnet is not a kind the control plane federates: did you mean Deployment?",
		"spec.resourceSelectors[2]: apps/v1 deployments is not a kind the control plane federates: did you mean Deployment?",
		"spec.resourceSelectors[3]: v1 Secret is left out: Secrets hold credentials, so the control plane does not federate them by default (an embedder who wants them runs the loop with federation.SecretType)",
		"spec.resourceSelectors[4]: apps/v1beta2 Deployment is federated as apps/v1 only: use apiVersion apps/v1",
		"spec.resourceSelectors[5]: apps/v1 StatefulSet is not a kind the control plane federates (it federates ConfigMap, Deployment)",
	}
	if diff := cmp.Diff(want, propagation.Unselectable(p, types)); diff != "" {
		t.Errorf("Unselectable (-want +got):\n%s", diff)
	}
	if got := propagation.Unselectable(p, append(types, federation.SecretType)); len(got) != 4 {
		t.Errorf("with SecretType, Unselectable = %q; want the Secret selector valid", got)
	}
}
