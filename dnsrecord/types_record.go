package dnsrecord

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceDNSRecord asks for DNS names for the federated Service of the same namespace and
// name: a global name, one per region and one per zone, pointing at the load balancers of the
// clusters that serve it, falling back to the next level up where a cluster has none. The DNS
// controller fills its status from the member Services and writes the records as the
// DNSEndpoint service-<name>, which external-dns programs into a DNS provider.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=federation
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.status.domain`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServiceDNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which domain the names live in and how they are built.
	// +kubebuilder:validation:Required
	Spec   ServiceDNSRecordSpec   `json:"spec,omitempty"`
	Status ServiceDNSRecordStatus `json:"status,omitempty"`
}

// ServiceDNSRecordList is a list of ServiceDNSRecords.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
type ServiceDNSRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceDNSRecord `json:"items"`
}

// ServiceDNSRecordSpec is what a ServiceDNSRecord asks for. The field names are KubeFed's, so
// KubeFed records carry over unchanged.
//
// +kubebuilder:object:generate=true
type ServiceDNSRecordSpec struct {
	// DomainRef names the Domain object (in the controller's domain namespace) whose domain
	// the names live in. It is also a label of every name: <name>.<namespace>.<domainRef>.svc.
	// +kubebuilder:validation:MinLength=1
	DomainRef string `json:"domainRef"`

	// RecordTTL is the TTL of every record, in seconds. 0 means 180; at most 2147483647
	// (RFC 2181).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	RecordTTL int64 `json:"recordTTL,omitempty"`

	// DNSPrefix, when set, adds the name <dnsPrefix>.<domain> as a CNAME to the global name:
	// a short, memorable alias.
	// +optional
	DNSPrefix string `json:"dnsPrefix,omitempty"`

	// ExternalName replaces the Service's name as the first label of every name; every
	// endpoint then carries the label serviceName=<the record's name>.
	// +optional
	ExternalName string `json:"externalName,omitempty"`

	// AllowServiceWithoutEndpoints lets a cluster's load balancer count even when its Service
	// has no ready endpoints. By default a load balancer in front of no ready pod is left
	// out, so the names fall back to clusters that can answer.
	// +optional
	AllowServiceWithoutEndpoints bool `json:"allowServiceWithoutEndpoints,omitempty"`
}

// ServiceDNSRecordStatus is written by the DNS controller.
//
// +kubebuilder:object:generate=true
type ServiceDNSRecordStatus struct {
	// Conditions: Ready, True when the DNSEndpoint holds the records of the current status.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Domain is the domain of the Domain named by spec.domainRef, when it exists.
	// +optional
	Domain string `json:"domain,omitempty"`

	// DNS has one entry per cluster, sorted by cluster name: its region, its zones, and the
	// load balancer of its Service when that counts (the cluster is Ready, the Service has a
	// load balancer and, unless allowServiceWithoutEndpoints, ready endpoints).
	// +optional
	// +listType=map
	// +listMapKey=cluster
	DNS []ClusterDNS `json:"dns,omitempty"`
}

// ClusterDNS is what one cluster contributes to a ServiceDNSRecord's names.
//
// +kubebuilder:object:generate=true
type ClusterDNS struct {
	// Cluster is the Cluster's name.
	Cluster string `json:"cluster"`

	// LoadBalancer is the member Service's load balancer, empty when it does not count: the
	// names of this cluster then fall back to the next level up (zone to region to global).
	// +optional
	LoadBalancer corev1.LoadBalancerStatus `json:"loadBalancer,omitempty"`

	// Zones are the cluster's zones; each gets a zone name.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Region is the cluster's region; it gets a region name. A cluster without one
	// contributes to the global name only.
	// +optional
	Region string `json:"region,omitempty"`
}

// IngressDNSRecord asks for DNS names for the federated Ingress of the same namespace and
// name: each of its hosts becomes an address record pointing at the Ingress's load balancers
// in every Ready cluster. The DNS controller writes them as the DNSEndpoint ingress-<name>.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=federation
// +kubebuilder:printcolumn:name="Hosts",type=string,JSONPath=`.spec.hosts`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IngressDNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the host names to publish.
	Spec   IngressDNSRecordSpec   `json:"spec,omitempty"`
	Status IngressDNSRecordStatus `json:"status,omitempty"`
}

// IngressDNSRecordList is a list of IngressDNSRecords.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
type IngressDNSRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IngressDNSRecord `json:"items"`
}

// IngressDNSRecordSpec is what an IngressDNSRecord asks for.
//
// +kubebuilder:object:generate=true
type IngressDNSRecordSpec struct {
	// Hosts are the fully qualified names to publish, usually the Ingress's rules' hosts. A
	// leading "*" label (a wildcard record) is allowed. Only hosts under a Domain of the
	// controller's domain namespace are published.
	// +optional
	Hosts []string `json:"hosts,omitempty"`

	// RecordTTL is the TTL of every record, in seconds. 0 means 180; at most 2147483647
	// (RFC 2181).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	RecordTTL int64 `json:"recordTTL,omitempty"`
}

// IngressDNSRecordStatus is written by the DNS controller.
//
// +kubebuilder:object:generate=true
type IngressDNSRecordStatus struct {
	// Conditions: Ready, True when the DNSEndpoint holds the records of the current status.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DNS has one entry per cluster, sorted by cluster name, with the member Ingress's load
	// balancer while the cluster is Ready.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	DNS []ClusterIngressDNS `json:"dns,omitempty"`
}

// ClusterIngressDNS is what one cluster contributes to an IngressDNSRecord's names.
//
// +kubebuilder:object:generate=true
type ClusterIngressDNS struct {
	// Cluster is the Cluster's name.
	Cluster string `json:"cluster"`

	// LoadBalancer is the member Ingress's load balancer (status.loadBalancer), empty while
	// the cluster is not Ready.
	// +optional
	LoadBalancer corev1.LoadBalancerStatus `json:"loadBalancer,omitempty"`
}

// Domain is the DNS zone the federation publishes names in, and the name server that is
// authoritative for it. ServiceDNSRecords name it in spec.domainRef; it lives in the
// DNS controller's domain namespace (fedkit-system by default), where only administrators
// create objects, so a tenant cannot publish names in a zone it was not given.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=federation
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.domain`
// +kubebuilder:printcolumn:name="Name Server",type=string,JSONPath=`.nameServer`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Domain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Domain is the DNS zone, e.g. example.com (a trailing dot is ignored).
	// +kubebuilder:validation:MinLength=1
	Domain string `json:"domain"`

	// NameServer is the zone's authoritative name server, for information: fedkit does not
	// talk to it (external-dns does, through its provider).
	// +optional
	NameServer string `json:"nameServer,omitempty"`
}

// DomainList is a list of Domains.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
type DomainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Domain `json:"items"`
}
