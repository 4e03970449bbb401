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
	return statusDNS(clusters, rec.Status.DNS, "ServiceDNSRecord "+rec.Namespace+"/"+rec.Name, "read Service", read,
		func(e ClusterDNS) (string, corev1.LoadBalancerStatus) { return e.Cluster, e.LoadBalancer },
		func(cl *federation.Cluster, lb corev1.LoadBalancerStatus) ClusterDNS {
			return ClusterDNS{Cluster: cl.Name, Region: cl.Region(), Zones: cl.Zones(), LoadBalancer: lb}
		})
}

// IngressStatusDNS returns the status.dns the DNS loop writes for rec: one entry per
// cluster with its member Ingress's load balancer, by the rules of [ServiceStatusDNS].
func IngressStatusDNS(rec *IngressDNSRecord, clusters []federation.Cluster, read func(cluster string) (corev1.LoadBalancerStatus, error)) ([]ClusterIngressDNS, error) {
	return statusDNS(clusters, rec.Status.DNS, "IngressDNSRecord "+rec.Namespace+"/"+rec.Name, "read Ingress", read,
		func(e ClusterIngressDNS) (string, corev1.LoadBalancerStatus) { return e.Cluster, e.LoadBalancer },
		func(cl *federation.Cluster, lb corev1.LoadBalancerStatus) ClusterIngressDNS {
			return ClusterIngressDNS{Cluster: cl.Name, LoadBalancer: lb}
		})
}

// statusDNS applies the rules of ServiceStatusDNS to clusters, for a record whose status.dns
// entries are E: prev is the current status.dns, of reads an entry's cluster and load
// balancer, and entry makes one. what names the record and op the read in errors.
func statusDNS[E any](clusters []federation.Cluster, prev []E, what, op string, read func(cluster string) (corev1.LoadBalancerStatus, error),
	of func(E) (string, corev1.LoadBalancerStatus), entry func(*federation.Cluster, corev1.LoadBalancerStatus) E) ([]E, error) {
	before := make(map[string]corev1.LoadBalancerStatus, len(prev))
	for _, e := range prev {
		name, lb := of(e)
		before[name] = lb
	}
	sorted := make([]*federation.Cluster, 0, len(clusters))
	for i := range clusters {
		sorted = append(sorted, &clusters[i])
	}
	slices.SortFunc(sorted, func(a, b *federation.Cluster) int { return strings.Compare(a.Name, b.Name) })
	out := make([]E, 0, len(sorted))
	var errs []error
	for _, cl := range sorted {
		old, had := before[cl.Name]
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, federation.ConditionReady) {
			if had {
				out = append(out, entry(cl, corev1.LoadBalancerStatus{}))
			}
			continue
		}
		lb, err := read(cl.Name)
		if err != nil {
			errs = append(errs, &federation.ClusterError{Cluster: cl.Name, Op: op, Err: err})
			lb = old
		}
		out = append(out, entry(cl, lb))
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
