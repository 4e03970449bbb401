package dnsrecord

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
)

// ServiceStatusDNS returns the status.dns the DNS loop writes for rec: one entry per
// cluster, with the Cluster's region and zones and its member Service's load balancer. It
// is pure: read supplies each cluster's load balancer (the loop reads the member, a dry run
// looks at the objects it was given), rec's current status.dns is the previous one, and
// clusters are the Cluster objects on the host, in any order. The rules, the same for
// [IngressStatusDNS]:
//
//   - a Ready cluster gets an entry with the load balancer read, empty when it does not
//     count (no managed member object, no load balancer yet: see [MemberLoadBalancer]);
//   - a cluster that is not Ready keeps its entry, without a load balancer, when
//     status.dns had one for it, so that its names fall back to the level above (CNAMEs)
//     instead of pointing at a dead cluster or vanishing; it gets no entry otherwise, and
//     read is not called for it;
//   - a Ready cluster whose read fails keeps its previous load balancer: a failed read is
//     not a failover (the Cluster's Ready condition decides that), and the error, a
//     federation.ClusterError naming the cluster, is returned, joined with the others, for
//     a retry, along with the entries;
//   - a cluster gone from clusters loses its entry.
//
// The entries are in cluster name order.
func ServiceStatusDNS(rec *ServiceDNSRecord, clusters []federation.Cluster, read func(cluster string) (corev1.LoadBalancerStatus, error)) ([]ClusterDNS, error) {
	prev := map[string]corev1.LoadBalancerStatus{}
	for _, e := range rec.Status.DNS {
		prev[e.Cluster] = e.LoadBalancer
	}
	obs, err := observe(clusters, prev, "ServiceDNSRecord "+rec.Namespace+"/"+rec.Name, "read Service", read)
	out := make([]ClusterDNS, 0, len(obs))
	for _, o := range obs {
		out = append(out, ClusterDNS{Cluster: o.cluster.Name, Region: o.cluster.Region(), Zones: o.cluster.Zones(), LoadBalancer: o.lb})
	}
	return out, err
}

// IngressStatusDNS returns the status.dns the DNS loop writes for rec: one entry per
// cluster with its member Ingress's load balancer, by the rules of [ServiceStatusDNS].
func IngressStatusDNS(rec *IngressDNSRecord, clusters []federation.Cluster, read func(cluster string) (corev1.LoadBalancerStatus, error)) ([]ClusterIngressDNS, error) {
	prev := map[string]corev1.LoadBalancerStatus{}
	for _, e := range rec.Status.DNS {
		prev[e.Cluster] = e.LoadBalancer
	}
	obs, err := observe(clusters, prev, "IngressDNSRecord "+rec.Namespace+"/"+rec.Name, "read Ingress", read)
	out := make([]ClusterIngressDNS, 0, len(obs))
	for _, o := range obs {
		out = append(out, ClusterIngressDNS{Cluster: o.cluster.Name, LoadBalancer: o.lb})
	}
	return out, err
}

// observed is one cluster's entry in a record's status.dns.
type observed struct {
	cluster *federation.Cluster
	lb      corev1.LoadBalancerStatus
}

// observe applies the rules of ServiceStatusDNS to clusters, given each cluster's previous
// load balancer; what names the record and op the read in errors.
func observe(clusters []federation.Cluster, prev map[string]corev1.LoadBalancerStatus, what, op string, read func(cluster string) (corev1.LoadBalancerStatus, error)) ([]observed, error) {
	sorted := make([]*federation.Cluster, 0, len(clusters))
	for i := range clusters {
		sorted = append(sorted, &clusters[i])
	}
	slices.SortFunc(sorted, func(a, b *federation.Cluster) int { return strings.Compare(a.Name, b.Name) })
	var out []observed
	var errs []error
	for _, cl := range sorted {
		old, had := prev[cl.Name]
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, federation.ConditionReady) {
			if had {
				out = append(out, observed{cluster: cl})
			}
			continue
		}
		lb, err := read(cl.Name)
		if err != nil {
			errs = append(errs, &federation.ClusterError{Cluster: cl.Name, Op: op, Err: err})
			lb = old
		}
		out = append(out, observed{cluster: cl, lb: lb})
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("dnsrecord: %s: %w", what, errors.Join(errs...))
	}
	return out, nil
}

// MemberLoadBalancer is the load balancer that a record's member object (a Service, or an
// Ingress, whose networking/v1 status.loadBalancer has the same ip, hostname and ports
// fields) contributes to DNS: its status.loadBalancer, decoded. Only what the federation
// propagated is published, so an object without the federation.ManagedByLabel label (one
// someone else created under the same name) counts as no object: it contributes an empty
// load balancer, as does a nil obj. A status.loadBalancer that does not decode is an error
// naming the object and the field.
//
// The DNS loop also requires, for a Service, a ready endpoint behind the load balancer
// (unless spec.allowServiceWithoutEndpoints); that takes the member's EndpointSlices, which
// this function does not see.
func MemberLoadBalancer(obj *unstructured.Unstructured) (corev1.LoadBalancerStatus, error) {
	var lb corev1.LoadBalancerStatus
	if obj == nil {
		return lb, nil
	}
	if _, managed := obj.GetLabels()[federation.ManagedByLabel]; !managed {
		return lb, nil
	}
	m, found, err := unstructured.NestedMap(obj.Object, "status", "loadBalancer")
	if err == nil && found {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &lb)
	}
	if err != nil {
		return corev1.LoadBalancerStatus{}, fmt.Errorf("%s %s/%s: status.loadBalancer: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return lb, nil
}
