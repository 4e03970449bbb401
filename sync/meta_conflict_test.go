package sync_test

import (
	"context"
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// The first pass over a new object patches its finalizer and revision while the scheduler and
// the collector write its status: on real servers most first patches met a Conflict, and each
// cost a whole pass and a requeue with backoff. The patch is now redone in the pass on the
// object as it is, keeping the other loop's status and any finalizer added meanwhile; a new
// spec still ends the pass.
func TestMetaPatchConflictIsRetriedInThePass(t *testing.T) {
	tests := []struct {
		name string
		// meanwhile changes the object between the pass's read and its first patch.
		meanwhile   func(u *unstructured.Unstructured) (status bool)
		wantErr     bool
		wantPatches int
		// kept checks that the change made meanwhile survived.
		kept func(t *testing.T, fed *federation.FederatedObject)
	}{
		{
			name: "another loop wrote the status",
			meanwhile: func(u *unstructured.Unstructured) bool {
				require.NoError(t, unstructured.SetNestedField(u.Object, int64(7), "status", "aggregated", "replicas"))
				return true
			},
			wantPatches: 2,
			kept: func(t *testing.T, fed *federation.FederatedObject) {
				require.NotNil(t, fed.Status.Aggregated)
				require.EqualValues(t, 7, fed.Status.Aggregated.Replicas, "the other loop's status field")
			},
		},
		{
			name: "someone added a finalizer",
			meanwhile: func(u *unstructured.Unstructured) bool {
				u.SetFinalizers(append(u.GetFinalizers(), "example.com/keep"))
				return false
			},
			wantPatches: 2,
			kept: func(t *testing.T, fed *federation.FederatedObject) {
				require.Contains(t, fed.Finalizers, "example.com/keep")
			},
		},
		{
			// The pass read no schedule; going on with the template's replicas would write
			// every member twice. The queue's retry passes over the fresh object instead.
			name: "the scheduler wrote a schedule",
			meanwhile: func(u *unstructured.Unstructured) bool {
				require.NoError(t, unstructured.SetNestedField(u.Object, map[string]any{
					"clusters": []any{map[string]any{"name": "aws", "replicas": int64(1)}},
				}, "status", "schedule"))
				return true
			},
			wantErr:     true,
			wantPatches: 1,
		},
		{
			name: "the spec changed",
			meanwhile: func(u *unstructured.Unstructured) bool {
				require.NoError(t, unstructured.SetNestedField(u.Object, int64(5), "spec", "template", "spec", "replicas"))
				return false
			},
			wantErr:     true,
			wantPatches: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			e.apply(t, e.typ.FederatedGVR(), frontend)
			var once gosync.Once
			e.host.SetHooks(fake.Hooks{
				Patch: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
					if gvr == e.typ.FederatedGVR() {
						once.Do(func() {
							u, err := next.Get(ctx, gvr, ns, name)
							require.NoError(t, err)
							if tc.meanwhile(u) {
								_, err = next.UpdateStatus(ctx, gvr, u)
							} else {
								_, err = next.Update(ctx, gvr, u)
							}
							require.NoError(t, err)
						})
					}
					return next.Patch(ctx, gvr, ns, name, pt, data)
				},
			})
			e.clearActions()
			_, err := e.s.Reconcile(ctx, key)
			patches := 0
			for _, a := range e.host.Actions() {
				if a.Verb == fake.VerbPatch && a.Resource == e.typ.FederatedGVR() {
					patches++
				}
			}
			require.Equal(t, tc.wantPatches, patches, "patches of the federated object")
			if tc.wantErr {
				require.Error(t, err)
				require.Nil(t, e.member(t, "aws"), "no member write on a pass that lost its spec")
				return
			}
			require.NoError(t, err)
			fed := e.fed(t)
			require.Contains(t, fed.Finalizers, federation.SyncFinalizer)
			require.Equal(t, "1", fed.Annotations[federation.RevisionAnnotation])
			for _, c := range clusterNames {
				require.NotNil(t, e.member(t, c), c)
			}
			tc.kept(t, fed)
		})
	}
}
