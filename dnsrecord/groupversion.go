package dnsrecord

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// ExternalDNSGroup is external-dns's API group, where DNSEndpoint lives.
const ExternalDNSGroup = "externaldns.k8s.io"

// Group versions, resources and kinds of the DNS API. ServiceDNSRecord, IngressDNSRecord and
// Domain are in federation.DNSGroupVersion (multiclusterdns.federation.k8s.io/v1alpha1);
// DNSEndpoint is external-dns's, externaldns.k8s.io/v1alpha1. All are namespaced.
var (
	ExternalDNSGroupVersion = schema.GroupVersion{Group: ExternalDNSGroup, Version: "v1alpha1"}

	ServiceDNSRecordGVR = federation.DNSGroupVersion.WithResource("servicednsrecords")
	ServiceDNSRecordGVK = federation.DNSGroupVersion.WithKind("ServiceDNSRecord")
	IngressDNSRecordGVR = federation.DNSGroupVersion.WithResource("ingressdnsrecords")
	IngressDNSRecordGVK = federation.DNSGroupVersion.WithKind("IngressDNSRecord")
	DomainGVR           = federation.DNSGroupVersion.WithResource("domains")
	DomainGVK           = federation.DNSGroupVersion.WithKind("Domain")
	DNSEndpointGVR      = ExternalDNSGroupVersion.WithResource("dnsendpoints")
	DNSEndpointGVK      = ExternalDNSGroupVersion.WithKind("DNSEndpoint")
)

// AddToScheme registers ServiceDNSRecord, IngressDNSRecord and Domain (with their lists) in
// multiclusterdns.federation.k8s.io/v1alpha1 and DNSEndpoint in externaldns.k8s.io/v1alpha1.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(federation.DNSGroupVersion,
		&ServiceDNSRecord{}, &ServiceDNSRecordList{},
		&IngressDNSRecord{}, &IngressDNSRecordList{},
		&Domain{}, &DomainList{},
	)
	metav1.AddToGroupVersion(s, federation.DNSGroupVersion)
	s.AddKnownTypes(ExternalDNSGroupVersion, &DNSEndpoint{}, &DNSEndpointList{})
	metav1.AddToGroupVersion(s, ExternalDNSGroupVersion)
	return nil
}
