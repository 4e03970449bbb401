package sync_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// migratedFrontend is frontend as package migrate writes it: marked as migrated from KubeFed.
var migratedFrontend = strings.Replace(frontend, "metadata: {name: app-frontend, namespace: production}",
	"metadata: {name: app-frontend, namespace: production, annotations: {"+federation.MigratedFromAnnotation+": "+federation.MigratedFromKubeFed+"}}", 1)

// TestMigratedObjectAdoptsKubeFedMembers: a federated object migrated from KubeFed takes over
// the member objects KubeFed made (labelled kubefed.io/managed: "true") in place: the same
// object (uid), updated to the render, labelled as fedkit's and no longer as KubeFed's, so
// nothing KubeFed still does finds it. Nothing broader: an unlabelled look-alike, one whose
// KubeFed label says "false", and KubeFed's objects under a federated object that was not
// migrated are all left alone (AlreadyExists).
func TestMigratedObjectAdoptsKubeFedMembers(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	seedUnmanaged(t, e, "aws", map[string]any{federation.KubeFedManagedLabel: "true", "owner": "team-a"})
	seedUnmanaged(t, e, "gcp", map[string]any{"owner": "team-a"})
	seedUnmanaged(t, e, "azure", map[string]any{federation.KubeFedManagedLabel: "false"})
	uid := e.member(t, "aws").GetUID()
	e.apply(t, e.typ.FederatedGVR(), migratedFrontend)
	e.reconcile(t)

	m := e.member(t, "aws")
	require.Equal(t, uid, m.GetUID(), "adopted in place, not deleted and created again")
	require.Equal(t, frontendImage, image(t, m))
	require.Equal(t, federation.ManagedByValue, m.GetLabels()[federation.ManagedByLabel])
	require.NotContains(t, m.GetLabels(), federation.KubeFedManagedLabel, "KubeFed's label goes: KubeFed finds its objects by it")
	require.Equal(t, "team-a", m.GetLabels()["owner"], "the member's own labels stay")
	require.Equal(t, "mine:1", image(t, e.member(t, "gcp")), "an unlabelled look-alike is not KubeFed's")
	require.Equal(t, "mine:1", image(t, e.member(t, "azure")), "kubefed.io/managed: false is not KubeFed's")
	p := propagation(e.fed(t))
	require.Equal(t, "@1", p["aws"])
	require.Equal(t, plan.ReasonAlreadyExists+"@0", p["gcp"])
	require.Equal(t, plan.ReasonAlreadyExists+"@0", p["azure"])

	// The next pass writes nothing more: adopted once, in sync since.
	e.clearActions()
	e.reconcile(t)
	require.Empty(t, e.memberWrites(t, "aws"))
}

// TestKubeFedMembersNeedAMigratedObject: KubeFed's label alone is no evidence: a federated
// object that was not migrated from KubeFed leaves KubeFed's member object alone.
func TestKubeFedMembersNeedAMigratedObject(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	seedUnmanaged(t, e, "aws", map[string]any{federation.KubeFedManagedLabel: "true"})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.Equal(t, "mine:1", image(t, e.member(t, "aws")))
	require.Equal(t, plan.ReasonAlreadyExists+"@0", propagation(e.fed(t))["aws"])
	e.edit(t, func(u *unstructured.Unstructured) {
		u.SetAnnotations(map[string]string{federation.MigratedFromAnnotation: "elsewhere"})
	})
	e.reconcile(t)
	require.Equal(t, "mine:1", image(t, e.member(t, "aws")), "migrated from another federation: not KubeFed's objects")
}
