package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

const (
	demoNamespace = `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-demo}}`
	demoConfigMap = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: hello, namespace: fedkit-demo}
spec:
  template:
    data: {greeting: "hello from fedkit"}
  placement:
    clusterSelector: {}   # every Ready cluster
`
)

var configMaps = federation.ConfigMapType

// runDemo federates the ConfigMap fedkit-demo/hello to every Ready member, then prints a line
// each time its status changes, until ctx is done. A ConfigMap needs no controller to be
// ready, so the demo reaches Ready=True on any cluster, API-only test servers included.
func runDemo(ctx context.Context, host federation.ClusterClient, out io.Writer) error {
	if err := createIfMissing(ctx, host, federation.NamespaceType.TargetGVR(), demoNamespace); err != nil {
		return err
	}
	if err := createIfMissing(ctx, host, configMaps.FederatedGVR(), demoConfigMap); err != nil {
		return err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := ""
	for {
		u, err := host.Get(ctx, configMaps.FederatedGVR(), "fedkit-demo", "hello")
		if err == nil {
			if line := summary(u); line != last {
				fmt.Fprintln(out, line)
				last = line
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func createIfMissing(ctx context.Context, host federation.ClusterClient, gvr schema.GroupVersionResource, doc string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return err
	}
	_, err := host.Create(ctx, gvr, u)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// summary is one line: the object's conditions and the clusters its status lists.
func summary(u *unstructured.Unstructured) string {
	obj, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return "fedkit-demo/hello: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("fedkit-demo/hello:")
	for _, typ := range []string{"Scheduled", "Propagated", "Ready"} {
		status := "Unknown"
		for _, c := range obj.Status.Conditions {
			if c.Type == typ {
				status = string(c.Status)
			}
		}
		fmt.Fprintf(&b, " %s=%s", typ, status)
	}
	var clusters []string
	for _, c := range obj.Status.Clusters {
		clusters = append(clusters, c.Name)
	}
	fmt.Fprintf(&b, " clusters=%v", clusters)
	return b.String()
}
