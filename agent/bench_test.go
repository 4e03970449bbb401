package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// deployment is a rendered member Deployment of about the size sync writes.
func deployment(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"spec": map[string]any{"replicas": int64(3), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}}}}}}}
	u.SetNamespace("default")
	u.SetName(name)
	u.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue,
		federation.FederatedNameLabel: name, federation.FederatedNamespaceLabel: "default"})
	u.SetAnnotations(map[string]string{federation.RevisionAnnotation: "1", federation.DesiredHashAnnotation: "v1:0123456789abcdef0123456789abcdef"})
	return u
}

// BenchmarkPullCluster measures what a pull cluster costs the host, per member object: the
// writes (the Assignment, the agent's first report; its Lease is per pass, not per object)
// and the bytes the host stores (the Assignment with its report), and what one steady
// agent pass costs when nothing changed (ns/op: one pass over every Assignment).
func BenchmarkPullCluster(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			ctx := context.Background()
			u := newUnit(b)
			u.member.SetWorkloads(fake.Workloads{Apps: true})
			u.host.SetRecording(true)
			deployments := federation.DeploymentType.TargetGVR()
			for i := range n {
				if _, err := u.hub.Create(ctx, deployments, deployment(fmt.Sprintf("web-%d", i))); err != nil {
					b.Fatal(err)
				}
			}
			if err := u.agent.Reconcile(ctx); err != nil {
				b.Fatal(err)
			}
			writes := 0
			for _, a := range u.host.Actions() {
				switch a.Verb {
				case fake.VerbCreate, fake.VerbUpdate, fake.VerbUpdateStatus, fake.VerbPatch, fake.VerbDelete:
					writes++
				}
			}
			u.host.SetRecording(false)
			bytes := 0
			for _, a := range u.host.Objects(federation.AssignmentGVR) {
				data, err := json.Marshal(a.Object)
				if err != nil {
					b.Fatal(err)
				}
				bytes += len(data)
			}
			u.host.SetRecording(true)
			for b.Loop() {
				if err := u.agent.Reconcile(ctx); err != nil {
					b.Fatal(err)
				}
			}
			steady := 0
			for _, a := range u.host.Actions() {
				if a.Verb == fake.VerbUpdateStatus {
					steady++
				}
			}
			b.ReportMetric(float64(writes)/float64(n), "hostwrites/object")
			b.ReportMetric(float64(bytes)/float64(n), "hostbytes/object")
			b.ReportMetric(float64(steady)/float64(b.N), "reports/pass")
		})
	}
}
