package loop

import (
	"reflect"
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

// TestCacheTransformInterns: what a Cache's informers store drops managedFields and shares
// equal flat maps between objects (the per-cluster status entries of federated objects, equal
// labels), so N objects placed on C clusters do not hold N x C copies of the same entry.
// What readers get is still their own copy.
func TestCacheTransformInterns(t *testing.T) {
	c, err := NewCache(fake.NewHost("host"), CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keep := c.transform(func(u *unstructured.Unstructured) { u.SetAnnotations(nil) })
	fedObject := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "types.federation.k8s.io/v1alpha1", "kind": "FederatedConfigMap",
			"metadata": map[string]any{
				"namespace": "ns", "name": name, "resourceVersion": "1",
				"labels":        map[string]any{"app": "web"},
				"annotations":   map[string]any{"note": name},
				"managedFields": []any{map[string]any{"manager": "kubectl"}},
			},
			"status": map[string]any{"clusters": []any{
				map[string]any{"name": "m1", "propagation": "OK", "replicas": int64(1), "ready": true},
				map[string]any{"name": "m2", "propagation": "OK", "replicas": int64(1), "ready": true},
			}},
		}}
	}
	var stored []*unstructured.Unstructured
	for _, name := range []string{"a", "b"} {
		out, err := keep(fedObject(name))
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, out.(*unstructured.Unstructured))
	}
	a, b := stored[0], stored[1]
	if diff := cmp.Diff([]string{"web", "m1", "m2"}, []string{a.GetLabels()["app"], entry(a, 0)["name"].(string), entry(a, 1)["name"].(string)}); diff != "" {
		t.Errorf("stored object changed (-want +got):\n%s", diff)
	}
	if a.GetManagedFields() != nil || a.GetAnnotations() != nil {
		t.Errorf("managedFields %v and annotations %v kept: the cache's and the source's transforms drop them", a.GetManagedFields(), a.GetAnnotations())
	}
	for i := range 2 {
		if !sameMap(entry(a, i), entry(b, i)) {
			t.Errorf("status.clusters[%d] of a and b: equal entries, two maps in the cache", i)
		}
	}
	if !sameMap(a.Object["metadata"].(map[string]any)["labels"].(map[string]any), b.Object["metadata"].(map[string]any)["labels"].(map[string]any)) {
		t.Error("equal labels of a and b: two maps in the cache")
	}
	if sameMap(a.Object["metadata"].(map[string]any), b.Object["metadata"].(map[string]any)) {
		t.Error("metadata (name, resourceVersion) must stay each object's own")
	}

	// A reader's copy is its own: changing it changes neither stored object.
	inf := NewInformer(fake.NewHost("h"), schema.GroupVersionResource{Group: "types.federation.k8s.io", Version: "v1alpha1", Resource: "federatedconfigmaps"}, "", "")
	for _, u := range stored {
		if err := inf.GetStore().Add(u); err != nil {
			t.Fatal(err)
		}
	}
	list, err := ListFromCache(inf, schema.GroupVersionResource{}, "ns", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entry(&list.Items[0], 0)["propagation"] = "changed"
	if got := entry(b, 0)["propagation"]; got != "OK" {
		t.Errorf("changing a reader's copy of a changed the cache's b: propagation %v", got)
	}
}

func entry(u *unstructured.Unstructured, i int) map[string]any {
	return u.Object["status"].(map[string]any)["clusters"].([]any)[i].(map[string]any)
}

func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
