package sync_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fedsync "github.com/fedkit/fedkit/sync"
)

// Metadata the template put on the members (finalizers, labels, annotations) goes from them
// when it goes from the template; what member controllers added stays.
func TestMetadataRemovedFromTheTemplateLeavesTheMembers(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedStringSlice(u.Object, []string{"example.com/protect"}, "spec", "template", "metadata", "finalizers")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "frontend", "tier": "web"}, "spec", "template", "metadata", "labels")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"example.com/owner": "team-a"}, "spec", "template", "metadata", "annotations")
	})
	e.reconcile(t)
	require.Equal(t, []string{"example.com/protect"}, e.member(t, "aws").GetFinalizers())
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		u.SetFinalizers(append(u.GetFinalizers(), "member.io/backup"))
	}))

	e.edit(t, func(u *unstructured.Unstructured) {
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "finalizers")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "annotations")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "frontend"}, "spec", "template", "metadata", "labels")
	})
	e.reconcile(t)
	for _, c := range clusterNames {
		m := e.member(t, c)
		var want []string
		if c == "aws" {
			want = []string{"member.io/backup"}
		}
		if diff := cmp.Diff(want, m.GetFinalizers()); diff != "" {
			t.Errorf("%s: finalizers (-want +got):\n%s", c, diff)
		}
		require.NotContains(t, m.GetLabels(), "tier", c)
		require.NotContains(t, m.GetAnnotations(), "example.com/owner", c)
	}
}
