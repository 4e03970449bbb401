package scheduler_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// The Scheduler loop on an in-memory host: one Reconcile pass writes status.schedule and the
// Scheduled condition; Explain says why, without writing.
func ExampleScheduler_Reconcile() {
	ctx := context.Background()
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1"})
	fleet.Add("us", map[string]string{federation.RegionLabel: "us-east-1"})
	if err := fleet.Register(ctx, host); err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range []struct {
		gvr schema.GroupVersionResource
		doc string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`},
		{federation.DeploymentType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment,
		  metadata: {name: web, namespace: shop}, spec: {template: {spec: {replicas: 3}}, placement: {clusterSelector: {}}}}`},
		{federation.ReplicaSchedulingPreferenceGVR, `{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference,
		  metadata: {name: web, namespace: shop},
		  spec: {targetKind: FederatedDeployment, totalReplicas: 10, clusters: {eu: {weight: 3}, us: {weight: 1, maxReplicas: 2}}}}`},
	} {
		u := &unstructured.Unstructured{}
		_ = yaml.Unmarshal([]byte(o.doc), &u.Object)
		if _, err := host.Create(ctx, o.gvr, u); err != nil {
			fmt.Println(err)
			return
		}
	}

	s, _ := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
	key := federation.Key{Namespace: "shop", Name: "web"}
	res, err := s.Reconcile(ctx, key)
	fmt.Println("requeue after", res.RequeueAfter, "error", err)

	u, _ := host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
	obj, _ := federation.FederatedObjectFromUnstructured(u)
	for _, c := range obj.Status.Schedule.Clusters {
		fmt.Printf("%s: %d\n", c.Name, c.Replicas)
	}
	fmt.Println(obj.Status.Conditions[0].Reason+":", obj.Status.Conditions[0].Message)

	why, _ := s.Explain(ctx, key)
	fmt.Println(why.Plan.Explain("us"))
	// Output:
	// requeue after 5m0s error <nil>
	// eu: 8
	// us: 2
	// Scheduled: 10/10 replicas on 2 of 2 clusters (Webster, Weighted); capped: us by maxReplicas 2
	// us: 2 = min 1 + kept 1 (weight 1), capped by maxReplicas 2
}
