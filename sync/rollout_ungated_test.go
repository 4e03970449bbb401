package sync_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// layout lists each member's Deployment as cluster=image/replicas@revision, "-" where there
// is none: "a=web:v2/2@2 b=web:v1/2@1 ...".
func (e *fleetEnv) layout(t *testing.T) string {
	t.Helper()
	var out []string
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		u, err := m.Peek(deployments, webKey.Namespace, webKey.Name)
		if err != nil {
			out = append(out, n+"=-")
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s/%d@%s", n, image(t, u), replicas(u), u.GetAnnotations()[federation.RevisionAnnotation]))
	}
	return strings.Join(out, " ")
}

// TestRolloutScheduleChangesNotGated: while a staged rollout is held at its canary (paused),
// changes that are not a new revision go everywhere at once: new replica counts reach the
// clusters still on the previous revision, and a cluster that joins gets the object at
// once, rendered from the revision its stage runs (the previous one). Neither moves the
// rollout past its gate; resuming it completes it on every cluster, the new one included.
func TestRolloutScheduleChangesNotGated(t *testing.T) {
	e := newFleetEnv(t, threeStages)
	require.Equal(t, "a=web:v1/2@1 b=web:v1/2@1 c=web:v1/2@1 d=web:v1/2@1", e.layout(t))
	e.setImage(t, "web:v2")
	e.until(t, "the canary runs revision 2", 5, func(*federation.FederatedObject) bool {
		return e.layout(t) == "a=web:v2/2@2 b=web:v1/2@1 c=web:v1/2@1 d=web:v1/2@1"
	})
	e.editFed(t, setPaused(true))
	e.until(t, "the rollout paused", 20, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Phase == federation.RolloutPaused
	})

	// The replicas are redistributed: 12 instead of 8.
	rsp, err := e.host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(rsp.Object, int64(12), "spec", "totalReplicas"))
	_, err = e.host.Update(ctx, federation.ReplicaSchedulingPreferenceGVR, rsp)
	require.NoError(t, err)
	e.until(t, "12 replicas in every cluster, each on its revision", 3, func(*federation.FederatedObject) bool {
		return e.layout(t) == "a=web:v2/3@2 b=web:v1/3@1 c=web:v1/3@1 d=web:v1/3@1"
	})

	// A cluster joins: placed at once (the selector takes every cluster), on the previous
	// revision since its stage has not started.
	e.fleet.Add("e", nil)
	e.names = append(e.names, "e")
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.until(t, "the new cluster runs the previous revision", 5, func(*federation.FederatedObject) bool {
		l := e.layout(t)
		return strings.Contains(l, " e=web:v1/") && strings.HasSuffix(l, "@1")
	})
	t.Logf("after e joined: %s", e.layout(t))
	// The canary's new replicas make it not ready for a moment: the rollout waits for it,
	// then holds at the paused gate again. It stays at stage 1 throughout.
	e.until(t, "the rollout paused again", 10, func(f *federation.FederatedObject) bool {
		st := f.Status.Rollout
		require.Equal(t, int32(1), st.Stage, st.Message)
		require.Zero(t, st.FailedRevision, st.Message)
		return st.Phase == federation.RolloutPaused
	})
	require.Equal(t, "web:v2", e.imageIn(t, "a"))
	for _, n := range []string{"b", "c", "d"} {
		require.Equal(t, "web:v1", e.imageIn(t, n), n)
	}

	e.editFed(t, setPaused(false))
	e.until(t, "revision 2 complete", 60, func(f *federation.FederatedObject) bool {
		return f.Status.Rollout.Revision == 2 && f.Status.Rollout.Phase == federation.RolloutComplete
	})
	require.Equal(t, "a=web:v2 b=web:v2 c=web:v2 d=web:v2 e=web:v2", e.images(t))
}
