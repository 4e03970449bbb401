package sync_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/fake"
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

// TestPlanDecidesInvalidMember: the InvalidMember decision is Plan's, so a preview and the
// pass see the same: a placed cluster whose rendered Deployment its API server would refuse
// gets no write (ActionNone), ReasonInvalidMember, a message naming cluster, object and field,
// and the field errors; a valid template is created as ever.
func TestPlanDecidesInvalidMember(t *testing.T) {
	decide := func(doc string) []plan.Change {
		t.Helper()
		var u unstructured.Unstructured
		require.NoError(t, yamlInto(doc, &u))
		var obj federation.FederatedObject
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj))
		federation.DefaultFederatedObject(&obj)
		fleet := fake.NewFleet()
		for _, name := range []string{"aws", "azure", "gcp"} {
			fleet.Add(name, nil)
		}
		d, err := plan.Decide(plan.Input{Type: federation.DeploymentType, Object: &obj, Clusters: fleet.Clusters(),
			Members: map[string]plan.MemberState{"aws": {}, "azure": {}, "gcp": {}}, Revision: 1})
		require.NoError(t, err)
		return d.Changes
	}
	type row struct{ Cluster, Action, Reason, Message, Fields string }
	rows := func(changes []plan.Change) []row {
		var out []row
		for _, ch := range changes {
			r := row{Cluster: ch.Cluster, Action: ch.Action.String(), Reason: ch.Reason}
			if ch.Reason != "" {
				r.Message = ch.Message[:strings.Index(ch.Message, "Invalid value")]
			}
			for _, e := range ch.Invalid {
				r.Fields += e.Field + ";"
			}
			out = append(out, r)
		}
		return out
	}

	bad := strings.Replace(frontend, "selector: {matchLabels: {app: frontend}}", "selector: {matchLabels: {app: backend}}", 1)
	var want []row
	for _, c := range []string{"aws", "azure", "gcp"} {
		want = append(want, row{Cluster: c, Action: "None", Reason: plan.ReasonInvalidMember,
			Message: `cluster "` + c + `": the member's API server would refuse the Deployment production/app-frontend: spec.template.metadata.labels: `,
			Fields:  "spec.template.metadata.labels;"})
	}
	if diff := cmp.Diff(want, rows(decide(bad))); diff != "" {
		t.Errorf("invalid template (-want +got):\n%s", diff)
	}
	want = []row{{Cluster: "aws", Action: "Create"}, {Cluster: "azure", Action: "Create"}, {Cluster: "gcp", Action: "Create"}}
	if diff := cmp.Diff(want, rows(decide(frontend))); diff != "" {
		t.Errorf("valid template (-want +got):\n%s", diff)
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
