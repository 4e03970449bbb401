package sync

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/fedkit/fedkit/federation"
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
