package scheduler_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// BenchmarkReconcile measures one steady-state pass of the loop (read, place, divide, and no
// write because nothing changed) on a fake host holding C Ready Clusters in 10 regions, each
// reporting headroom, for one FederatedDeployment selecting all of them: without a preference
// (Duplicated) and with one (weights, rebalance off).
//
//	go test -run '^$' -bench Reconcile -benchmem ./scheduler
func BenchmarkReconcile(b *testing.B) {
	for _, withRSP := range []bool{false, true} {
		for _, c := range []int{10, 100, 1000} {
			name := fmt.Sprintf("rsp=%t/C=%d", withRSP, c)
			b.Run(name, func(b *testing.B) {
				host, key := benchHost(b, c, withRSP)
				s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{Clock: clocktesting.NewFakeClock(now)})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Reconcile(ctx, key); err != nil { // the first pass writes
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.Reconcile(ctx, key); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchHost seeds a host with c Clusters and one FederatedDeployment (and its preference).
func benchHost(b *testing.B, c int, withRSP bool) (*fake.Cluster, federation.Key) {
	b.Helper()
	host := fake.NewHost("host")
	key := federation.Key{Namespace: "default", Name: "bench"}
	var objs []*unstructured.Unstructured
	for i := range c {
		cl := federation.Cluster{
			TypeMeta:   metav1.TypeMeta{APIVersion: federation.ClusterGVR.GroupVersion().String(), Kind: "Cluster"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cluster-%05d", i), Labels: map[string]string{"env": "prod"}},
			Spec: federation.ClusterSpec{
				APIEndpoint: "https://example.invalid", Region: fmt.Sprintf("region-%d", i%10),
				Zones: []string{fmt.Sprintf("region-%d-a", i%10)}, Provider: []string{"aws", "gcp", "azure"}[i%3],
			},
			Status: federation.ClusterStatus{
				Conditions: []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.NewTime(now)}},
				Available:  corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"), "pods": resource.MustParse("500")},
			},
		}
		u, err := federation.ToUnstructured(&cl)
		if err != nil {
			b.Fatal(err)
		}
		objs = append(objs, u)
	}
	fed := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: bench, namespace: default}
spec:
  template:
    spec:
      replicas: 3
      template: {spec: {containers: [{name: app, image: "app:1", resources: {requests: {cpu: 250m, memory: 512Mi}}}]}}
  placement: {clusterSelector: {matchLabels: {env: prod}}}
`), &fed.Object); err != nil {
		b.Fatal(err)
	}
	objs = append(objs, fed)
	if withRSP {
		rsp := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: bench, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: %d, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}
`, 10*c)), &rsp.Object); err != nil {
			b.Fatal(err)
		}
		objs = append(objs, rsp)
	}
	if err := host.Seed(objs...); err != nil {
		b.Fatal(err)
	}
	return host, key
}
