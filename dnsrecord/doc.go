// Package dnsrecord publishes federated Services and Ingresses in DNS.
//
//	eps, err := dnsrecord.ServiceEndpoints(ctx, rec, net.DefaultResolver) // pure: the records
//
//	c, err := dnsrecord.New(host, clusters, dnsrecord.Options{})
//	res, err := c.Reconcile(ctx, federation.Key{Namespace: "shop", Name: "web"}) // or c.Run(ctx)
//
// Clients find the nearest cluster that can answer, and stop finding a cluster that failed.
// It is the multi-cluster DNS of KubeFed, as a library. Pure functions compute the records,
// a loop keeps them current, and external-dns programs them into a DNS provider.
//
// # The records
//
// A [ServiceDNSRecord] named like a federated Service (same namespace and name) asks for
// names under a [Domain]. Take the Service web in namespace shop, with domainRef fed and the
// Domain example.com. Every cluster contributes its Service's load-balancer addresses to:
//
//	web.shop.fed.svc.example.com                          global: every cluster
//	web.shop.fed.svc.us-east-1.example.com                region: the clusters of us-east-1
//	web.shop.fed.svc.us-east-1a.us-east-1.example.com     zone: the clusters of us-east-1a
//
// A name with addresses is an A record (and an AAAA record for IPv6). A name without is a
// CNAME to the level above. So a zone whose clusters lost their load balancers sends its
// clients to the rest of the region, and a region to the rest of the world. A client that
// asks for its own zone's name therefore gets the closest answer there is. One query still
// works when its zone is down.
//
// spec.dnsPrefix adds a short alias (www.example.com, a CNAME to the global name).
// spec.externalName replaces "web" in the names. An [IngressDNSRecord] publishes the hosts it
// lists that are under a [Domain]. They become A records of every Ready cluster's Ingress
// load balancers.
//
// [ServiceEndpoints] and [IngressEndpoints] compute these records from a record's status
// alone, plus a [Resolver] for load balancers that have a hostname, as AWS's do. They read
// no clock and no cluster, and equal inputs give equal, sorted outputs. Test a naming scheme
// against them, or call them from a dry run.
//
// # Rules
//
//   - Names are lower-cased before records merge: DNS names ignore case (RFC 4343).
//   - A recordTTL above 2147483647 ([MaxTTL]) is refused as InvalidRecord (RFC 2181).
//   - Only member objects labelled with Options.Identity count: another federation's are
//     not ours.
//   - Run reconciles every record only on Cluster changes it reads (readiness, region,
//     zones, API endpoint). A heartbeat that changes only available or capacity reconciles
//     nothing.
//   - Each member read, and each wait for a member cache, ends after Options.ReadTimeout. A
//     hung member keeps its last load balancer; the other clusters are published.
//   - An IngressDNSRecord publishes only hosts under a Domain of Options.DomainNamespace.
//     The others are refused with the condition HostNotInDomain naming them.
//   - A name two records of different namespaces would publish stays with the older one
//     (ties: namespace, then name). The other publishes the rest, with the condition
//     NameConflict naming the names and their owner; CNAMEs to a lost name go too. So
//     neither a dnsPrefix nor an Ingress host can take a name another namespace owns. A
//     record claims its names once a pass has written its status. Run decides again at once
//     when an owner lets a name go; a direct Reconcile lists the records to decide. With
//     Options.Namespace, only records of that namespace are seen.
//
// # The controller
//
// [Controller] is the loop around them. One [Controller.Reconcile] pass over a record:
//
//  1. reads from the host the record, the federated object of its name and the Domain. The
//     object is a FederatedService or FederatedIngress: only federated objects are
//     published.
//  2. reads the Clusters on the host, and from each Ready one the member Service (or
//     Ingress) that sync propagated. It reads through the ClusterSet's shared caches when it
//     offers them (federation.MemberCache), else the member's API server. For a Service, the
//     EndpointSlices tell whether a ready pod stands behind the load balancer.
//  3. writes status.domain and status.dns: per cluster its region, zones and load balancer.
//     A cluster that stops being Ready keeps its entry without a load balancer, so its names
//     fall back instead of pointing at a dead cluster. A member that cannot be read keeps
//     its last load balancer, and the pass is retried: a failed read is not a failover, the
//     cluster monitor decides readiness. A member object that this federation does not
//     manage (its federation.ManagedByLabel is not Options.Identity) does not count. These
//     rules are the pure [ServiceStatusDNS], [IngressStatusDNS] and [MemberLoadBalancer],
//     which a dry run calls too.
//  4. computes the records with ServiceEndpoints or IngressEndpoints. It writes them to the
//     DNSEndpoint service-<name> or ingress-<name> in the record's namespace, owned by the
//     record, only when they changed.
//
// Every write carries the resourceVersion it read, and nothing is written when nothing
// changed. The record's Ready condition says what happened: EndpointsWritten, or why not.
//
//   - ServiceNotFederated, IngressNotFederated, DomainNotFound: no records are published.
//   - InvalidRecord, ResolveFailed: the last records stay.
//   - DNSEndpointConflict: a DNSEndpoint of that name belongs to someone else and is left
//     alone.
//   - HostNotInDomain, NameConflict: some names are left out, the others are published.
//
// Bad input never stops the loop.
//
// A record that is deleted takes its DNSEndpoint with it. The owner reference lets a real
// cluster's garbage collector do it. The controller also deletes the DNSEndpoint itself on
// the pass after the deletion, so it needs no garbage collector (the fake fleet has none).
//
// [Controller.Run] watches the records, the DNSEndpoints, the federated objects, the Domains
// and the Clusters on the host, and calls Reconcile. Options.ResyncPeriod bounds how long a
// change in a member takes to show: a new load balancer, pods becoming ready. Options.Cache
// is the process's shared host cache (package hostcache); nil gives Run its own.
//
// # Running external-dns
//
// [DNSEndpoint] is external-dns's own type (externaldns.k8s.io/v1alpha1, with its schema). So
// external-dns reads what the controller writes with
//
//	external-dns --source=crd --crd-source-apiversion=externaldns.k8s.io/v1alpha1 \
//	    --crd-source-kind=DNSEndpoint --provider=<your provider> --domain-filter=example.com
//
// and keeps the provider's zone in step, with its TXT ownership records. Install
// [DNSEndpointCRD] only where external-dns's CRD is not installed yet; either serves both.
//
// # Installing
//
// [CRDs] returns the CRDs of ServiceDNSRecord, IngressDNSRecord, Domain and DNSEndpoint, the
// same as config/crd. The controller also needs federation's Cluster, FederatedService and
// FederatedIngress CRDs on the host. Domains live in Options.DomainNamespace
// ("fedkit-system" by default), where only administrators should write. A record can only
// publish names under a Domain someone allowed.
//
// # What it does not do
//
// It does not probe load balancers: a Ready cluster with ready endpoints is trusted. It does
// not weigh or geo-route records; the DNS provider's routing policies can, on top. It
// publishes nothing for a Service that is not of type LoadBalancer or has no address yet.
//
// # Options
//
// Every default of [Options] is a Default* constant. New refuses invalid Options with an
// error wrapping [ErrInvalidOptions] that names the field.
//
// +groupName=multiclusterdns.federation.k8s.io
// +versionName=v1alpha1
package dnsrecord
