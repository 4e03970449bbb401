package sync_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
)

// historyView is what the tests compare of a ControllerRevision: its name, number and owner.
type historyView struct {
	Name     string
	Revision int64
	Owners   string
	OwnerUID string
}

// historyOf lists every ControllerRevision on the host, oldest name first.
func (e *env) historyOf(t *testing.T) []historyView {
	t.Helper()
	var out []historyView
	for _, r := range e.host.Objects(revisionsGVR) {
		n, _, _ := unstructured.NestedInt64(r.Object, "revision")
		var owners []string
		for _, o := range r.GetOwnerReferences() {
			owners = append(owners, o.Kind+"/"+o.Name+"/"+string(o.UID))
		}
		out = append(out, historyView{Name: r.GetName(), Revision: n, Owners: strings.Join(owners, ","), OwnerUID: r.GetLabels()[fedsync.OwnerUIDLabel]})
	}
	return out
}

// TestRunRecreatesAHandDeletedCurrentRevision: the running Syncer watches the history; a
// ControllerRevision of the current spec deleted by hand is recreated at once, under its name
// and with its number (a revision number never moves for the same spec), and nothing is
// written to the members. It used to stay gone until the Syncer restarted: the pass trusted
// the revision it remembered for the generation and never looked at the history.
func TestRunRecreatesAHandDeletedCurrentRevision(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{})
	stop := e.running(t)
	defer func() { require.NoError(t, stop()) }()
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t,

		"propagated", func() bool {
			fed := e.fed(t)
			return propagated(fed).Status == "True" && fed.Status.ObservedGeneration == fed.Generation && len(e.historyOf(t)) == 1
		})

	want := e.historyOf(t)
	require.EqualValues(t, 1, want[0].Revision)
	memberWrites := 0
	for _, c := range members(e) {
		memberWrites += countWrites(c)
	}

	require.NoError(t, e.host.DriftDelete(revisionsGVR, key.Namespace, want[0].Name))
	fedtest.Eventually(t, "the current revision recreated", func() bool { return len(e.historyOf(t)) == 1 })
	require.Empty(t, cmp.Diff(want, e.historyOf(t)), "(-before +after)")
	fed := e.fed(t)
	require.Equal(t, "1", fed.Annotations[federation.RevisionAnnotation])
	require.EqualValues(t, 1, fed.Status.SyncedRevision)
	after := 0
	for _, c := range members(e) {
		after += countWrites(c)
	}
	require.Equal(t, memberWrites, after, "recreating the history writes nothing to the members")
}

// TestOrphanedHistoryIsReplaced: a federated object deleted orphaning its dependents (kubectl
// delete --cascade=orphan) leaves its ControllerRevisions behind with the garbage
// collector's work done: no ownerReferences, only fedkit's owner-uid label. Applying the same
// manifest again meets the leftover of the same name; it is recognised by its label (another
// uid, no owner) and replaced, and the new object propagates at revision 1. It used to fail
// every pass with "exists and is not this snapshot".
func TestOrphanedHistoryIsReplaced(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.converge(t, 3)
	old := e.historyOf(t)
	require.Len(t, old, 1)
	e.deleteFederated(t)
	for range 3 {
		if e.gone(t) {
			break
		}
		e.reconcile(t)
	}
	require.True(t, e.gone(t))
	// What the garbage collector does to the dependents of an owner deleted with
	// propagationPolicy Orphan.
	require.NoError(t, e.host.Drift(revisionsGVR, key.Namespace, old[0].Name, func(u *unstructured.Unstructured) {
		u.SetOwnerReferences(nil)
	}))

	e.apply(t, e.typ.FederatedGVR(), frontend)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	e.converge(t, 3)
	fed := e.fed(t)
	require.EqualValues(t, 1, fed.Status.SyncedRevision)
	require.Equal(t, "True", string(propagated(fed).Status))
	want := []historyView{{Name: old[0].Name, Revision: 1, Owners: e.typ.Federated.Kind + "/" + key.Name + "/" + string(fed.UID), OwnerUID: string(fed.UID)}}
	require.Empty(t, cmp.Diff(want, e.historyOf(t)), "(-want +got)")
	require.NotNil(t, e.member(t, "aws"))
}

// TestRevisionNamesOfTwoKindsDoNotCollide: a FederatedDeployment and a FederatedStatefulSet
// of the same name and the same spec in one namespace have the same snapshot; each gets
// its own ControllerRevision. The name used to hash the snapshot alone, so the second kind
// met the first's ControllerRevision and failed every pass.
func TestRevisionNamesOfTwoKindsDoNotCollide(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	sts := federation.StatefulSetType
	other, err := fedsync.New(e.host, e.fleet, sts, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.apply(t, sts.FederatedGVR(), strings.Replace(frontend, "kind: FederatedDeployment", "kind: "+sts.Federated.Kind, 1))

	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = other.Reconcile(ctx, key)
	require.NoError(t, err)

	hist := e.historyOf(t)
	require.Len(t, hist, 2)
	kinds := map[string]bool{}
	for _, h := range hist {
		require.EqualValues(t, 1, h.Revision, h.Name)
		require.True(t, strings.HasPrefix(h.Name, key.Name+"-"), h.Name)
		kinds[strings.SplitN(h.Owners, "/", 2)[0]] = true
	}
	require.Equal(t, map[string]bool{e.typ.Federated.Kind: true, sts.Federated.Kind: true}, kinds)
}
