package loop

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/fedkit/fedkit/fake"
)

func TestListFromCacheUsesLabelIndex(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	inf := NewInformer(fake.NewCluster("c"), gvr, "", "")
	if err := inf.AddIndexers(cache.Indexers{labelIndex("owner"): labelIndexFunc("owner")}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct{ ns, name, owner, tier string }{
		{"a", "r1", "x", "1"}, {"a", "r2", "y", "1"}, {"b", "r3", "x", "1"}, {"a", "r4", "x", "2"}, {"a", "r5", "", "1"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace(o.ns)
		u.SetName(o.name)
		l := map[string]string{"tier": o.tier}
		if o.owner != "" {
			l["owner"] = o.owner
		}
		u.SetLabels(l)
		if err := inf.GetStore().Add(u); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		ns, selector string
		want         []string
	}{
		{"a", "owner=x", []string{"r1", "r4"}},
		{"", "owner=x", []string{"r1", "r4", "r3"}},
		{"a", "owner=x,tier=2", []string{"r4"}},
		{"a", "owner in (x,y)", []string{"r1", "r2", "r4"}}, // not an equality: a scan
		{"b", "owner==x", []string{"r3"}},
	} {
		list, err := ListFromCache(inf, gvr, tc.ns, metav1.ListOptions{LabelSelector: tc.selector})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range list.Items {
			got = append(got, u.GetName())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ListFromCache(%q, %q) (-want +got):\n%s", tc.ns, tc.selector, diff)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		held, want string
		covered    bool
	}{
		{"owner", "owner=abc", true},
		{"owner", "owner in (a,b)", true},
		{"owner", "owner", true},
		{"owner", "other=abc", false},
		{"owner", "", false},
		{"owner", "!owner", false},
		{"owner", "owner!=abc", false},
		{"app=web", "app=web,tier=1", true},
		{"app=web", "app=db", false},
		{"app=web,owner", "owner=x,app=web", true},
		{"app=web,owner", "owner=x", false},
	} {
		want, err := labels.Parse(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := covers(tc.held, want); got != tc.covered {
			t.Errorf("covers(%q, %q) = %v; want %v", tc.held, tc.want, got, tc.covered)
		}
	}
}
