package dnsrecord

import (
	"context"
	"fmt"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run keeps the records current until ctx is done. It watches, on the host:
//
//   - the ServiceDNSRecords and IngressDNSRecords (a change reconciles the record, and the
//     records of other namespaces that claim one of its names, so a name an older record
//     lets go is taken at once);
//   - the DNSEndpoints (a DNSEndpoint changed or deleted behind the controller's back is
//     written again, and one left by a deleted record is deleted);
//   - the FederatedServices and FederatedIngresses (federating or unfederating an object
//     publishes or withdraws its record);
//   - the Domains in Options.DomainNamespace (a change reconciles the ServiceDNSRecords that
//     name it and every IngressDNSRecord, whose hosts must be under a Domain);
//   - the Clusters (a change of what a pass reads, a Ready condition flipping, a region or
//     zone or the API endpoint changing, reconciles every record; the cluster monitor's
//     heartbeats, which rewrite available, capacity and the conditions' times, do not),
//
// and calls Reconcile for the keys with Options.Workers workers. Failures are retried with
// exponential backoff; terminal ones wait for a change. With a ClusterSet that offers member
// caches (federation.MemberCache), a change of a member Service or Ingress (a load balancer
// assigned or withdrawn) reconciles its record at once; endpoint readiness (EndpointSlices,
// which the federation does not manage) is seen on the next pass, at most
// Options.ResyncPeriod later.
//
// Run's passes read the host from the informer caches it keeps anyway, so a pass costs no
// host reads; members are read through the ClusterSet (its shared caches where it offers
// them). Every write goes to the host with the resourceVersion read, so a cache that lags
// costs a Conflict and a retry, never a lost update. The host must serve the CRDs of [CRDs]
// and of Cluster, FederatedService and FederatedIngress: Run returns an error naming the
// resource when a cache does not sync within Options.CacheSyncTimeout.
//
// Otherwise Run blocks until ctx is done and returns nil after every goroutine it started
// has exited. It has the func(context.Context) error shape, so a controller-runtime manager
// can run it as manager.RunnableFunc(c.Run).
func (c *Controller) Run(ctx context.Context) error {
	ns := c.opts.Namespace
	claims := newClaimIndex()
	c.setIndex(claims)
	defer c.setIndex(nil)
	// The loop's reader, set before Run adds the handlers that call the predicate: Clusters
	// decode once per resourceVersion for every loop of the Cache.
	var cached federation.Reader
	l, err := loop.New(c.host, c.sources(claims, &cached), loop.Options{
		Name:             "dnsrecord",
		Workers:          c.opts.Workers,
		Clock:            c.opts.Clock,
		Logger:           c.opts.Logger,
		CacheSyncTimeout: c.opts.CacheSyncTimeout,
		Shard:            c.opts.Shard,
		Registerer:       c.opts.Registerer,
		Cache:            c.opts.Cache,
	})
	if err == nil {
		for _, gvr := range []schema.GroupVersionResource{federation.ServiceType.TargetGVR(), federation.IngressType.TargetGVR()} {
			remove, _ := federation.WatchMemberChanges(c.clusters, gvr, func(_ string, obj *unstructured.Unstructured) {
				if ns == "" || obj.GetNamespace() == ns {
					l.Enqueue(federation.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()})
				}
			})
			defer remove()
		}
		cached = l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return c.reconcileFrom(ctx, cached, key)
		}))
	}
	if err != nil {
		return fmt.Errorf("dnsrecord: %w", err)
	}
	return nil
}

// endpointKeys maps a DNSEndpoint to the key of the records it may belong to, by its name:
// service-<name> and ingress-<name> (whoever owns it: one of another owner is a conflict the
// record's condition reports).
func endpointKeys(obj *unstructured.Unstructured) []federation.Key {
	for _, prefix := range []string{"service-", "ingress-"} {
		if name, ok := strings.CutPrefix(obj.GetName(), prefix); ok && name != "" {
			return []federation.Key{{Namespace: obj.GetNamespace(), Name: name}}
		}
	}
	return nil
}

// namesDomain reports whether the ServiceDNSRecord record names the Domain domain.
func namesDomain(record, domain *unstructured.Unstructured) bool {
	ref, _, _ := unstructured.NestedString(record.Object, "spec", "domainRef")
	return ref == domain.GetName()
}

