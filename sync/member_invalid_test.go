package sync_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
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
	want := map[string]string{"aws": fedsync.ReasonInvalidMember + "@0", "azure": fedsync.ReasonInvalidMember + "@0", "gcp": fedsync.ReasonInvalidMember + "@0"}
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
