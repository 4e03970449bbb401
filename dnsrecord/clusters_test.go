package dnsrecord_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

// cluster is a Cluster in region with one zone, Ready or not.
func cluster(name, region, zone string, ready bool) federation.Cluster {
	status := metav1.ConditionTrue
	if !ready {
		status = metav1.ConditionFalse
	}
	return federation.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       federation.ClusterSpec{Region: region, Zones: []string{zone}},
		Status:     federation.ClusterStatus{Conditions: []metav1.Condition{{Type: federation.ConditionReady, Status: status}}},
	}
}

// TestServiceStatusDNS: the rules of status.dns, case by case.
func TestServiceStatusDNS(t *testing.T) {
	errDown := errors.New("connection refused")
	tests := []struct {
		name     string
		prev     []dnsrecord.ClusterDNS
		clusters []federation.Cluster
		lbs      map[string]corev1.LoadBalancerStatus // what read returns; absent: errDown
		want     []dnsrecord.ClusterDNS
		wantErr  string
	}{{
		name:     "Ready clusters get their load balancers, in name order",
		clusters: []federation.Cluster{cluster("eu", "europe-west1", "europe-west1-b", true), cluster("east", "us-east-1", "us-east-1a", true)},
		lbs:      map[string]corev1.LoadBalancerStatus{"east": lb("198.18.1.1"), "eu": {}},
		want: []dnsrecord.ClusterDNS{
			{Cluster: "east", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("198.18.1.1")},
			{Cluster: "eu", Region: "europe-west1", Zones: []string{"europe-west1-b"}},
		},
	}, {
		name:     "a not-Ready cluster keeps its entry without a load balancer",
		prev:     []dnsrecord.ClusterDNS{{Cluster: "eu", Region: "europe-west1", LoadBalancer: lb("198.18.3.1")}},
		clusters: []federation.Cluster{cluster("eu", "europe-west1", "europe-west1-b", false)},
		want:     []dnsrecord.ClusterDNS{{Cluster: "eu", Region: "europe-west1", Zones: []string{"europe-west1-b"}}},
	}, {
		name:     "a not-Ready cluster without an entry gets none",
		clusters: []federation.Cluster{cluster("eu", "europe-west1", "europe-west1-b", false)},
		want:     []dnsrecord.ClusterDNS{},
	}, {
		name:     "a failed read keeps the previous load balancer",
		prev:     []dnsrecord.ClusterDNS{{Cluster: "eu", LoadBalancer: lb("198.18.3.1")}},
		clusters: []federation.Cluster{cluster("eu", "europe-west1", "europe-west1-b", true)},
		want:     []dnsrecord.ClusterDNS{{Cluster: "eu", Region: "europe-west1", Zones: []string{"europe-west1-b"}, LoadBalancer: lb("198.18.3.1")}},
		wantErr:  `dnsrecord: ServiceDNSRecord default/web: cluster "eu": read Service: connection refused`,
	}, {
		name:     "a cluster gone loses its entry",
		prev:     []dnsrecord.ClusterDNS{{Cluster: "gone", LoadBalancer: lb("198.18.9.1")}},
		clusters: nil,
		want:     []dnsrecord.ClusterDNS{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &dnsrecord.ServiceDNSRecord{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
			rec.Status.DNS = tt.prev
			got, err := dnsrecord.ServiceStatusDNS(rec, tt.clusters, func(cluster string) (corev1.LoadBalancerStatus, error) {
				l, ok := tt.lbs[cluster]
				if !ok {
					return corev1.LoadBalancerStatus{}, errDown
				}
				return l, nil
			})
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tt.wantErr)
				require.ErrorIs(t, err, errDown)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status.dns (-want +got):\n%s", diff)
			}

			ing := &dnsrecord.IngressDNSRecord{ObjectMeta: rec.ObjectMeta}
			for _, e := range tt.prev {
				ing.Status.DNS = append(ing.Status.DNS, dnsrecord.ClusterIngressDNS{Cluster: e.Cluster, LoadBalancer: e.LoadBalancer})
			}
			gotIng, _ := dnsrecord.IngressStatusDNS(ing, tt.clusters, func(cluster string) (corev1.LoadBalancerStatus, error) {
				l, ok := tt.lbs[cluster]
				if !ok {
					return corev1.LoadBalancerStatus{}, errDown
				}
				return l, nil
			})
			wantIng := []dnsrecord.ClusterIngressDNS{}
			for _, e := range tt.want {
				wantIng = append(wantIng, dnsrecord.ClusterIngressDNS{Cluster: e.Cluster, LoadBalancer: e.LoadBalancer})
			}
			if diff := cmp.Diff(wantIng, gotIng); diff != "" {
				t.Errorf("an IngressDNSRecord's status.dns, by the same rules (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMemberLoadBalancer: only a managed member object's load balancer counts.
func TestMemberLoadBalancer(t *testing.T) {
	svc := func(labels map[string]any, status any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "web", "namespace": "default", "labels": labels}}}
		if status != nil {
			u.Object["status"] = map[string]any{"loadBalancer": status}
		}
		return u
	}
	managed := map[string]any{federation.ManagedByLabel: "fedkit"}
	ingress := map[string]any{"ingress": []any{map[string]any{"ip": "198.18.1.1"}}}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    corev1.LoadBalancerStatus
		wantErr string
	}{
		{name: "no object", obj: nil},
		{name: "managed", obj: svc(managed, ingress), want: lb("198.18.1.1")},
		{name: "managed, no load balancer yet", obj: svc(managed, nil)},
		{name: "not managed", obj: svc(map[string]any{"app": "web"}, ingress)},
		{name: "does not decode", obj: svc(managed, map[string]any{"ingress": "198.18.1.1"}),
			wantErr: "Service default/web: status.loadBalancer: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dnsrecord.MemberLoadBalancer(tt.obj)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.want, got)
		})
	}
}
