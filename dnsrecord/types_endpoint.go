package dnsrecord

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Record types fedkit writes.
const (
	// RecordTypeA is an IPv4 address record.
	RecordTypeA = "A"
	// RecordTypeAAAA is an IPv6 address record.
	RecordTypeAAAA = "AAAA"
	// RecordTypeCNAME is an alias to another name.
	RecordTypeCNAME = "CNAME"
)

// DNSEndpoint is external-dns's DNSEndpoint (externaldns.k8s.io/v1alpha1): a list of records
// that external-dns, run with --source=crd, programs into a DNS provider. The DNS controller
// writes one per record (service-<name>, ingress-<name>), owned by the record. The type and
// its CRD have external-dns's schema, so either project's CRD serves the other's objects.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=dnsendpoints
type DNSEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DNSEndpointSpec   `json:"spec,omitempty"`
	Status DNSEndpointStatus `json:"status,omitempty"`
}

// DNSEndpointList is a list of DNSEndpoints.
//
// +kubebuilder:object:generate=true
// +kubebuilder:object:root=true
type DNSEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DNSEndpoint `json:"items"`
}

// DNSEndpointSpec holds the records.
//
// +kubebuilder:object:generate=true
type DNSEndpointSpec struct {
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// DNSEndpointStatus is written by external-dns.
//
// +kubebuilder:object:generate=true
type DNSEndpointStatus struct {
	// The generation observed by the external-dns controller.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Endpoint is one DNS record: a name, its type, its targets and its TTL, with external-dns's
// JSON names (dnsName, targets, recordType, recordTTL, labels), so that external-dns decodes
// it as its own endpoint.Endpoint.
//
// +kubebuilder:object:generate=true
type Endpoint struct {
	// The hostname of the DNS record
	DNSName string `json:"dnsName,omitempty"`
	// The targets the DNS record points to
	Targets []string `json:"targets,omitempty"`
	// RecordType type of record, e.g. CNAME, A, AAAA, SRV, TXT etc
	RecordType string `json:"recordType,omitempty"`
	// Identifier to distinguish multiple records with the same name and type (e.g. Route53
	// records with routing policies other than 'simple'). fedkit never sets it; it is here so
	// the schema is external-dns's.
	SetIdentifier string `json:"setIdentifier,omitempty"`
	// TTL for the record
	RecordTTL int64 `json:"recordTTL,omitempty"`
	// Labels stores labels defined for the Endpoint
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// ProviderSpecific stores provider specific config. fedkit never sets it; it is here so
	// the schema is external-dns's.
	// +optional
	ProviderSpecific []ProviderSpecificProperty `json:"providerSpecific,omitempty"`
}

// ProviderSpecificProperty holds the name and value of a configuration which is specific to
// individual DNS providers.
//
// +kubebuilder:object:generate=true
type ProviderSpecificProperty struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}
