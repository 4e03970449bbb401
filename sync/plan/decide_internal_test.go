package plan

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

func obj(labels map[string]any, annotations map[string]any, rv string, spec map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": "web", "namespace": "prod", "resourceVersion": rv}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}}
}

func TestDecideMember(t *testing.T) {
	ours := map[string]any{federation.ManagedByLabel: "fedkit"}
	hash := func(h string) map[string]any { return map[string]any{federation.DesiredHashAnnotation: h} }
	desired := obj(ours, hash("v1:a"), "", map[string]any{"replicas": int64(3)})
	deleting := obj(ours, hash("v1:a"), "7", map[string]any{"replicas": int64(3)})
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)

	for _, tc := range []struct {
		name                     string
		placed, deleting, orphan bool
		adopt                    bool
		live                     *unstructured.Unstructured
		verified                 string
		render                   rendered
		wantAction               Action
		wantReason               string
		wantDrift                []string
	}{
		{name: "absent and placed: create", placed: true, render: rendered{obj: desired}, wantAction: ActionCreate},
		{name: "in line", placed: true, live: obj(ours, hash("v1:a"), "7", map[string]any{"replicas": int64(3)}), render: rendered{obj: desired}},
		{name: "hash changed: update", placed: true, live: obj(ours, hash("v1:old"), "7", map[string]any{"replicas": int64(3)}), render: rendered{obj: desired}, wantAction: ActionUpdate},
		{name: "drift: update", placed: true, live: obj(ours, hash("v1:a"), "8", map[string]any{"replicas": int64(9)}), render: rendered{obj: desired}, wantAction: ActionUpdate, wantDrift: []string{"/spec/replicas"}},
		{name: "verified version: no comparison", placed: true, verified: "8", live: obj(ours, hash("v1:a"), "8", map[string]any{"replicas": int64(9)}), render: rendered{obj: desired}},
		{name: "unmanaged: abort", placed: true, live: obj(nil, nil, "7", nil), render: rendered{obj: desired}, wantReason: ReasonAlreadyExists},
		{name: "unmanaged: adopt", placed: true, adopt: true, live: obj(nil, nil, "7", nil), render: rendered{obj: desired}, wantAction: ActionUpdate},
		{name: "another federation's: never", placed: true, adopt: true, live: obj(map[string]any{federation.ManagedByLabel: "other"}, nil, "7", nil), render: rendered{obj: desired}, wantReason: ReasonManagedByOther},
		{name: "not placed, ours: delete", live: obj(ours, nil, "7", nil), wantAction: ActionDelete},
		{name: "not placed, not ours: nothing", live: obj(nil, nil, "7", nil)},
		{name: "not placed, absent: nothing"},
		{name: "deleting: delete", placed: true, deleting: true, live: obj(ours, nil, "7", nil), wantAction: ActionDelete},
		{name: "deleting with orphan", deleting: true, orphan: true, live: obj(ours, nil, "7", nil), wantAction: ActionOrphan},
		{name: "member being deleted", placed: true, live: deleting, render: rendered{obj: desired}, wantReason: ReasonWaitingForRemoval},
		{name: "render failed", placed: true, render: rendered{err: ErrTypeNotServed}, wantReason: ReasonRenderFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := decideMember(Change{Cluster: "c1", Placed: tc.placed, Live: tc.live}, member{
				MemberState: MemberState{Object: tc.live}, memo: Verified{ResourceVersion: tc.verified}, render: tc.render,
				schema: SchemaFor(deploymentGVK), identity: "fedkit", adopt: tc.adopt, deleting: tc.deleting, orphan: tc.orphan})
			got := []any{ch.Action.String(), ch.Reason, ch.Drift}
			want := []any{tc.wantAction.String(), tc.wantReason, tc.wantDrift}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decideMember (-want +got):\n%s", diff)
			}
		})
	}
}

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
