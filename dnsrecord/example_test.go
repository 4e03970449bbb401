package dnsrecord_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/dnsrecord"
)

// ServiceEndpoints turns a record's status into DNS records: A records where a cluster has a
// load balancer, CNAMEs up a level where it has none.
func ExampleServiceEndpoints() {
	rec := &dnsrecord.ServiceDNSRecord{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       dnsrecord.ServiceDNSRecordSpec{DomainRef: "fed", DNSPrefix: "www", RecordTTL: 60},
		Status: dnsrecord.ServiceDNSRecordStatus{
			Domain: "example.com",
			DNS: []dnsrecord.ClusterDNS{
				{Cluster: "us-a", Region: "us-east-1", Zones: []string{"us-east-1a"},
					LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}}},
				{Cluster: "us-b", Region: "us-east-1", Zones: []string{"us-east-1b"}}, // no load balancer
				{Cluster: "eu", Region: "europe-west1", Zones: []string{"europe-west1-b"},
					LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.eu.example.net"}}}},
			},
		},
	}
	// A *net.Resolver in production; here a fixed answer for the hostname.
	resolver := hosts{"lb.eu.example.net": {"198.51.100.7"}}
	eps, err := dnsrecord.ServiceEndpoints(context.Background(), rec, resolver)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range eps {
		fmt.Printf("%-55s %-5s %3d %s\n", e.DNSName, e.RecordType, e.RecordTTL, strings.Join(e.Targets, ","))
	}
	// Output:
	// web.shop.fed.svc.europe-west1-b.europe-west1.example.com A      60 198.51.100.7
	// web.shop.fed.svc.europe-west1.example.com               A      60 198.51.100.7
	// web.shop.fed.svc.example.com                            A      60 192.0.2.10,198.51.100.7
	// web.shop.fed.svc.us-east-1.example.com                  A      60 192.0.2.10
	// web.shop.fed.svc.us-east-1a.us-east-1.example.com       A      60 192.0.2.10
	// web.shop.fed.svc.us-east-1b.us-east-1.example.com       CNAME  60 web.shop.fed.svc.us-east-1.example.com
	// www.example.com                                         CNAME  60 web.shop.fed.svc.example.com
}

// IngressEndpoints publishes each host of an IngressDNSRecord at every cluster's load balancer.
func ExampleIngressEndpoints() {
	rec := &dnsrecord.IngressDNSRecord{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       dnsrecord.IngressDNSRecordSpec{Hosts: []string{"shop.example.com"}},
		Status: dnsrecord.IngressDNSRecordStatus{DNS: []dnsrecord.ClusterIngressDNS{
			{Cluster: "us", LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}, {IP: "2001:db8::10"}}}},
			{Cluster: "eu", LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.20"}}}},
		}},
	}
	eps, err := dnsrecord.IngressEndpoints(context.Background(), rec, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range eps {
		fmt.Println(e.DNSName, e.RecordType, e.RecordTTL, strings.Join(e.Targets, ","))
	}
	// Output:
	// shop.example.com A 180 192.0.2.10,192.0.2.20
	// shop.example.com AAAA 180 2001:db8::10
}
