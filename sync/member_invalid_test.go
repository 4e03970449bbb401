package sync_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestMemberTheServerWouldRefuseIsTerminal: a Deployment template whose selector does not
// match its pod labels is refused by every member API server on create. Sync does not send
// it: each cluster reports InvalidMember naming the member's field, the pass is not retried
// with backoff (no error, or a Terminal one), and nothing is written. Fixing the template heals
// every cluster at the next pass.
func TestMemberTheServerWouldRefuseIsTerminal(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	bad := strings.Replace(frontend, "selector: {matchLabels: {app: frontend}}", "selector: {matchLabels: {app: backend}}", 1)
	require.NotEqual(t, frontend, bad)
	e.apply(t, e.typ.FederatedGVR(), bad)
	_, err := e.s.Reconcile(ctx, key)
	if err != nil {
		require.True(t, federation.IsTerminal(err), "not retried with backoff: %v", err)
	}

	fed := e.fed(t)
	want := map[string]string{"aws": plan.ReasonInvalidMember + "@0", "azure": plan.ReasonInvalidMember + "@0", "gcp": plan.ReasonInvalidMember + "@0"}
	if diff := cmp.Diff(want, propagation(fed)); diff != "" {
		t.Errorf("status.clusters (-want +got):\n%s", diff)
	}
	for _, c := range fed.Status.Clusters {
		require.Contains(t, c.Message, `cluster "`+c.Name+`": the member's API server would refuse the Deployment production/app-frontend: spec.template.metadata.labels: Invalid value:`)
		require.Nil(t, e.member(t, c.Name), "nothing is written")
	}
	require.Equal(t, metav1.ConditionFalse, propagated(fed).Status)

	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.converge(t, 5)
	for _, st := range e.fed(t).Status.Clusters {
		require.Empty(t, st.Propagation, "%s: %s", st.Name, st.Message)
	}
}

// TestOverridePathThatDoesNotExistIsRenderFailed: an override whose path the object does not
// have passes validation and the scheduler; sync finds it when it renders, reports
// RenderFailed for that cluster only (naming the object, the cluster, the operation and the
// path), writes nothing there, and still propagates to the other clusters. Fixing the
// override heals the cluster at the next pass.
func TestOverridePathThatDoesNotExistIsRenderFailed(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	bad := strings.Replace(frontend, "{op: replace, path: /spec/replicas, value: 4}", "{op: remove, path: /spec/paused}", 1)
	require.NotEqual(t, frontend, bad)
	e.apply(t, e.typ.FederatedGVR(), bad)
	_, _ = e.s.Reconcile(ctx, key) // the error, if any, is the status's to report

	fed := e.fed(t)
	want := map[string]string{"aws": "@1", "azure": "@1", "gcp": plan.ReasonRenderFailed + "@0"}
	if diff := cmp.Diff(want, propagation(fed)); diff != "" {
		t.Errorf("status.clusters (-want +got):\n%s", diff)
	}
	var msg string
	for _, c := range fed.Status.Clusters {
		if c.Name == "gcp" {
			msg = c.Message
		}
	}
	require.Contains(t, msg, `override: render Deployment production/app-frontend: cluster "gcp": remove /spec/paused: override: path not found`)
	require.Nil(t, e.member(t, "gcp"), "nothing is written where rendering failed")
	require.NotNil(t, e.member(t, "aws"))
	require.NotNil(t, e.member(t, "azure"))
	c := propagated(fed)
	require.Equal(t, metav1.ConditionFalse, c.Status, "one cluster failed: %s", c.Message)
	require.Contains(t, c.Message, "gcp")

	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.converge(t, 5)
	fed = e.fed(t)
	for _, st := range fed.Status.Clusters {
		require.Empty(t, st.Propagation, "%s: %s", st.Name, st.Message)
	}
	require.EqualValues(t, 4, replicas(e.member(t, "gcp")))
	require.Equal(t, metav1.ConditionTrue, propagated(fed).Status)
}
