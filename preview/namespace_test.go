package preview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/preview"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestRunKeepsANamespaceInUse: a FederatedNamespace that leaves a cluster where a Deployment
// the federation placed still lives keeps the namespace there (sync's NamespaceInUse), as
// the Syncer does; where nothing the federation placed is left, the namespace is deleted.
func TestRunKeepsANamespaceInUse(t *testing.T) {
	in, err := preview.Decode([]byte(fleet + `
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedNamespace
metadata: {name: shop, namespace: shop}
spec:
  placement: {clusters: [{name: us}]}
`))
	require.NoError(t, err)
	in.Now = now
	managed := func(doc string) *unstructured.Unstructured {
		u := fedtest.Decode(t, doc)
		u.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue})
		return u
	}
	namespace := `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`
	deployment := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop}}`
	in.Live = map[string][]*unstructured.Unstructured{
		"us": {managed(namespace)},                      // without the revision sync writes: an update
		"ap": {managed(namespace), managed(deployment)}, // the Deployment still runs there
		"sa": {managed(namespace)},
	}
	rep, err := preview.Run(in)
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range rep.Objects[0].Clusters {
		if c.Change != nil {
			got[c.Name] = c.Change.Action + "/" + c.Change.Reason
		}
	}
	want := map[string]string{"us": "Update/", "ap": "None/" + plan.ReasonNamespaceInUse, "sa": "Delete/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
}
