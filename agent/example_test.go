package agent_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// A pull cluster's member object goes through the host: what sync writes with the
// cluster's HubClient becomes an Assignment, the agent applies it in the member and reports
// back, and the HubClient reads the report.
func Example() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	host, member := fake.NewHost("host"), fake.NewCluster("edge")
	host.SetClock(clk)
	member.SetClock(clk)
	for _, obj := range agent.HostManifests("edge") { // the namespace, the agent's identity
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
		switch obj.GetKind() {
		case "ServiceAccount":
			gvr.Resource = "serviceaccounts"
		case "Role", "RoleBinding":
			gvr = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
			if obj.GetKind() == "RoleBinding" {
				gvr.Resource = "rolebindings"
			}
		}
		if _, err := host.Create(ctx, gvr, obj); err != nil {
			fmt.Println(err)
			return
		}
	}
	a, err := agent.New(host, member, agent.Options{Cluster: "edge", Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = a.Reconcile(ctx) // its first Lease

	// What sync does through the cluster's client.
	edge := agent.NewHubClient(host, "edge", clk)
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": "default",
			"labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}},
		"data": map[string]any{"greeting": "hello"}}}
	if _, err := edge.Create(ctx, configMaps, cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("assigned:", federation.AssignmentName(configMaps, "default", "web"), "in", federation.PullNamespace("edge"))

	// The agent's pass.
	if err := a.Reconcile(ctx); err != nil {
		fmt.Println(err)
		return
	}
	got, _ := member.Peek(configMaps, "default", "web")
	fmt.Println("in the member:", got.Object["data"])
	reported, _ := edge.Get(ctx, configMaps, "default", "web")
	fmt.Println("read back from the agent's report:", reported.Object["data"])
	// Output:
	// assigned: configmaps.core.default.web in fedkit-cluster-edge
	// in the member: map[greeting:hello]
	// read back from the agent's report: map[greeting:hello]
}
