// Command quickstart runs a small federation entirely in memory: a host and three member
// clusters from package fake, a FederatedDeployment with overrides, a
// ReplicaSchedulingPreference, the Scheduler loop, the override renderer, and simulated
// workload controllers that make the member Deployments ready. It prints each step.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/scheduler"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// The federated object and its scheduling preference, as a user would write them (the
// shapes of KubeFed's API).
const frontendYAML = `
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
    clusterSelector: {}
  overrides:
  - clusterName: cluster-gcp-eu-west
    clusterOverrides:
    - {op: replace, path: /spec/replicas, value: 4}
  - clusterSelector: {matchLabels: {topology.kubernetes.io/region: southeastasia}}
    images: [{registry: mirror.asia.example.com}]
`

const namespaceYAML = `{apiVersion: v1, kind: Namespace, metadata: {name: production}}`

const preferenceYAML = `
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

func run(ctx context.Context, w io.Writer) error {
	typ := federation.DeploymentType
	key := federation.Key{Namespace: "production", Name: "app-frontend"}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))

	// 1. A host, where federated objects live (it serves fedkit's CRDs), and a fleet of three
	// member clusters.
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.SetClock(clk)
	fleet.Add("cluster-aws-us-east", topology("aws", "us-east-1", "us-east-1a"))
	fleet.Add("cluster-gcp-eu-west", topology("gcp", "europe-west1", "europe-west1-b"))
	fleet.Add("cluster-azure-southeastasia", topology("azure", "southeastasia", "southeastasia-1"))
	fleet.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 30 * time.Second})

	// 2. Register the members as Cluster objects on the host.
	fmt.Fprintln(w, "== Clusters registered on the host")
	if err := fleet.Register(ctx, host); err != nil {
		return err
	}
	for _, c := range fleet.Clusters() {
		fmt.Fprintf(w, "  %-28s provider=%-5s region=%-13s zones=%s\n", c.Name, c.Spec.Provider, c.Spec.Region, strings.Join(c.Spec.Zones, ","))
	}

	// 3. The FederatedDeployment and its ReplicaSchedulingPreference, in their namespace.
	if err := create(ctx, host, federation.NamespaceType.TargetGVR(), namespaceYAML); err != nil {
		return err
	}
	if err := create(ctx, host, typ.FederatedGVR(), frontendYAML); err != nil {
		return err
	}
	if err := create(ctx, host, federation.ReplicaSchedulingPreferenceGVR, preferenceYAML); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Created FederatedDeployment %s (6 replicas of nginx:1.21) and its ReplicaSchedulingPreference (9 replicas)\n", key)

	// 4. Where may it go? placement is a pure function; the Scheduler loop uses it too.
	fed, err := getFederated(ctx, host, typ, key)
	if err != nil {
		return err
	}
	decision, err := placement.Evaluate(fed.Spec.Placement, fleet.Clusters())
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== Placement")
	fmt.Fprintln(w, " ", decision.Summary())

	// 5. The Scheduler loop divides the replicas and writes status.schedule. Embedders call
	// Run(ctx); one Reconcile pass is enough here.
	sched, err := scheduler.New(host, typ, scheduler.Options{Clock: clk})
	if err != nil {
		return err
	}
	if _, err := sched.Reconcile(ctx, key); err != nil {
		return err
	}
	if fed, err = getFederated(ctx, host, typ, key); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== Schedule (status.schedule, written by the Scheduler loop)")
	for _, c := range fed.Status.Schedule.Clusters {
		fmt.Fprintf(w, "  %-28s %d replicas\n", c.Name, c.Replicas)
	}
	for _, c := range fed.Status.Conditions {
		fmt.Fprintf(w, "  condition %s=%s (%s): %s\n", c.Type, c.Status, c.Reason, c.Message)
	}

	// Explain computes the same decision without writing, with the reasons per cluster.
	why, err := sched.Explain(ctx, key)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== Why (Scheduler.Explain)")
	for _, c := range why.Schedule.Clusters {
		fmt.Fprintf(w, "  %s\n", why.Plan.Explain(c.Name))
	}

	// 6. Render each member's Deployment (template + schedule + overrides) and push it. This
	// is the push loop's job (package sync); here the rendered objects are created directly.
	fmt.Fprintln(w, "\n== Member Deployments (rendered by package override, the gcp override wins over the schedule)")
	for _, sc := range fed.Status.Schedule.Clusters {
		if err := push(ctx, w, fleet, fed, typ, sc); err != nil {
			return err
		}
	}

	// 7. The members' simulated controllers bring the Deployments up after 30s.
	clk.Step(time.Second)
	fleet.Tick()
	clk.Step(30 * time.Second)
	fleet.Tick()
	fmt.Fprintln(w, "\n== Member status after 30s")
	var ready, desired int64
	for _, sc := range fed.Status.Schedule.Clusters {
		member, _ := fleet.Member(sc.Name)
		d, err := member.Get(ctx, typ.TargetGVR(), key.Namespace, key.Name)
		if err != nil {
			return err
		}
		r, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		ready, desired = ready+r, desired+n
		fmt.Fprintf(w, "  %-28s %d/%d ready\n", sc.Name, r, n)
	}
	fmt.Fprintf(w, "  total: %d/%d ready in %d clusters\n", ready, desired, len(fed.Status.Schedule.Clusters))
	return nil
}

func topology(provider, region, zone string) map[string]string {
	return map[string]string{
		federation.ProviderLabel: provider,
		federation.RegionLabel:   region,
		federation.ZoneLabel:     zone,
	}
}

func create(ctx context.Context, host *fake.Cluster, gvr schema.GroupVersionResource, doc string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return err
	}
	_, err := host.Create(ctx, gvr, u)
	return err
}

func getFederated(ctx context.Context, host *fake.Cluster, typ federation.TypeConfig, key federation.Key) (*federation.FederatedObject, error) {
	u, err := host.Get(ctx, typ.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return nil, err
	}
	return federation.FederatedObjectFromUnstructured(u)
}

// push renders the member Deployment for one cluster and creates it there.
func push(ctx context.Context, w io.Writer, fleet *fake.Fleet, fed *federation.FederatedObject, typ federation.TypeConfig, sc federation.ScheduledCluster) error {
	member, ok := fleet.Member(sc.Name)
	if !ok {
		return fmt.Errorf("no member %s", sc.Name)
	}
	var labels map[string]string
	for _, c := range fleet.Clusters() {
		if c.Name == sc.Name {
			labels = c.Labels
		}
	}
	in := override.InputFor(fed, typ)
	in.ClusterName, in.ClusterLabels = sc.Name, labels
	replicas := sc.Replicas
	in.Replicas = &replicas
	obj, err := override.Render(in)
	if err != nil {
		return err
	}
	// The push loop federates the namespace first; here it is created directly.
	if err := create(ctx, member, federation.NamespaceType.TargetGVR(), namespaceYAML); err != nil {
		return fmt.Errorf("create the namespace in %s: %w", sc.Name, err)
	}
	if _, err := member.Create(ctx, typ.TargetGVR(), obj); err != nil {
		return fmt.Errorf("create in %s: %w", sc.Name, err)
	}
	n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	var images []string
	for _, c := range containers {
		if m, ok := c.(map[string]interface{}); ok {
			images = append(images, fmt.Sprint(m["image"]))
		}
	}
	sort.Strings(images)
	fmt.Fprintf(w, "  %-28s replicas=%d (scheduled %d) image=%s\n", sc.Name, n, sc.Replicas, strings.Join(images, ","))
	return nil
}
