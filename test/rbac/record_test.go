package rbac_test

import (
	"context"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/federation"
)

// recorder is a host client that records every request made through it, as RBAC sees it,
// before passing it on. Each loop gets its own, so a request is charged to the loop that made
// it.
type recorder struct {
	federation.ClusterClient

	mu   sync.Mutex
	seen map[request]bool
}

func record(c federation.ClusterClient) *recorder {
	return &recorder{ClusterClient: c, seen: map[request]bool{}}
}

func (r *recorder) add(verb string, gvr schema.GroupVersionResource, sub, namespace string) {
	r.addNamed(verb, gvr, sub, namespace, "")
}

// addNamed records a request for one object by name (a get), which a rule limited to
// resourceNames may grant.
func (r *recorder) addNamed(verb string, gvr schema.GroupVersionResource, sub, namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[request{Verb: verb, Group: gvr.Group, Resource: gvr.Resource, Subresource: sub, Namespace: namespace, Name: name}] = true
}

// requests returns what was recorded, sorted.
func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]request, 0, len(r.seen))
	for req := range r.seen {
		out = append(out, req)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// saw reports whether a request with this verb on gvr (and sub) was made, in any namespace.
func (r *recorder) saw(verb string, gvr schema.GroupVersionResource, sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for req := range r.seen {
		if req.Verb == verb && req.Group == gvr.Group && req.Resource == gvr.Resource && req.Subresource == sub {
			return true
		}
	}
	return false
}

func (r *recorder) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	r.addNamed("get", gvr, "", namespace, name)
	return r.ClusterClient.Get(ctx, gvr, namespace, name)
}

func (r *recorder) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.add("list", gvr, "", namespace)
	return r.ClusterClient.List(ctx, gvr, namespace, opts)
}

func (r *recorder) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	r.add("watch", gvr, "", namespace)
	return r.ClusterClient.Watch(ctx, gvr, namespace, opts)
}

func (r *recorder) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r.add("create", gvr, "", obj.GetNamespace())
	return r.ClusterClient.Create(ctx, gvr, obj)
}

func (r *recorder) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r.add("update", gvr, "", obj.GetNamespace())
	return r.ClusterClient.Update(ctx, gvr, obj)
}

func (r *recorder) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r.add("update", gvr, "status", obj.GetNamespace())
	return r.ClusterClient.UpdateStatus(ctx, gvr, obj)
}

func (r *recorder) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	r.add("patch", gvr, "", namespace)
	return r.ClusterClient.Patch(ctx, gvr, namespace, name, pt, data)
}

func (r *recorder) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	r.add("delete", gvr, "", namespace)
	return r.ClusterClient.Delete(ctx, gvr, namespace, name, opts)
}
