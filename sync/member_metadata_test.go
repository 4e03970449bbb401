package sync_test

import (
	"context"
	gosync "sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// Metadata the template put on the members (finalizers, labels, annotations) goes from them
// when it goes from the template; what member controllers added stays.
func TestMetadataRemovedFromTheTemplateLeavesTheMembers(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedStringSlice(u.Object, []string{"example.com/protect"}, "spec", "template", "metadata", "finalizers")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "frontend", "tier": "web"}, "spec", "template", "metadata", "labels")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"example.com/owner": "team-a"}, "spec", "template", "metadata", "annotations")
	})
	e.reconcile(t)
	require.Equal(t, []string{"example.com/protect"}, e.member(t, "aws").GetFinalizers())
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		u.SetFinalizers(append(u.GetFinalizers(), "member.io/backup"))
	}))

	e.edit(t, func(u *unstructured.Unstructured) {
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "finalizers")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "annotations")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "frontend"}, "spec", "template", "metadata", "labels")
	})
	e.reconcile(t)
	for _, c := range clusterNames {
		m := e.member(t, c)
		var want []string
		if c == "aws" {
			want = []string{"member.io/backup"}
		}
		if diff := cmp.Diff(want, m.GetFinalizers()); diff != "" {
			t.Errorf("%s: finalizers (-want +got):\n%s", c, diff)
		}
		require.NotContains(t, m.GetLabels(), "tier", c)
		require.NotContains(t, m.GetAnnotations(), "example.com/owner", c)
	}
}

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
