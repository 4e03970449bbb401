package sync_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// messages returns status.clusters as cluster -> message.
func messages(obj *federation.FederatedObject) map[string]string {
	out := map[string]string{}
	for _, c := range obj.Status.Clusters {
		out[c.Name] = c.Message
	}
	return out
}

// TestMemberWarningsReachStatus: a template field the member's type does not have is dropped
// by the member's API server, which warns; the warning is in status.clusters[].message of
// every cluster written (the cluster is in sync: propagation stays empty) and in a Warning
// event. It stays while nothing is written there, and goes with the next write that has none.
// A member's own warning (any Warning header) gets there the same way.
func TestMemberWarningsReachStatus(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.cluster(t, "gcp").SetHooks(fake.Hooks{
		Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			federation.HandleWarning(ctx, "apps/v1 Deployment: policy example: replicas above 3 are discouraged")
			return next.Create(ctx, gvr, obj)
		},
	})
	e.apply(t, e.typ.FederatedGVR(), strings.Replace(frontend, `image: "nginx:1.21"`, `image: "nginx:1.21", imagePullPolicyy: Always`, 1))
	e.reconcile(t)

	const unknown = `unknown field "spec.template.spec.containers[0].imagePullPolicyy"`
	want := map[string]string{
		"aws":   `cluster "aws" warned: ` + unknown,
		"azure": `cluster "azure" warned: ` + unknown,
		"gcp":   `cluster "gcp" warned: apps/v1 Deployment: policy example: replicas above 3 are discouraged; ` + unknown,
	}
	if diff := cmp.Diff(want, messages(e.fed(t))); diff != "" {
		t.Fatalf("status.clusters[].message (-want +got):\n%s", diff)
	}
	require.Equal(t, map[string]string{"aws": "@1", "azure": "@1", "gcp": "@1"}, propagation(e.fed(t)), "in sync: the member runs the object")
	cond := propagated(e.fed(t))
	require.Equal(t, "True", string(cond.Status))
	require.Contains(t, cond.Message, "the members of aws, azure, gcp warned (status.clusters[].message)")
	var warned []string
	for _, ev := range e.events.list() {
		if strings.HasPrefix(ev, "Warning "+plan.EventMemberWarning+" ") {
			warned = append(warned, ev)
		}
	}
	require.Len(t, warned, 1, "one event per pass: %v", e.events.list())
	require.Contains(t, warned[0], `cluster "aws" warned: `+unknown)

	// A pass that writes nothing keeps what the last write was told.
	e.reconcile(t)
	if diff := cmp.Diff(want, messages(e.fed(t))); diff != "" {
		t.Fatalf("after a pass without writes (-want +got):\n%s", diff)
	}

	// The template is fixed: the next write has no warning, and the message goes.
	e.cluster(t, "gcp").SetHooks(fake.Hooks{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.Equal(t, map[string]string{"aws": "", "azure": "", "gcp": ""}, messages(e.fed(t)))
	require.NotContains(t, propagated(e.fed(t)).Message, "warned")
}
