package dnsrecord

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Member resources the controller reads.
var (
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ingressesGVR      = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// serviceNameLabel is the label EndpointSlices carry with the name of their Service.
const serviceNameLabel = "kubernetes.io/service-name"

// listClusters reads the Clusters on the host. A Cluster that does not decode is logged and
// left out.
func (c *Controller) listClusters(ctx context.Context, r federation.Reader, log logr.Logger) ([]federation.Cluster, error) {
	list, err := r.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("dnsrecord: list Clusters: %w", err)
	}
	out := make([]federation.Cluster, 0, len(list.Items))
	for i := range list.Items {
		cl, err := loop.DecodeCluster(r, &list.Items[i]) // once per resourceVersion for every loop
		if err != nil {
			log.Error(err, "Ignoring a Cluster that does not decode", "cluster", list.Items[i].GetName())
			continue
		}
		out = append(out, *cl)
	}
	return out, nil
}

// memberObject returns the object of gvr, namespace and name in cluster, or nil when there
// is none or it is not this federation's: its federation.ManagedByLabel is not
// Options.Identity (another federation's object, or one nobody manages). It reads the
// ClusterSet's shared cache when the set offers one (federation.MemberCache), else the
// member's API server, and the answer does not depend on which path was taken: only what
// this federation propagated is published. The read, with its wait for the cache to sync, is
// bounded by Options.ReadTimeout.
func (c *Controller) memberObject(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	var reader federation.Reader
	if mc, ok := c.clusters.(federation.MemberCache); ok {
		if cached, err := mc.CachedReader(cluster, gvr); err == nil {
			reader = cached
		}
	}
	if reader == nil {
		client, err := c.clusters.Client(cluster)
		if err != nil {
			return nil, err
		}
		reader = c.metrics.members.Client(cluster, client) // a live read is a member request
	}
	u, err := bounded(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return reader.Get(ctx, gvr, namespace, name)
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case u.GetLabels()[federation.ManagedByLabel] != c.opts.Identity:
		return nil, nil
	}
	return u, nil
}

// readyEndpoints reports whether the Service namespace/name in cluster has a ready endpoint in
// one of its EndpointSlices (an endpoint whose conditions.ready is true or unset, which the
// API defines as ready). EndpointSlices are written by the member's own controller and carry
// no federation label, so they are listed from the member's API server, within
// Options.ReadTimeout.
func (c *Controller) readyEndpoints(ctx context.Context, cluster, namespace, name string) (bool, error) {
	client, err := c.clusters.Client(cluster)
	if err != nil {
		return false, err
	}
	list, err := bounded(ctx, c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
		return c.metrics.members.Client(cluster, client).List(ctx, endpointSlicesGVR, namespace, metav1.ListOptions{LabelSelector: serviceNameLabel + "=" + name})
	})
	if err != nil {
		return false, err
	}
	for _, slice := range list.Items {
		eps, _, _ := unstructured.NestedSlice(slice.Object, "endpoints")
		for _, ep := range eps {
			m, ok := ep.(map[string]any)
			if !ok {
				continue
			}
			ready, found, err := unstructured.NestedBool(m, "conditions", "ready")
			if err == nil && (!found || ready) {
				return true, nil
			}
		}
	}
	return false, nil
}
