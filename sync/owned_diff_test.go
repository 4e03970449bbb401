package sync_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// unmanaged is a Deployment of the federated object's name that no federation (or another,
// when manager is set) created.
func unmanaged(manager string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "mine"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "mine"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "mine:1"}}},
			},
		},
	}}
	if manager != "" {
		u.SetLabels(map[string]string{federation.ManagedByLabel: manager})
	}
	return u
}

// TestOwnedDiff: the owned fields an update changes, with their values, sorted; member-owned
// fields are not differences.
func TestOwnedDiff(t *testing.T) {
	desired := unmanaged("fedkit")
	desired.SetAnnotations(map[string]string{federation.RevisionAnnotation: "3", "team": "web"})
	live := desired.DeepCopy()
	live.SetAnnotations(map[string]string{federation.RevisionAnnotation: "2", "team": "web", "deployment.kubernetes.io/revision": "4"})
	_ = unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas")
	_ = unstructured.SetNestedField(live.Object, "Recreate", "spec", "strategy", "type")
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"name": "c", "image": "mine:2"}}, "spec", "template", "spec", "containers")
	live.SetLabels(nil)
	live.SetCreationTimestamp(metav1.Now())

	var got []string
	for _, c := range fedsync.OwnedDiff(desired, live) {
		got = append(got, c.String())
	}
	want := []string{
		`/metadata/labels/` + strings.ReplaceAll(federation.ManagedByLabel, "/", "~1") + `: (absent) -> "fedkit"`,
		`/spec/replicas: 5 -> 1`,
		`/spec/template/spec/containers/0/image: "mine:2" -> "mine:1"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OwnedDiff (-want +got):\n%s", diff)
	}
	require.Empty(t, fedsync.OwnedDiff(desired, desired.DeepCopy()))
	require.True(t, slices.ContainsFunc(fedsync.OwnedDiff(desired, nil), func(c fedsync.FieldChange) bool {
		return c.Path == "/spec" && !c.InLive
	}), "a create: every top-level field is new")
}
