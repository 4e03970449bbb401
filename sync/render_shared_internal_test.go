package sync

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// TestRenderMembersShares: renderMembers gives every member what override's RenderMembers
// gives it, and renders once for the new members with the same replica count when the object
// has no overrides, who then share the object; with overrides, or with a member object to
// retain from, every member has its own render, and a failed shared render fails each member
// with its own cluster's name.
func TestRenderMembersShares(t *testing.T) {
	two, three := int64(2), int64(3)
	existing := obj(map[string]any{federation.ManagedByLabel: federation.ManagedByValue}, nil, "7", map[string]any{"replicas": int64(5)})
	members := []override.Member{
		{Name: "a", Replicas: &two},
		{Name: "b", Replicas: &three},
		{Name: "c", Replicas: &two},
		{Name: "d", Replicas: &two, Existing: existing},
		{Name: "e", Replicas: &three},
		{Name: "f"},
		{Name: "g"},
	}
	template := map[string]any{"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{}}}}
	base := override.Input{Key: federation.Key{Namespace: "prod", Name: "web"}, Template: template, Type: federation.DeploymentType, Revision: 4}
	withOverride := base
	withOverride.Overrides = []federation.ClusterOverride{{ClusterName: "c", ClusterOverrides: []federation.OverrideOp{{Path: "/spec/paused", Value: &federation.RawValue{Raw: []byte("true")}}}}}
	broken := base
	broken.Key.Name = "" // every render fails

	for _, tc := range []struct {
		name string
		in   override.Input
		same [][]string // groups of members sharing one object
	}{
		{name: "no overrides", in: base, same: [][]string{{"a", "c"}, {"b", "e"}, {"f", "g"}}},
		{name: "overrides", in: withOverride},
		{name: "failed render", in: broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &override.Renderer{}
			want := r.RenderMembers(tc.in, members)
			got := renderMembers(r, tc.in, members)
			require.Len(t, got, len(members))
			byName := map[string]*unstructured.Unstructured{}
			for i := range members {
				if want[i].Err != nil {
					require.EqualError(t, got[i].Err, want[i].Err.Error(), members[i].Name)
					require.Contains(t, got[i].Err.Error(), fmt.Sprintf("cluster %q", members[i].Name))
					continue
				}
				require.NoError(t, got[i].Err, members[i].Name)
				if diff := cmp.Diff(want[i].Object.Object, got[i].Object.Object); diff != "" {
					t.Errorf("%s (-RenderMembers +renderMembers):\n%s", members[i].Name, diff)
				}
				byName[members[i].Name] = got[i].Object
			}
			shared := map[*unstructured.Unstructured][]string{}
			for _, m := range members {
				if o := byName[m.Name]; o != nil {
					shared[o] = append(shared[o], m.Name)
				}
			}
			var groups [][]string
			for _, names := range shared {
				if len(names) > 1 {
					groups = append(groups, names)
				}
			}
			require.ElementsMatch(t, tc.same, groups, "members sharing an object")
		})
	}
}