// clusterChanged is the Changed predicate of Run's Cluster sources: whether an update changes
// what a pass reads of a Cluster, its Ready condition's status, region, zones, deletion and
// the spec fields that say where and how its API server is reached (a new endpoint is
// another member to read). The cluster monitor's heartbeats (lastHeartbeatTime, available,
// capacity, the version, conditions' times and messages) and taints change none of these, so
// they reconcile no record. A Cluster that does not decode counts as changed. Both versions
// decode through r (loop.DecodeCluster: once per resourceVersion for every loop of the
// Cache when r is a loop's reader; afresh when nil).
func clusterChanged(r federation.Reader, old, new *unstructured.Unstructured) bool {
	a, errA := loop.DecodeCluster(r, old)
	b, errB := loop.DecodeCluster(r, new)
	if errA != nil || errB != nil {
		return true
	}
	return !apiequality.Semantic.DeepEqual(dnsView(a), dnsView(b))
}

// clusterView is what a pass reads of a Cluster.
type clusterView struct {
	Ready, Deleting       bool
	Region                string
	Zones                 []string
	APIEndpoint, ProxyURL string
	CABundle              []byte
	SecretRef             *federation.LocalSecretReference
	Insecure              bool
}

func dnsView(c *federation.Cluster) clusterView {
	return clusterView{
		Ready:       meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady),
		Deleting:    c.DeletionTimestamp != nil,
		Region:      c.Region(),
		Zones:       c.Zones(),
		APIEndpoint: c.Spec.APIEndpoint, ProxyURL: c.Spec.ProxyURL, CABundle: c.Spec.CABundle,
		SecretRef: c.Spec.SecretRef, Insecure: c.Spec.InsecureSkipTLSVerify,
	}
}

// Watches returns the host resources Run watches: the DNS records, DNSEndpoints,
// FederatedServices and FederatedIngresses (in Options.Namespace), the Domains (in
// Options.DomainNamespace) and the Clusters.
func (c *Controller) Watches() []federation.Watch {
	var cached federation.Reader
	return loop.Watches(c.sources(newClaimIndex(), &cached))
}

// sources are what Run watches, and how a change maps to keys: claims is the index of the
// names the records claim, cached the loop's reader once Run has it.
func (c *Controller) sources(claims *claimIndex, cached *federation.Reader) []loop.Source {
	ns := c.opts.Namespace
	every := func(_, _ *unstructured.Unstructured) bool { return true }
	changed := func(old, new *unstructured.Unstructured) bool { return clusterChanged(*cached, old, new) }
	return []loop.Source{
		{GVR: ServiceDNSRecordGVR, Namespace: ns, Keys: claims.recordKeys(kindService), Deleted: claims.recordDeleted(kindService)},
		{GVR: IngressDNSRecordGVR, Namespace: ns, Keys: claims.recordKeys(kindIngress), Deleted: claims.recordDeleted(kindIngress)},
		{GVR: DNSEndpointGVR, Namespace: ns, Keys: endpointKeys},
		{GVR: federation.ServiceType.FederatedGVR(), Namespace: ns},
		{GVR: federation.IngressType.FederatedGVR(), Namespace: ns},
		{GVR: DomainGVR, Namespace: c.opts.DomainNamespace, Referrers: &loop.Referrers{GVR: ServiceDNSRecordGVR, RefersTo: namesDomain}},
		// Any Domain can allow or refuse any IngressDNSRecord's hosts.
		{GVR: DomainGVR, Namespace: c.opts.DomainNamespace, Referrers: &loop.Referrers{GVR: IngressDNSRecordGVR, RefersTo: every}},
		// Two sources of Clusters, one per record kind a Cluster change concerns; the loop's
		// reader serves Cluster reads from the first.
		{GVR: federation.ClusterGVR, Changed: changed, Referrers: &loop.Referrers{GVR: ServiceDNSRecordGVR, RefersTo: every},
			Deleted: func(u *unstructured.Unstructured) { c.metrics.members.ForgetCluster(u.GetName()) }},
		{GVR: federation.ClusterGVR, Changed: changed, Referrers: &loop.Referrers{GVR: IngressDNSRecordGVR, RefersTo: every}},
	}
}
