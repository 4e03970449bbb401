package metrics

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/federation"
)

// Client returns c, the client of member cluster, counting every request made through it in
// m. A loop wraps the clients it gets from its ClusterSet, so every request it makes to a
// member counts, whatever code path makes it. The result has only the ClusterClient methods:
// a caller that needs an optional capability (federation.HealthChecker) asks c itself and
// counts with Observe.
func (m *Members) Client(cluster string, c federation.ClusterClient) federation.ClusterClient {
	return &countingClient{c: c, m: m, cluster: cluster}
}

type countingClient struct {
	c       federation.ClusterClient
	m       *Members
	cluster string
}

func (c *countingClient) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	u, err := c.c.Get(ctx, gvr, namespace, name)
	c.m.Observe(c.cluster, "get", err)
	return u, err
}

func (c *countingClient) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := c.c.List(ctx, gvr, namespace, opts)
	c.m.Observe(c.cluster, "list", err)
	return l, err
}

func (c *countingClient) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := c.c.Create(ctx, gvr, obj)
	c.m.Observe(c.cluster, "create", err)
	return u, err
}

func (c *countingClient) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := c.c.Update(ctx, gvr, obj)
	c.m.Observe(c.cluster, "update", err)
	return u, err
}

func (c *countingClient) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := c.c.UpdateStatus(ctx, gvr, obj)
	c.m.Observe(c.cluster, "update", err)
	return u, err
}

func (c *countingClient) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	u, err := c.c.Patch(ctx, gvr, namespace, name, pt, data)
	c.m.Observe(c.cluster, "patch", err)
	return u, err
}

func (c *countingClient) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	err := c.c.Delete(ctx, gvr, namespace, name, opts)
	c.m.Observe(c.cluster, "delete", err)
	return err
}

func (c *countingClient) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.c.Watch(ctx, gvr, namespace, opts)
	c.m.Observe(c.cluster, "watch", err)
	return w, err
}
