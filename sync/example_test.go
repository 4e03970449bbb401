package sync_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// Example pushes a FederatedDeployment to two member clusters, corrects a change made behind
// the federation's back, and rolls back an image update.
func Example() {
	ctx := context.Background()
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1"})
	fleet.Add("us", map[string]string{federation.RegionLabel: "us-east1"})
	must(fleet.Register(ctx, host))
	must(create(ctx, host, federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`))
	must(create(ctx, host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:1"}]}
  placement: {clusters: [{name: eu}, {name: us}]}
`))
	s, err := fedsync.New(host, fleet, federation.DeploymentType, fedsync.Options{})
	must(err)
	key := federation.Key{Namespace: "shop", Name: "web"}
	sync := func() {
		_, err := s.Reconcile(ctx, key)
		must(err)
	}
	show := func(when string) {
		for _, name := range fleet.Names() {
			c, _ := fleet.Member(name)
			obj, err := c.Peek(federation.DeploymentType.TargetGVR(), "shop", "web")
			must(err)
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			fmt.Printf("%s: %s runs %s (revision %s)\n", when, name,
				containers[0].(map[string]any)["image"], obj.GetAnnotations()[federation.RevisionAnnotation])
		}
	}

	sync()
	show("created")

	// Someone edits the member in us directly: the next pass puts the federation's image back.
	us, _ := fleet.Member("us")
	must(us.Drift(federation.DeploymentType.TargetGVR(), "shop", "web", func(u *unstructured.Unstructured) {
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "hotfix:0"
		_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
	}))
	sync()
	show("drift corrected")

	// A new image is revision 2; rolling back to revision 1 makes revision 3.
	must(host.Drift(federation.DeploymentType.FederatedGVR(), "shop", "web", func(u *unstructured.Unstructured) {
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "web:2"
		_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "template", "spec", "containers")
	}))
	sync()
	show("updated")
	must(fedsync.Rollback(ctx, host, federation.DeploymentType, key, 1))
	sync()
	show("rolled back")

	// Output:
	// created: eu runs web:1 (revision 1)
	// created: us runs web:1 (revision 1)
	// drift corrected: eu runs web:1 (revision 1)
	// drift corrected: us runs web:1 (revision 1)
	// updated: eu runs web:2 (revision 2)
	// updated: us runs web:2 (revision 2)
	// rolled back: eu runs web:1 (revision 3)
	// rolled back: us runs web:1 (revision 3)
}

func create(ctx context.Context, c *fake.Cluster, gvr schema.GroupVersionResource, doc string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return err
	}
	_, err := c.Create(ctx, gvr, u)
	return err
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
