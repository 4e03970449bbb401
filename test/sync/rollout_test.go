package sync_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

const staged = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: canary}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.21"}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
  rollout:
    stages:
    - {name: canary, clusters: [m1], minReadySeconds: 1}
`

// TestStagedRolloutOnRealServers: the basic staged flow on real API servers, with the
// Syncer running and a real Collector. The members run no workload controllers, so the test
// plays the Deployment controller: it writes each member Deployment's status by hand. A new
// image reaches m1 only; m2 gets it once m1 reports it ready (for minReadySeconds), and the
// rollout completes once m2 does. The API server accepts spec.rollout and status.rollout as
// sync writes them, and the Collector's ready and observedRevision.
func TestStagedRolloutOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	key := federation.Key{Namespace: "canary", Name: "web"}
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: canary}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), staged)
	collector, err := status.New(f.host, f.set, federation.DeploymentType, status.Options{})
	require.NoError(t, err)
	fedObj := func() *federation.FederatedObject {
		u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		return obj
	}
	member := func(m string) *unstructured.Unstructured {
		u, err := f.members[m].Get(ctx, deployments, key.Namespace, key.Name)
		if err != nil {
			return nil
		}
		return u
	}
	// rolledOut plays the Deployment controller in m: the current generation is rolled out.
	rolledOut := func(m string) {
		t.Helper()
		eventually(t, func() bool {
			u := member(m)
			if u == nil {
				return false
			}
			n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			u.Object["status"] = map[string]any{"observedGeneration": u.GetGeneration(), "replicas": n,
				"updatedReplicas": n, "readyReplicas": n, "availableReplicas": n}
			_, err := f.members[m].UpdateStatus(ctx, deployments, u)
			return err == nil
		}, m+": status written")
	}
	// observed runs the Collector until status.clusters[] says what cond wants.
	observed := func(what string, cond func(map[string]federation.MemberStatus) bool) {
		t.Helper()
		eventually(t, func() bool {
			_, err := collector.Reconcile(ctx, key)
			require.NoError(t, err)
			got := map[string]federation.MemberStatus{}
			for _, c := range fedObj().Status.Clusters {
				got[c.Name] = c
			}
			return cond(got)
		}, what)
	}
	readyAt := func(rev int64, names ...string) func(map[string]federation.MemberStatus) bool {
		return func(got map[string]federation.MemberStatus) bool {
			for _, n := range names {
				if e := got[n]; e.ObservedRevision != rev || e.Ready == nil || !*e.Ready {
					return false
				}
			}
			return true
		}
	}

	// Revision 1 goes everywhere at once: there is nothing to roll from.
	for _, m := range memberNames {
		eventually(t, func() bool { return member(m) != nil }, m+": created")
		rolledOut(m)
	}
	observed("revision 1 ready", readyAt(1, "m1", "m2"))
	eventually(t, func() bool {
		st := fedObj().Status.Rollout
		return st != nil && st.Phase == federation.RolloutComplete && st.Revision == 1
	}, "revision 1 complete")

	// Revision 2: the canary first.
	u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:1.22"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "template", "spec", "containers"))
	_, err = f.host.Update(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)
	eventually(t, func() bool { return image(member("m1")) == "nginx:1.22" }, "m1 runs revision 2")
	observed("m1 seen on revision 2, not ready", func(got map[string]federation.MemberStatus) bool {
		e := got["m1"]
		return e.ObservedRevision == 2 && e.Ready != nil && !*e.Ready
	})
	// The Syncer decides on that (its status says why it waits), and m2 keeps revision 1.
	eventually(t, func() bool {
		st := fedObj().Status.Rollout
		return st.Reason == fedsync.RolloutReasonWaitingForReady && strings.Contains(st.Message, "m1 (not ready)")
	}, "the Syncer saw m1 not ready")
	require.Equal(t, "nginx:1.21", image(member("m2")))
	st := fedObj().Status.Rollout
	require.Equal(t, int32(1), st.Stage, st.Message)
	require.Equal(t, []federation.RolloutRevisionClusters{{Revision: 2, Clusters: []string{"m1"}}, {Revision: 1, Clusters: []string{"m2"}}}, st.Clusters)

	// m1 rolls out: after minReadySeconds the final stage starts, and m2 gets revision 2.
	rolledOut("m1")
	observed("m1 ready on revision 2", readyAt(2, "m1"))
	eventually(t, func() bool { return image(member("m2")) == "nginx:1.22" }, "m2 runs revision 2")
	rolledOut("m2")
	observed("m2 ready on revision 2", readyAt(2, "m2"))
	eventually(t, func() bool {
		o := fedObj()
		return o.Status.Rollout.Phase == federation.RolloutComplete && o.Status.Rollout.Revision == 2 && o.Status.SyncedRevision == 2
	}, "revision 2 complete")
}
