package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// The orphan annotation orphans on deletion of the federated object only, as KubeFed's did: a
// cluster that leaves the placement has its member object deleted, annotation or not.
func TestOrphanAnnotationOrphansOnDeletionOnly(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[federation.OrphanAnnotation] = "true"
		u.SetAnnotations(a)
	})
	e.reconcile(t)
	require.NotNil(t, e.member(t, "azure"))

	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters")
	})
	e.reconcile(t)
	require.Nil(t, e.member(t, "azure"), "azure left the placement: its object is deleted, not orphaned")

	e.deleteFederated(t)
	e.reconcile(t)
	require.True(t, e.gone(t))
	for _, c := range []string{"aws", "gcp"} {
		m := e.member(t, c)
		require.NotNil(t, m, "%s: the deletion orphans", c)
		require.NotContains(t, m.GetLabels(), federation.ManagedByLabel, c)
	}
}
