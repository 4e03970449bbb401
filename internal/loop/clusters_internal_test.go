package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// listReader lists items, whatever is asked, or fails with err.
type listReader struct {
	items []unstructured.Unstructured
	err   error
}

func (r *listReader) Get(context.Context, schema.GroupVersionResource, string, string) (*unstructured.Unstructured, error) {
	return nil, errors.New("not used")
}

func (r *listReader) List(context.Context, schema.GroupVersionResource, string, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if r.err != nil {
		return nil, r.err
	}
	return &unstructured.UnstructuredList{Items: r.items}, nil
}

func clusterItem(name, uid, rv, endpoint string) unstructured.Unstructured {
	return unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1",
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": name, "uid": uid, "resourceVersion": rv},
		"spec":       map[string]any{"apiEndpoint": endpoint},
	}}
}

// TestClustersList: a Cluster that does not decode is left out; through a reader that is no
// ClusterDecoder each Cluster is decoded once per uid and resourceVersion, and the Clusters
// a List no longer returns are forgotten.
func TestClustersList(t *testing.T) {
	ctx := context.Background()
	bad := clusterItem("bad", "u-bad", "1", "")
	bad.Object["spec"] = "not an object"
	r := &listReader{items: []unstructured.Unstructured{clusterItem("a", "u-a", "1", "https://a"), bad, clusterItem("b", "u-b", "1", "https://b")}}
	var cl Clusters
	names := func(cs []federation.Cluster) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name+"@"+c.ResourceVersion+"="+c.Spec.APIEndpoint)
		}
		return out
	}
	got, err := cl.List(ctx, r, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a@1=https://a", "b@1=https://b"}, names(got)); diff != "" {
		t.Errorf("first List (-want +got):\n%s", diff)
	}
	first := cl.own.decoded["u-a"]

	// b changes, a does not, bad is gone.
	r.items = []unstructured.Unstructured{clusterItem("a", "u-a", "1", "https://a"), clusterItem("b", "u-b", "2", "https://b2")}
	got, err = cl.List(ctx, r, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a@1=https://a", "b@2=https://b2"}, names(got)); diff != "" {
		t.Errorf("second List (-want +got):\n%s", diff)
	}
	if cl.own.decoded["u-a"] != first {
		t.Error("a, unchanged, was decoded again")
	}

	r.items = r.items[1:]
	if _, err := cl.List(ctx, r, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	var kept []types.UID
	for uid := range cl.own.decoded {
		kept = append(kept, uid)
	}
	if diff := cmp.Diff([]types.UID{"u-b"}, kept); diff != "" {
		t.Errorf("decoded after a left (-want +got):\n%s", diff)
	}

	r.err = errors.New("boom")
	if _, err := cl.List(ctx, r, logr.Discard()); !errors.Is(err, r.err) {
		t.Errorf("List error = %v, want %v", err, r.err)
	}
}
