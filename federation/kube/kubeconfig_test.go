package kube_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

func TestClusterSetFromKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	good := write("good", `apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://a.example.com"}}, {name: b, cluster: {server: "https://b.example.com"}}]
users: [{name: u, user: {token: `+token+`}}]
contexts: [{name: ctx-b, context: {cluster: b, user: u}}, {name: ctx-a, context: {cluster: a, user: u}}]
`)
	garbage := write("garbage", "users: [{name: u, user: {token: "+token+"}\n  ]]: [\n")
	empty := write("empty", "apiVersion: v1\nkind: Config\n")
	badCA := write("bad-ca", `apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://a.example.com", certificate-authority: /does/not/exist.pem}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: ctx-a, context: {cluster: a, user: u}}]
`)

	set, err := kube.ClusterSetFromKubeconfig(good, kube.ClusterSetOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"ctx-a", "ctx-b"}, set.Names(), "no contexts named: all of them")
	_, err = set.Reconcile(t.Context(), federation.Key{Name: "ctx-a"})
	require.NoError(t, err, "Reconcile of a static set does nothing")
	_, err = set.Client("ctx-a")
	require.NoError(t, err)

	tests := []struct {
		name     string
		path     string
		contexts []string
		want     error
		has      string
	}{
		{"missing file", filepath.Join(dir, "absent"), nil, fs.ErrNotExist, "absent"},
		{"garbage is not echoed", garbage, nil, kube.ErrInvalidCredentials, "withheld"},
		{"no contexts", empty, nil, kube.ErrInvalidConfig, "no contexts"},
		{"unknown context", good, []string{"ctx-a", "nope"}, kube.ErrInvalidConfig, `no context "nope"`},
		{"unreadable CA file", badCA, nil, kube.ErrInvalidConfig, `context "ctx-a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kube.ClusterSetFromKubeconfig(tt.path, kube.ClusterSetOptions{}, tt.contexts...)
			require.ErrorIs(t, err, tt.want)
			require.Contains(t, err.Error(), tt.has)
			require.NotContains(t, err.Error(), token)
		})
	}
}
