package propagation_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/propagation"
)

// BenchmarkPolicyMonitorReconcile is one pass of the policy monitor over a
// ClusterPropagationPolicy that selects 1000 Deployments, 500 of which another policy
// selects too: the cost of a policy's status, read live from a fake host.
func BenchmarkPolicyMonitorReconcile(b *testing.B) {
	host := fake.NewHost("host")
	fedtest.Create(b, host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	for i := range 1000 {
		fedtest.Create(b, host, deployments, fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web-%d, namespace: shop, labels: {app: web, half: "%d"}},
  spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: x}]}}}}`, i, i%2))
	}
	fedtest.Create(b, host, cpps, webPolicy)
	fedtest.Create(b, host, pps, `{apiVersion: core.federation.k8s.io/v1alpha1, kind: PropagationPolicy, metadata: {name: half, namespace: shop},
  spec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {half: "0"}}}]}}`)
	m, err := propagation.NewPolicyMonitor(host, []federation.TypeConfig{federation.DeploymentType}, propagation.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	key := federation.Key{Name: "web"}
	if _, err := m.Reconcile(ctx, key); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Reconcile(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPropagatorReconcile is the Propagator's pass over 200 Deployments a
// ClusterPropagationPolicy federates, once each, in the steady state (nothing to write): the
// cost of reading, deciding and finding nothing to do, read live from a fake host.
func BenchmarkPropagatorReconcile(b *testing.B) {
	host := fake.NewHost("host")
	fedtest.Create(b, host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	var keys []federation.Key
	for i := range 200 {
		fedtest.Create(b, host, deployments, fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web-%d, namespace: shop, labels: {app: web}},
  spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: x}]}}}}`, i))
		keys = append(keys, federation.Key{Namespace: "shop", Name: fmt.Sprintf("web-%d", i)})
	}
	fedtest.Create(b, host, cpps, webPolicy)
	p, err := propagation.New(host, []federation.TypeConfig{federation.DeploymentType}, propagation.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, key := range keys {
		if _, err := p.Reconcile(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, key := range keys {
			if _, err := p.Reconcile(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
	}
}
