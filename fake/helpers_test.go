package fake_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/fake"
)

// Resources used across the tests: a built-in workload with a status subresource, built-ins
// without one or without generation, a cluster-scoped resource, and a custom resource.
var (
	deployGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	serviceGVR   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	nodeGVR      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	widgetGVR    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

	daemonSetGVR     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	endpointSliceGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	priorityClassGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	leaseGVR         = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

func deployment(ns, name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"namespace": ns, "name": name, "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "nginx:1.27"},
				}},
			},
		},
	}}
}

func configMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"data":       data,
	}}
}

// typed returns an object of any kind with the given spec (none when spec is nil); ns "" is
// for cluster-scoped kinds.
func typed(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(ns)
	u.SetName(name)
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func daemonSet(ns, name string) *unstructured.Unstructured {
	d := deployment(ns, name, 1)
	d.SetKind("DaemonSet")
	unstructured.RemoveNestedField(d.Object, "spec", "replicas")
	return d
}

func endpointSlice(ns, name string) *unstructured.Unstructured {
	u := typed("discovery.k8s.io/v1", "EndpointSlice", ns, name, nil)
	u.Object["addressType"] = "IPv4"
	u.Object["endpoints"] = []any{map[string]any{"addresses": []any{"10.0.0.1"}}}
	return u
}

func priorityClass(name string, value int64) *unstructured.Unstructured {
	u := typed("scheduling.k8s.io/v1", "PriorityClass", "", name, nil)
	u.Object["value"] = value
	return u
}

func widget(ns, name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       map[string]any{"size": size},
	}}
}

func service(ns, name, typ string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"type":  typ,
			"ports": []any{map[string]any{"port": int64(80)}},
		},
	}}
}

func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": name},
	}}
}

// testCtx returns a context cancelled when the test ends.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// nextEvent receives one event or fails the test after a second.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch closed")
		return ev
	case <-time.After(time.Second):
		t.Fatal("no event within a second")
	}
	return watch.Event{}
}

// requireClosed checks that the watch's channel gets closed.
func requireClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	deadline := time.After(time.Second)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch not closed within a second")
		}
	}
}

// eventName returns "TYPE name@rv" for compact comparisons.
func eventName(ev watch.Event) string {
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return string(ev.Type)
	}
	return string(ev.Type) + " " + u.GetName() + "@" + u.GetResourceVersion()
}

func mustCreate(t *testing.T, c interface {
	Create(context.Context, schema.GroupVersionResource, *unstructured.Unstructured) (*unstructured.Unstructured, error)
}, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := c.Create(context.Background(), gvr, obj)
	require.NoError(t, err)
	return out
}

func nested(t *testing.T, u *unstructured.Unstructured, fields ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
	require.NoError(t, err)
	return v
}

var (
	noDeleteOptions = metav1.DeleteOptions{}
	schemaIngresses = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
)

// newCluster returns fake.NewCluster(name) with the namespaces prod and dev, where the tests
// put their objects, and the CRD of widgets, all seeded (no Action). Its resourceVersion is
// then baseRV.
func newCluster(t *testing.T, name string) *fake.Cluster {
	t.Helper()
	c := withNamespaces(t, fake.NewCluster(name))
	require.NoError(t, c.Seed(crd("example.com", "widgets", "Widget", true)))
	return c
}

// baseRV is the resourceVersion of a cluster from newCluster: the four initial namespaces,
// prod and dev, and the widgets CRD (created, then established).
const baseRV = 8

// withNamespaces creates the namespaces prod and dev in c and returns c.
func withNamespaces(t *testing.T, c *fake.Cluster) *fake.Cluster {
	t.Helper()
	require.NoError(t, c.Seed(namespace("prod"), namespace("dev")))
	return c
}

// rv returns the resourceVersion of the n-th write after newCluster, as a string.
func rv(n int) string { return strconv.Itoa(baseRV + n) }

// crdGVR addresses CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crd returns a CustomResourceDefinition serving group/v1 plural of kind, with a status
// subresource, namespaced or cluster-scoped.
func crd(group, plural, kind string, namespaced bool) *unstructured.Unstructured {
	scope := "Cluster"
	if namespaced {
		scope = "Namespaced"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": scope,
			"names": map[string]any{"plural": plural, "kind": kind},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				"subresources": map[string]any{"status": map[string]any{}},
			}},
		},
	}}
}

// newHost is newCluster for fake.NewHost: it also serves fedkit's API.
func newHost(t *testing.T, name string) *fake.Cluster {
	t.Helper()
	c := withNamespaces(t, fake.NewHost(name))
	require.NoError(t, c.Seed(crd("example.com", "widgets", "Widget", true)))
	return c
}

// labelled sets the labels of u and returns it.
func labelled(u *unstructured.Unstructured, labels map[string]string) *unstructured.Unstructured {
	u.SetLabels(labels)
	return u
}

// nestedOrNil returns the field, or nil when it is absent.
func nestedOrNil(u *unstructured.Unstructured, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	return v
}
