package override_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// Apply changes an object with RFC 6902 operations; when one fails, nothing is applied.
func ExampleApply() {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec":       map[string]any{"replicas": int64(3)},
	}}
	value := func(v any) *federation.RawValue { r, _ := federation.NewRawValue(v); return r }

	err := override.Apply(obj, []federation.OverrideOp{
		{Path: "/spec/replicas", Value: value(5)}, // op "" means replace
		{Op: "add", Path: override.Pointer("metadata", "labels", "example.com/tier"), Value: value("gold")},
	})
	fmt.Println(err, obj.Object["spec"], obj.GetLabels())

	err = override.Apply(obj, []federation.OverrideOp{
		{Path: "/spec/replicas", Value: value(9)},
		{Op: "remove", Path: "/spec/paused"},
	})
	fmt.Println(err)
	fmt.Println("replicas still", obj.Object["spec"].(map[string]any)["replicas"])

	err = override.Apply(obj, []federation.OverrideOp{{Path: "/metadata/name", Value: value("other")}})
	fmt.Println(err)
	// Output:
	// <nil> map[replicas:5] map[app:web example.com/tier:gold]
	// remove /spec/paused: override: path not found: no member "paused" to remove
	// replicas still 5
	// replace /metadata/name: override: path identifies the object and cannot be overridden
}

// Render produces the member object for one cluster: the template with the schedule, the
// cluster's overrides (a selector entry for the region, then the named entry) and fedkit's
// labels; with an existing member object, what the member owns is retained.
func ExampleRender() {
	var fed federation.FederatedObject
	_ = yaml.Unmarshal([]byte(`
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      replicas: 6
      template:
        spec:
          containers: [{name: app, image: "nginx:1.27"}]
  overrides:
  - clusterSelector: {matchLabels: {region: eu}}
    images: [{registry: mirror.eu.example.com}]
  - clusterName: eu-1
    clusterOverrides: [{op: add, path: /spec/template/spec/nodeSelector, value: {disk: ssd}}]
`), &fed)
	in := override.InputFor(&fed, federation.DeploymentType)
	in.ClusterName, in.ClusterLabels = "eu-1", map[string]string{"region": "eu"}
	replicas := int64(2)
	in.Replicas = &replicas
	in.Existing = &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"resourceVersion": "4711", "labels": map[string]any{"added-by-member": "yes"}},
	}}

	out, err := override.Render(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	annotations := out.GetAnnotations() // the hash is not shown: it is opaque
	delete(annotations, federation.DesiredHashAnnotation)
	out.SetAnnotations(annotations)
	b, _ := yaml.Marshal(out.Object)
	fmt.Print(string(b))
	// Output:
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   annotations:
	//     federation.k8s.io/managed-labels: app
	//   labels:
	//     added-by-member: "yes"
	//     app: web
	//     federation.k8s.io/federated-name: web
	//     federation.k8s.io/federated-namespace: shop
	//     federation.k8s.io/managed-by: fedkit
	//   name: web
	//   namespace: shop
	//   resourceVersion: "4711"
	// spec:
	//   replicas: 2
	//   template:
	//     spec:
	//       containers:
	//       - image: mirror.eu.example.com/library/nginx:1.27
	//         name: app
	//       nodeSelector:
	//         disk: ssd
}

// RenderMembers renders one federated object for all its clusters at once, as a sync loop
// does: each cluster gets its schedule and the override entries that select or name it.
// Image overrides rewrite parts of image references: a registry for the clusters of a
// region (Docker Hub's official images move under library/ on a mirror), a tag for one
// cluster (a new tag drops the digest).
func ExampleRenderer_RenderMembers() {
	var fed federation.FederatedObject
	_ = yaml.Unmarshal([]byte(`
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 6
      template:
        spec:
          initContainers: [{name: init, image: busybox}]
          containers: [{name: app, image: "nginx:1.27@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]
  overrides:
  - clusterSelector: {matchLabels: {region: eu}}
    images: [{registry: mirror.eu.example.com}]
  - clusterName: eu-2
    images: [{containerName: app, tag: 1.28-rc1}]
`), &fed)
	two, four := int64(2), int64(4)
	members := []override.Member{
		{Name: "eu-1", Labels: map[string]string{"region": "eu"}, Replicas: &two},
		{Name: "eu-2", Labels: map[string]string{"region": "eu"}, Replicas: &two},
		{Name: "us-1", Labels: map[string]string{"region": "us"}, Replicas: &four},
	}
	var r override.Renderer // the zero Renderer: default retention
	for i, res := range r.RenderMembers(override.InputFor(&fed, federation.DeploymentType), members) {
		if res.Err != nil {
			fmt.Println(res.Err)
			continue
		}
		replicas, _, _ := unstructured.NestedInt64(res.Object.Object, "spec", "replicas")
		pod, _, _ := unstructured.NestedMap(res.Object.Object, "spec", "template", "spec")
		fmt.Println(members[i].Name, replicas)
		for _, list := range []string{"initContainers", "containers"} {
			for _, c := range pod[list].([]any) {
				fmt.Println("  ", c.(map[string]any)["image"])
			}
		}
	}
	// Output:
	// eu-1 2
	//    mirror.eu.example.com/library/busybox
	//    mirror.eu.example.com/library/nginx:1.27@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	// eu-2 2
	//    mirror.eu.example.com/library/busybox
	//    mirror.eu.example.com/library/nginx:1.28-rc1
	// us-1 4
	//    busybox
	//    nginx:1.27@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
}
