package sync_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fedsync "github.com/fedkit/fedkit/sync"
)

// A pass reports its member writes in one event per reason, naming every cluster: each event is
// a host write, and one per member write made them most of sync's host writes.
func TestOneEventPerReasonPerPass(t *testing.T) {
	tests := []struct {
		name string
		// before runs after the first pass and before the pass whose events are checked.
		before func(t *testing.T, e *env)
		want   []string
	}{
		{
			name: "create in every cluster",
			want: []string{"Normal CreatedInCluster created Deployment in 3 clusters: aws, azure, gcp"},
		},
		{
			name:   "template change",
			before: func(t *testing.T, e *env) { e.edit(t, setImage("nginx:1.22")) },
			want:   []string{"Normal UpdatedInCluster updated Deployment in 3 clusters: aws, azure, gcp"},
		},
		{
			name: "drift in two clusters",
			before: func(t *testing.T, e *env) {
				for _, c := range []string{"gcp", "aws"} {
					require.NoError(t, e.cluster(t, c).Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
						setMemberImage(u, "evil:latest")
					}))
				}
			},
			want: []string{"Normal DriftCorrected corrected drift of Deployment in 2 clusters: aws (/spec/template/spec/containers/0/image), gcp (/spec/template/spec/containers/0/image)"},
		},
		{
			name: "one cluster deleted out of band",
			before: func(t *testing.T, e *env) {
				require.NoError(t, e.cluster(t, "azure").Delete(ctx, deployments, key.Namespace, key.Name, deleteOpts()))
			},
			want: []string{"Normal CreatedInCluster created Deployment in 1 cluster: azure"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			e.apply(t, e.typ.FederatedGVR(), frontend)
			if tc.before != nil {
				e.reconcile(t)
				tc.before(t, e)
			}
			before := len(e.events.list())
			e.reconcile(t)
			if diff := cmp.Diff(tc.want, e.events.list()[before:]); diff != "" {
				t.Errorf("events of the pass (-want +got):\n%s", diff)
			}
		})
	}
}
