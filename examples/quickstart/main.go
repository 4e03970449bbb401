// Command quickstart runs a whole federation in memory, on the real loops: a host and three
// member clusters from package fake, the cluster monitor, the scheduler, sync, the status
// collector and the DNS loop. It federates a Deployment with overrides and a
// ReplicaSchedulingPreference and a Service with DNS records, then shows drift corrected, an
// update and its rollback, a cluster cut off (not Ready: its data stale and not counted, its
// replicas kept while its taint is NoSchedule) and back, a staged rollout, a failed
// revision rolled back by itself, a drained cluster and an unhealthy workload failed over
// gracefully, the fleet autoscaled up under load and back down after the stabilization
// window, and deletion.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	corev1 "k8s.io/api/core/v1"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
	fedsync "github.com/fedkit/fedkit/sync"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// The objects a user writes, in the shapes of KubeFed's API.
const (
	namespaceYAML = `{apiVersion: v1, kind: Namespace, metadata: {name: production}}`

	frontendYAML = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    metadata: {labels: {app: frontend}}
    spec:
      replicas: 6
      selector: {matchLabels: {app: frontend}}
      template:
        metadata: {labels: {app: frontend}}
        spec:
          containers:
          - name: nginx
            image: nginx:1.21
            resources: {requests: {cpu: 250m, memory: 128Mi}}
  placement:
    # Not Azure, says the placement; but the ReplicaSchedulingPreference below sets the
    # placement aside (KubeFed's rule) unless it says intersectWithClusterSelector: true.
    clusterSelector:
      matchExpressions: [{key: federation.k8s.io/provider, operator: NotIn, values: [azure]}]
  overrides:
  - clusterName: cluster-gcp-eu-west
    clusterOverrides:
    - {op: replace, path: /spec/replicas, value: 4}
  - clusterSelector: {matchLabels: {topology.kubernetes.io/region: southeastasia}}
    images: [{registry: mirror.asia.example.com}]
`

	preferenceYAML = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  clusters:
    "*": {weight: 1}
    cluster-aws-us-east: {minReplicas: 2, maxReplicas: 6, weight: 2}
`

	serviceYAML = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedService
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    spec:
      type: LoadBalancer
      selector: {app: frontend}
      ports: [{name: http, port: 80}]
  placement: {clusterSelector: {}}
`

	dnsYAML = `
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: ServiceDNSRecord
metadata: {name: app-frontend, namespace: production}
spec: {domainRef: shop, recordTTL: 60, allowServiceWithoutEndpoints: true}
`
	domainYAML = `
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: Domain
metadata: {name: shop, namespace: fedkit-system}
domain: shop.example.com
`
	systemNamespaceYAML = `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`

	// brokenImage never becomes ready in the simulated members (fake.Workloads.FailingImages).
	brokenImage = "nginx:1.24-broken"
)

// rolloutSpec is the FederatedDeployment's spec.rollout: a canary cluster, which must run
// the new revision ready for 30s, within 90s, or the revision is rolled back; then every
// other cluster.
func rolloutSpec() map[string]any {
	return map[string]any{
		"autoRollback": true,
		"stages": []any{
			map[string]any{"name": "canary", "clusters": []any{"cluster-gcp-eu-west"}, "minReadySeconds": int64(30), "progressDeadlineSeconds": int64(90)},
			map[string]any{"name": "everywhere", "percentage": int64(100)},
		},
	}
}

func run(ctx context.Context, w io.Writer) error {
	f, err := newWorld(ctx)
	if err != nil {
		return err
	}
	p := printer{w: w, f: f}

	p.section("1. Clusters join the federation; the cluster monitor probes them")
	if err := f.fleet.Register(ctx, f.host); err != nil {
		return err
	}
	if err := f.round(); err != nil {
		return err
	}
	p.clusters()

	p.section("2. A FederatedDeployment (6 x nginx:1.21) and a ReplicaSchedulingPreference (9 replicas)")
	if err := f.apply(federation.NamespaceType.TargetGVR(), namespaceYAML); err != nil {
		return err
	}
	if err := f.apply(deployment.FederatedGVR(), frontendYAML); err != nil {
		return err
	}
	if err := f.apply(federation.ReplicaSchedulingPreferenceGVR, preferenceYAML); err != nil {
		return err
	}
	fed, err := f.federated()
	if err != nil {
		return err
	}
	d, err := placement.Evaluate(fed.Spec.Placement, f.fleet.Clusters())
	if err != nil {
		return err
	}
	p.line("placement: %s", d.Summary())

	p.section("3. One round of the loops: schedule, sync, members start")
	if err := f.round(); err != nil {
		return err
	}
	if err := p.schedule(); err != nil {
		return err
	}
	if err := p.explain(); err != nil {
		return err
	}
	p.line("(cluster-gcp-eu-west's override of /spec/replicas to 4 wins over its scheduled share;")
	p.line(" the preference placed replicas in Azure although the placement's selector leaves it out,")
	p.line(" as KubeFed does: set intersectWithClusterSelector: true in the preference to keep the selector)")
	p.members()
	if err := p.federatedStatus(); err != nil {
		return err
	}

	p.section("4. 30 seconds later the members are ready; the collector aggregates")
	if err := f.wait(30 * time.Second); err != nil {
		return err
	}
	p.members()
	if err := p.federatedStatus(); err != nil {
		return err
	}

	p.section("5. Someone scales the Deployment in cluster-gcp-eu-west by hand: sync puts it back")
	gcp, _ := f.fleet.Member("cluster-gcp-eu-west")
	if err := gcp.Drift(deployment.TargetGVR(), key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(20), "spec", "replicas")
	}); err != nil {
		return err
	}
	p.line("cluster-gcp-eu-west now asks for %d replicas", p.replicas("cluster-gcp-eu-west"))
	if err := f.round(); err != nil {
		return err
	}
	p.line("after one sync pass: %d replicas (the federation's override says 4)", p.replicas("cluster-gcp-eu-west"))

	p.section("6. A new image is revision 2; rolling back to revision 1 makes revision 3")
	if err := f.editTemplate(func(tmpl map[string]any) { setImage(tmpl, "nginx:1.22") }); err != nil {
		return err
	}
	if err := f.wait(40 * time.Second); err != nil {
		return err
	}
	p.members()
	if err := fedsync.Rollback(ctx, f.host, deployment, key, 1); err != nil {
		return err
	}
	if err := f.wait(40 * time.Second); err != nil {
		return err
	}
	p.members()

	p.section("7. A federated Service gets global, region and zone DNS names")
	if err := f.apply(service.FederatedGVR(), serviceYAML); err != nil {
		return err
	}
	if err := f.apply(federation.NamespaceType.TargetGVR(), systemNamespaceYAML); err != nil {
		return err
	}
	if err := f.apply(dnsrecord.DomainGVR, domainYAML); err != nil {
		return err
	}
	if err := f.apply(dnsrecord.ServiceDNSRecordGVR, dnsYAML); err != nil {
		return err
	}
	if err := f.wait(10 * time.Second); err != nil {
		return err
	}
	if err := p.dns(); err != nil {
		return err
	}

	p.section("8. cluster-azure-southeastasia is cut off from the control plane")
	if err := f.fleet.Partition("cluster-azure-southeastasia"); err != nil {
		return err
	}
	if err := f.wait(10 * time.Second); err != nil {
		return err
	}
	p.line("after one failed probe it is still Ready (one failure never flips a cluster):")
	p.clusters()
	if err := f.wait(30 * time.Second); err != nil {
		return err
	}
	p.line("after three failed probes it is not Ready: stale, left out of the sums, and in the first")
	p.line("failover stage, NoSchedule: no new placements, and its replicas stay where they are")
	p.line("(the schedule does not change) unless it is still not Ready at the eviction delay (5m)")
	p.clusters()
	p.failover("cluster-azure-southeastasia")
	if err := p.schedule(); err != nil {
		return err
	}
	if err := p.federatedStatus(); err != nil {
		return err
	}
	if err := p.dns(); err != nil {
		return err
	}

	p.section("9. It comes back")
	if err := f.fleet.Heal("cluster-azure-southeastasia"); err != nil {
		return err
	}
	if err := f.wait(60 * time.Second); err != nil {
		return err
	}
	p.clusters()
	if err := p.schedule(); err != nil {
		return err
	}
	p.members()
	if err := p.federatedStatus(); err != nil {
		return err
	}
	if err := p.dns(); err != nil {
		return err
	}

	p.section("10. A staged rollout: nginx:1.23 goes to a canary cluster first, then everywhere")
	if err := f.editSpec(func(spec map[string]any) { spec["rollout"] = rolloutSpec() }); err != nil {
		return err
	}
	if err := f.editTemplate(func(tmpl map[string]any) { setImage(tmpl, "nginx:1.23") }); err != nil {
		return err
	}
	for _, step := range []time.Duration{10 * time.Second, 60 * time.Second, 10 * time.Second, 70 * time.Second} {
		if err := f.wait(step); err != nil {
			return err
		}
		p.line("after %s more:", step)
		p.members()
		if err := p.rollout(); err != nil {
			return err
		}
	}

	p.section("11. An image that never starts fails in the canary and is rolled back by itself")
	if err := f.editTemplate(func(tmpl map[string]any) { setImage(tmpl, brokenImage) }); err != nil {
		return err
	}
	if err := f.wait(30 * time.Second); err != nil {
		return err
	}
	p.line("after 30s, only the canary runs it:")
	p.members()
	if err := p.rollout(); err != nil {
		return err
	}
	if err := f.wait(2 * time.Minute); err != nil {
		return err
	}
	p.line("after the stage's 90s progress deadline:")
	p.members()
	if err := p.rollout(); err != nil {
		return err
	}

	p.section("12. cluster-aws-us-east is drained with a NoExecute taint: its replicas move, gracefully")
	if err := f.taint("cluster-aws-us-east", corev1.Taint{Key: "drain", Value: "true", Effect: corev1.TaintEffectNoExecute}); err != nil {
		return err
	}
	if err := f.wait(10 * time.Second); err != nil {
		return err
	}
	p.line("at once: the other clusters get its replicas, and it keeps its copy meanwhile")
	if err := p.schedule(); err != nil {
		return err
	}
	if err := p.evictions(); err != nil {
		return err
	}
	p.members()
	waited := 10 * time.Second
	for ; p.replicas("cluster-aws-us-east") > 0 && waited < 10*time.Minute; waited += 10 * time.Second {
		if err := f.wait(10 * time.Second); err != nil {
			return err
		}
	}
	p.line("after %s, once the replacements are available (the members take 30s), the old copy goes:", waited)
	if err := p.schedule(); err != nil {
		return err
	}
	if err := p.evictions(); err != nil {
		return err
	}
	p.members()

	p.section("13. The image cannot start in cluster-gcp-eu-west alone: application failover moves its replicas")
	// The cluster stays Ready; only the workload is unhealthy there (its registry mirror is
	// down, say). spec.placement.failover.application moves the replicas once the workload has
	// been unhealthy for toleranceSeconds, with fresh data, by the same graceful path.
	if err := f.editSpec(func(spec map[string]any) {
		pl, _ := spec["placement"].(map[string]any)
		pl["failover"] = map[string]any{"application": map[string]any{"toleranceSeconds": int64(60), "backoffSeconds": int64(600)}}
	}); err != nil {
		return err
	}
	running, err := p.image("cluster-gcp-eu-west")
	if err != nil {
		return err
	}
	gcp.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 30 * time.Second, FailingImages: []string{running}})
	if err := f.wait(30 * time.Second); err != nil {
		return err
	}
	p.line("after 30s: unhealthy in cluster-gcp-eu-west, not yet for 60s; nothing moves")
	p.members()
	if err := p.unhealthy(); err != nil {
		return err
	}
	waited = 30 * time.Second
	for ; !p.evicting("cluster-gcp-eu-west") && waited < 5*time.Minute; waited += 10 * time.Second {
		if err := f.wait(10 * time.Second); err != nil {
			return err
		}
	}
	p.line("after %s: its replicas go to the others; it keeps its copy until they are available", waited)
	if err := p.schedule(); err != nil {
		return err
	}
	if err := p.evictions(); err != nil {
		return err
	}
	if err := p.avoided(); err != nil {
		return err
	}
	p.members()
	start := waited
	for ; p.evicting("cluster-gcp-eu-west") && waited < start+10*time.Minute; waited += 10 * time.Second {
		if err := f.wait(10 * time.Second); err != nil {
			return err
		}
	}
	p.line("after %s more, the replacements are available and the failing copy goes:", waited-start)
	if err := p.schedule(); err != nil {
		return err
	}
	if err := p.evictions(); err != nil {
		return err
	}
	p.members()

	p.section("14. Load rises: the autoscaler raises the fleet's total, and the scheduler divides it")
	// The members' pods use 90% of the 250m cpu each asks for; the preference's autoscale
	// block targets 60%, as an HPA's would.
	if err := f.autoscaleWith(map[string]any{"minReplicas": int64(3), "maxReplicas": int64(15),
		"metrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
			"target": map[string]any{"type": "Utilization", "averageUtilization": int64(60)}}}}}); err != nil {
		return err
	}
	if err := f.setLoad(225); err != nil {
		return err
	}
	if err := f.wait(10 * time.Second); err != nil {
		return err
	}
	if err := p.autoscaled(); err != nil {
		return err
	}
	if err := p.schedule(); err != nil {
		return err
	}
	if err := f.wait(40 * time.Second); err != nil {
		return err
	}
	p.line("40s later the new pods run, and the same load over more of them is near the target:")
	p.members()
	if err := p.autoscaled(); err != nil {
		return err
	}

	p.section("15. The load falls: the total holds for the 5-minute stabilization window, then comes down")
	before := p.total()
	f.setLoadTotal(0.2)
	waited = 0
	for ; p.total() == before && waited < 10*time.Minute; waited += 10 * time.Second {
		if err := f.wait(10 * time.Second); err != nil {
			return err
		}
	}
	p.line("after %s:", waited)
	if err := p.autoscaled(); err != nil {
		return err
	}
	if err := p.schedule(); err != nil {
		return err
	}

	p.section("16. Deleting the FederatedDeployment deletes its member objects, then the object")
	if err := f.host.Delete(ctx, deployment.FederatedGVR(), key.Namespace, key.Name, deleteOptions()); err != nil {
		return err
	}
	if err := f.round(); err != nil {
		return err
	}
	p.members()
	if _, err := f.federated(); apierrors.IsNotFound(err) {
		p.line("the FederatedDeployment is gone: sync removed its finalizer once every member was clean")
	} else {
		return fmt.Errorf("the FederatedDeployment should be gone: %v", err)
	}
	return nil
}
