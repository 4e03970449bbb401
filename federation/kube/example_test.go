package kube_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Options.Dynamic turns any dynamic.Interface into a federation.ClusterClient; here
// client-go's dynamic fake, so the example runs without an API server.
func ExampleNew_dynamic() {
	ctx := context.Background()
	c, err := kube.New(nil, kube.Options{Dynamic: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())})
	if err != nil {
		fmt.Println(err)
		return
	}

	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("default")
	cm.SetName("settings")
	_ = unstructured.SetNestedField(cm.Object, "blue", "data", "color")
	if _, err := c.Create(ctx, configMaps, cm); err != nil {
		fmt.Println(err)
		return
	}
	got, err := c.Get(ctx, configMaps, "default", "settings")
	if err != nil {
		fmt.Println(err)
		return
	}
	color, _, _ := unstructured.NestedString(got.Object, "data", "color")
	fmt.Println("color:", color)

	_, err = c.Get(ctx, configMaps, "default", "missing")
	fmt.Println("not found:", apierrors.IsNotFound(err))
	fmt.Println(err)
	fmt.Println("health:", errors.Is(c.Healthy(ctx), errors.ErrUnsupported))
	// Output:
	// color: blue
	// not found: true
	// kube: get configmaps default/missing: configmaps "missing" not found
	// health: true
}

// A ClusterSet reads Cluster objects and their Secrets from the host. Here the host is
// client-go's dynamic fake; Reconcile builds the member's client without contacting it.
func ExampleNewClusterSet() {
	ctx := context.Background()
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1",
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": "eu"},
		"spec": map[string]any{
			"apiEndpoint": "https://eu.example.com:6443",
			"secretRef":   map[string]any{"name": "eu-credentials"},
		},
	}}
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{"name": "eu-credentials", "namespace": "fedkit-system",
			// The one Cluster that may use these credentials.
			"labels": map[string]any{federation.SecretClusterLabel: "eu"}},
		"data": map[string]any{"token": "c2VjcmV0LXRva2Vu"}, // base64("secret-token")
	}}
	host, err := kube.New(nil, kube.Options{Dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{federation.ClusterGVR: "ClusterList", federation.SecretGVR: "SecretList"},
		cluster, secret)})
	if err != nil {
		fmt.Println(err)
		return
	}

	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := set.Reconcile(ctx, federation.Key{Name: "eu"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Names())
	if _, err := set.Client("eu"); err == nil {
		fmt.Println("eu has a client")
	}
	_, err = set.Client("us")
	fmt.Println(errors.Is(err, federation.ErrClusterNotFound), err)
	// Output:
	// [eu]
	// eu has a client
	// true kube: cluster "us": federation: cluster not found
}

// Embedders that know their clusters up front build a static set from kubeconfig contexts.
// Members are named after their contexts and are not contacted until used.
func ExampleClusterSetFromKubeconfig() {
	dir, err := os.MkdirTemp("", "kubeconfig")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: eu
  cluster: {server: "https://eu.example.com:6443"}
- name: us
  cluster: {server: "https://us.example.com:6443"}
users:
- name: admin
  user: {token: not-a-real-token}
contexts:
- name: eu-admin
  context: {cluster: eu, user: admin}
- name: us-admin
  context: {cluster: us, user: admin}
- name: staging
  context: {cluster: eu, user: admin}
current-context: eu-admin
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		fmt.Println(err)
		return
	}

	// Two of the three contexts; with none named, every context becomes a member.
	set, err := kube.ClusterSetFromKubeconfig(path, kube.ClusterSetOptions{}, "eu-admin", "us-admin")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Names())
	eu, err := set.Client("eu-admin")
	fmt.Println(eu != nil, err)

	// The set is a federation.ClusterSet, ready for the loops:
	var clusters federation.ClusterSet = set
	_, err = clusters.Client("staging")
	fmt.Println(err)
	// Output:
	// [eu-admin us-admin]
	// true <nil>
	// kube: cluster "staging": federation: cluster not found
}
