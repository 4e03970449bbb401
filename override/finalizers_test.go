package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// Finalizers the template set are tracked like its labels and annotations: removed from the
// template, they are removed from the member; the member's own finalizers stay.
func TestRenderDropsFinalizersTheTemplateNoLongerSets(t *testing.T) {
	render := func(t *testing.T, fins []string, existing *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		in := webInput(t)
		in.Template = (&unstructured.Unstructured{Object: in.Template}).DeepCopy().Object
		u := &unstructured.Unstructured{Object: in.Template}
		u.SetFinalizers(fins)
		in.Existing = existing
		out, err := override.Render(in)
		require.NoError(t, err)
		return out
	}
	// member is what a cluster holds after a render of before: the render, with the member's
	// own finalizers added after the federation's, and with the managed list dropped when the
	// render is an older one's, which did not track finalizers.
	member := func(t *testing.T, before []string, own []string, untracked bool) *unstructured.Unstructured {
		m := render(t, before, nil)
		m.SetFinalizers(append(m.GetFinalizers(), own...))
		m.SetResourceVersion("7")
		if untracked {
			a := m.GetAnnotations()
			delete(a, federation.ManagedFinalizersAnnotation)
			m.SetAnnotations(a)
		}
		return m
	}
	cases := []struct {
		name           string
		before, after  []string
		own            []string
		untracked      bool
		want           []string
		wantAnnotation string
	}{
		{name: "removed from the template", before: []string{"example.com/a"}, own: []string{"member.io/m"},
			want: []string{"member.io/m"}},
		{name: "one of two removed", before: []string{"example.com/b", "example.com/a"}, after: []string{"example.com/b"}, own: []string{"member.io/m"},
			want: []string{"example.com/b", "member.io/m"}, wantAnnotation: "example.com/b"},
		{name: "all gone", before: []string{"example.com/a"}, want: nil},
		{name: "added", after: []string{"example.com/a"}, own: []string{"member.io/m"},
			want: []string{"member.io/m", "example.com/a"}, wantAnnotation: "example.com/a"},
		{name: "kept", before: []string{"example.com/a"}, after: []string{"example.com/a"},
			want: []string{"example.com/a"}, wantAnnotation: "example.com/a"},
		{name: "untracked member: nothing is known to be the federation's", before: []string{"example.com/a"}, own: []string{"member.io/m"}, untracked: true,
			want: []string{"example.com/a", "member.io/m"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := render(t, c.after, member(t, c.before, c.own, c.untracked))
			if diff := cmp.Diff(c.want, out.GetFinalizers()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			got, ok := out.GetAnnotations()[federation.ManagedFinalizersAnnotation]
			require.Equal(t, c.wantAnnotation, got)
			require.Equal(t, c.wantAnnotation != "", ok, "the list is absent when the template sets none")
		})
	}
	first := render(t, []string{"example.com/b", "example.com/a", "example.com/b"}, nil)
	require.Equal(t, "example.com/a,example.com/b", first.GetAnnotations()[federation.ManagedFinalizersAnnotation], "sorted, each once")
}
