package jsonpointer_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/internal/jsonpointer"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name, pointer string
		want          []string
		wantErr       string
	}{
		{name: "plain", pointer: "/spec/replicas", want: []string{"spec", "replicas"}},
		{name: "escapes", pointer: "/metadata/labels/app.kubernetes.io~1name", want: []string{"metadata", "labels", "app.kubernetes.io/name"}},
		{name: "~01 is ~1, not /", pointer: "/a~01", want: []string{"a~1"}},
		{name: "array index and append", pointer: "/spec/args/0/-", want: []string{"spec", "args", "0", "-"}},
		{name: "empty", pointer: "", wantErr: "not empty"},
		{name: "no leading slash", pointer: "spec/replicas", wantErr: `starting with "/"`},
		{name: "bad escape", pointer: "/a~2", wantErr: `"~" must be escaped`},
		{name: "trailing ~", pointer: "/a~", wantErr: `"~" must be escaped`},
		{name: "root", pointer: "/", wantErr: "empty reference token"},
		{name: "double slash", pointer: "/spec//x", wantErr: "empty reference token"},
		{name: "trailing slash", pointer: "/spec/", wantErr: "empty reference token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonpointer.Split(tc.pointer)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Equal(t, err, jsonpointer.Check(tc.pointer), "Check and Split disagree")
				return
			}
			require.NoError(t, err)
			require.NoError(t, jsonpointer.Check(tc.pointer))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Split(%q) mismatch (-want +got):\n%s", tc.pointer, diff)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	require.Equal(t, "/metadata/labels/app.kubernetes.io~1name", jsonpointer.Join("metadata", "labels", "app.kubernetes.io/name"))
	require.Equal(t, "/a~0b~1c", jsonpointer.Join("a~b/c"))
	require.Equal(t, "", jsonpointer.Join())
	require.Equal(t, "plain", jsonpointer.Escape("plain"))
}

func TestIsIdentity(t *testing.T) {
	for _, p := range []string{"/metadata", "/metadata/name", "/metadata/namespace", "/metadata/generateName", "/kind", "/apiVersion", "/metadata/name/x"} {
		require.True(t, jsonpointer.IsIdentity(p), p)
	}
	for _, p := range []string{"/metadata/labels", "/metadata/names", "/kinds", "/spec/kind", "/metadata/labels/name"} {
		require.False(t, jsonpointer.IsIdentity(p), p)
	}
}

// FuzzJoinSplit: Split undoes Join for tokens that are not empty.
func FuzzJoinSplit(f *testing.F) {
	f.Add("metadata", "app.kubernetes.io/name", "~1/~0")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		tokens := []string{a, b, c}
		for _, tok := range tokens {
			if tok == "" {
				return
			}
		}
		p := jsonpointer.Join(tokens...)
		got, err := jsonpointer.Split(p)
		require.NoError(t, err, p)
		require.Equal(t, tokens, got)
		require.Equal(t, 3, strings.Count(p, "/"))
	})
}
