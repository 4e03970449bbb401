package sync

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestRevisionObjectIsTheConvertedType: the ControllerRevision sync builds as a map is what the
// API machinery makes of the typed object (but for its null creationTimestamp).
func TestRevisionObjectIsTheConvertedType(t *testing.T) {
	s := &Syncer{typ: federation.DeploymentType}
	fed := &federation.FederatedObject{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web", UID: "u-1"}}
	data := []byte(`{"placement":{"clusters":[{"name":"a"}]},"template":{"spec":{"replicas":3,"ratio":0.5}}}`)
	got, err := s.revisionObject(fed, "prod", "web-abc", data, 4)
	require.NoError(t, err)

	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&appsv1.ControllerRevision{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-abc", Namespace: "prod",
			Labels: map[string]string{OwnerUIDLabel: "u-1"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: federation.DeploymentType.Federated.GroupVersion().String(),
				Kind:       federation.DeploymentType.Federated.Kind, Name: "web", UID: "u-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 4,
	})
	require.NoError(t, err)
	delete(want["metadata"].(map[string]any), "creationTimestamp")
	require.Empty(t, cmp.Diff(want, got), "(-converted +built)")
}

const legacyObject = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: production}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:1"}]}
  placement:
    clusters: [{name: a}]
`

// TestHistoryUnderLegacyNamesIsKept: history an earlier version recorded under the old
// names (a hash of the snapshot alone, without the kind) keeps its numbers. The current
// spec's entry is recorded again under its name (which status.rollout records as the stable
// revision's) with the same number, and the old one is deleted; a snapshot that comes back
// is renumbered as ever. Without the legacy lookup the spec of revision 3 would become
// revision 4 on upgrade.
func TestHistoryUnderLegacyNamesIsKept(t *testing.T) {
	for _, tc := range []struct {
		name       string
		legacy     int64 // the current snapshot's legacy entry
		annotation int64 // the object's revision annotation
		want       int64
	}{
		{name: "the current revision", legacy: 3, annotation: 3, want: 3},
		{name: "an old snapshot that came back", legacy: 1, annotation: 2, want: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			host := fake.NewHost("host")
			_, err := host.Create(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "production"}}})
			require.NoError(t, err)
			s, err := New(host, fake.NewFleet(), federation.DeploymentType, Options{})
			require.NoError(t, err)
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(legacyObject), &u.Object))
			u.SetAnnotations(map[string]string{federation.RevisionAnnotation: strconv.FormatInt(tc.annotation, 10)})
			u, err = host.Create(ctx, federation.DeploymentType.FederatedGVR(), u)
			require.NoError(t, err)
			fed, err := federation.FederatedObjectFromUnstructured(u)
			require.NoError(t, err)
			federation.DefaultFederatedObject(fed)

			data, err := plan.SnapshotOf(fed)
			require.NoError(t, err)
			legacy := plan.LegacyRevisionName(fed.Name, data)
			require.NotEqual(t, legacy, s.revisionNameOf(fed, data))
			m, err := s.revisionObject(fed, "production", legacy, data, tc.legacy)
			require.NoError(t, err)
			_, err = host.Create(ctx, controllerRevisionGVR, &unstructured.Unstructured{Object: m})
			require.NoError(t, err)

			rev, err := s.recordRevision(ctx, host, u, fed, 0)
			require.NoError(t, err)
			require.Equal(t, tc.want, rev)
			got := map[string]int64{}
			for _, r := range host.Objects(controllerRevisionGVR) {
				got[r.GetName()] = revisionOf(r)
			}
			require.Empty(t, cmp.Diff(map[string]int64{s.revisionNameOf(fed, data): tc.want}, got), "(-want +got)")
		})
	}
}
