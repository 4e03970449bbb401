package federation_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
)

func TestKey(t *testing.T) {
	tests := []struct {
		in      string
		want    federation.Key
		wantErr bool
	}{
		{in: "production/app-frontend", want: federation.Key{Namespace: "production", Name: "app-frontend"}},
		{in: "cluster-aws-us-east", want: federation.Key{Name: "cluster-aws-us-east"}},
		{in: "", wantErr: true},
		{in: "a/b/c", wantErr: true},
		{in: "/b", wantErr: true},
		{in: "a/", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := federation.ParseKey(tc.in)
			if tc.wantErr {
				require.ErrorIs(t, err, federation.ErrInvalidKey)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.in, got.String(), "String() must invert ParseKey")
		})
	}
}

func TestTerminal(t *testing.T) {
	base := errors.New("bad override")
	err := fmt.Errorf("sync: render: %w", federation.Terminal(base))
	require.True(t, federation.IsTerminal(err))
	require.ErrorIs(t, err, federation.ErrTerminal)
	require.ErrorIs(t, err, base, "Terminal must keep the cause reachable")
	require.False(t, federation.IsTerminal(base))
	require.NoError(t, federation.Terminal(nil))
}

func TestClusterError(t *testing.T) {
	base := errors.New("boom")
	err := fmt.Errorf("apply: %w", &federation.ClusterError{Cluster: "eu", Op: "update", Err: base})
	var ce *federation.ClusterError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "eu", ce.Cluster)
	require.ErrorIs(t, err, base)
	require.Equal(t, `apply: cluster "eu": update: boom`, err.Error())
}

func ExampleTerminal() {
	err := fmt.Errorf("render production/web for cluster %q: %w", "eu",
		federation.Terminal(errors.New("override path /spec/replicas: value is not an integer")))
	if federation.IsTerminal(err) {
		fmt.Println("drop the key until the object changes:", err)
	}
	// Output:
	// drop the key until the object changes: render production/web for cluster "eu": terminal: override path /spec/replicas: value is not an integer
}
