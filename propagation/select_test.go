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
