package dnsrecord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// Member resources the controller reads.
var (
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ingressesGVR      = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// serviceNameLabel is the label EndpointSlices carry with the name of their Service.
const serviceNameLabel = "kubernetes.io/service-name"

// cluster is what the controller needs of a Cluster.
type cluster struct {
	name   string
	ready  bool
	region string
	zones  []string
}

// listClusters reads the Clusters on the host, sorted by name. A Cluster that does not decode
// is logged and left out.
func (c *Controller) listClusters(ctx context.Context, r federation.Reader, log logr.Logger) ([]cluster, error) {
	list, err := r.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("dnsrecord: list Clusters: %w", err)
	}
	out := make([]cluster, 0, len(list.Items))
	for i := range list.Items {
		cl, err := federation.ClusterFromUnstructured(&list.Items[i])
		if err != nil {
			log.Error(err, "Ignoring a Cluster that does not decode", "cluster", list.Items[i].GetName())
			continue
		}
		out = append(out, cluster{
			name:   cl.Name,
			ready:  meta.IsStatusConditionTrue(cl.Status.Conditions, federation.ConditionReady),
			region: cl.Region(),
			zones:  cl.Zones(),
		})
	}
	slices.SortFunc(out, func(a, b cluster) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// observed is one cluster's entry in a record's status.dns.
type observed struct {
	cluster cluster
	lb      corev1.LoadBalancerStatus
}

// observe applies the rules of status.dns, the same for both record kinds, to the Clusters
// (in name order), given each cluster's previous load balancer (prev) and a way to read its
// current one:
//
//   - a Ready cluster gets an entry with the load balancer read, empty when it does not
//     count;
//   - a cluster that is not Ready keeps its entry, without a load balancer, when it had one:
//     its names fall back instead of pointing at a dead cluster;
//   - a Ready cluster whose member cannot be read keeps its previous load balancer (a failed
//     read is not a failover; the Cluster's Ready condition decides), and the error, naming
//     the cluster, is returned for a retry;
//   - a cluster gone from the host loses its entry.
func observe(clusters []cluster, prev map[string]corev1.LoadBalancerStatus, what, op string, read func(cluster string) (corev1.LoadBalancerStatus, error)) ([]observed, error) {
	var out []observed
	var errs []error
	for _, cl := range clusters {
		old, had := prev[cl.name]
		if !cl.ready {
			if had {
				out = append(out, observed{cluster: cl})
			}
			continue
		}
		lb, err := read(cl.name)
		if err != nil {
			errs = append(errs, &federation.ClusterError{Cluster: cl.name, Op: op, Err: err})
			lb = old
		}
		out = append(out, observed{cluster: cl, lb: lb})
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("dnsrecord: %s: %w", what, errors.Join(errs...))
	}
	return out, nil
}

// memberObject returns the managed object (one carrying federation.ManagedByLabel) of gvr,
// namespace and name in cluster, or nil when there is none. It reads the ClusterSet's shared
// cache when the set offers one (federation.MemberCache), else the member's API server; in
// both cases an object without the label does not count, so that the answer does not depend
// on which path was taken: only what the federation propagated is published.
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
	u, err := reader.Get(ctx, gvr, namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if _, managed := u.GetLabels()[federation.ManagedByLabel]; !managed {
		return nil, nil
	}
	return u, nil
}

// loadBalancer decodes obj's status.loadBalancer (a Service's, or an Ingress's, whose
// networking/v1 shape has the same ip, hostname and ports fields).
func loadBalancer(obj *unstructured.Unstructured) (corev1.LoadBalancerStatus, error) {
	var lb corev1.LoadBalancerStatus
	m, found, err := unstructured.NestedMap(obj.Object, "status", "loadBalancer")
	if err == nil && found {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &lb)
	}
	if err != nil {
		return lb, fmt.Errorf("%s %s/%s: status.loadBalancer: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return lb, nil
}

// readyEndpoints reports whether the Service namespace/name in cluster has a ready endpoint in
// one of its EndpointSlices (an endpoint whose conditions.ready is true or unset, which the
// API defines as ready). EndpointSlices are written by the member's own controller and carry
// no federation label, so they are listed from the member's API server.
func (c *Controller) readyEndpoints(ctx context.Context, cluster, namespace, name string) (bool, error) {
	client, err := c.clusters.Client(cluster)
	if err != nil {
		return false, err
	}
	list, err := c.metrics.members.Client(cluster, client).List(ctx, endpointSlicesGVR, namespace, metav1.ListOptions{LabelSelector: serviceNameLabel + "=" + name})
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
