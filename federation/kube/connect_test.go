package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// threeContexts is a kubeconfig with a host and two members, the host current.
const threeContexts = `apiVersion: v1
kind: Config
clusters:
- {name: host, cluster: {server: "https://host.example.com:6443"}}
- {name: eu, cluster: {server: "https://eu.example.com:6443"}}
- {name: us, cluster: {server: "https://us.example.com"}}
users: [{name: u, user: {token: ` + token + `}}]
contexts:
- {name: host, context: {cluster: host, user: u}}
- {name: eu, context: {cluster: eu, user: u}}
- {name: us, context: {cluster: us, user: u}}
current-context: host
`

func writeKubeconfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestConfigFromKubeconfig(t *testing.T) {
	good := writeKubeconfig(t, threeContexts)
	noCurrent := writeKubeconfig(t, "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: \"https://a.example.com\"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: a, context: {cluster: a, user: u}}]\n")
	garbage := writeKubeconfig(t, "users: [{name: u, user: {token: "+token+"}\n  ]]: [\n")

	for _, tt := range []struct {
		name, env, path, context string
		want                     string // the server, or the error's text
		wantErr                  error
	}{
		{name: "named context", path: good, context: "eu", want: "https://eu.example.com:6443"},
		{name: "current context", path: good, want: "https://host.example.com:6443"},
		{name: "KUBECONFIG when no path", env: good, context: "us", want: "https://us.example.com"},
		{name: "no current context", path: noCurrent, want: "no current-context", wantErr: kube.ErrInvalidConfig},
		{name: "unknown context", path: good, context: "asia", want: `no context "asia"`, wantErr: kube.ErrInvalidConfig},
		{name: "garbage is not echoed", path: garbage, want: "withheld", wantErr: kube.ErrInvalidCredentials},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			cfg, err := kube.ConfigFromKubeconfig(tt.path, tt.context)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.Contains(t, err.Error(), tt.want)
				require.NotContains(t, err.Error(), token)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.Host)
			require.Equal(t, token, cfg.BearerToken)
		})
	}
}

func TestConnectKubeconfig(t *testing.T) {
	ctx := context.Background()
	path := writeKubeconfig(t, threeContexts)

	t.Run("members registered on the host", func(t *testing.T) {
		host, set, err := kube.ConnectKubeconfig(path, "host", kube.ClusterSetOptions{})
		require.NoError(t, err)
		require.NotNil(t, host)
		require.Empty(t, set.Names(), "filled by Run from the host's Clusters")
		require.ErrorIs(t, set.Register(ctx, fake.NewHost("host")), kube.ErrInvalidConfig)
	})

	t.Run("members from contexts, registered as Clusters", func(t *testing.T) {
		_, set, err := kube.ConnectKubeconfig(path, "", kube.ClusterSetOptions{}, "eu", "us")
		require.NoError(t, err)
		require.Equal(t, []string{"eu", "us"}, set.Names())

		h := fake.NewHost("host")
		// us is registered already, at an old address, with labels an operator set.
		old := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": "us", "labels": map[string]any{"region": "us-east-1"}},
			"spec":     map[string]any{"apiEndpoint": "https://old.example.com"},
		}}
		_, err = h.Create(ctx, federation.ClusterGVR, old)
		require.NoError(t, err)

		require.NoError(t, set.Register(ctx, h))
		require.NoError(t, set.Register(ctx, h), "idempotent")
		got := map[string]string{}
		for _, u := range h.Objects(federation.ClusterGVR) {
			got[u.GetName()], _, _ = unstructured.NestedString(u.Object, "spec", "apiEndpoint")
		}
		want := map[string]string{"eu": "https://eu.example.com:6443", "us": "https://us.example.com"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Clusters on the host (-want +got):\n%s", diff)
		}
		us, err := h.Get(ctx, federation.ClusterGVR, "", "us")
		require.NoError(t, err)
		require.Equal(t, "us-east-1", us.GetLabels()["region"], "labels kept")
	})

	t.Run("errors", func(t *testing.T) {
		_, _, err := kube.ConnectKubeconfig(path, "nope", kube.ClusterSetOptions{})
		require.ErrorIs(t, err, kube.ErrInvalidConfig)
		_, _, err = kube.ConnectKubeconfig(path, "host", kube.ClusterSetOptions{}, "eu", "nope")
		require.ErrorContains(t, err, `no context "nope"`)
		_, _, err = kube.Connect(nil, kube.ClusterSetOptions{})
		require.ErrorIs(t, err, kube.ErrInvalidConfig)
	})

	t.Run("a name the host refuses", func(t *testing.T) {
		bad := writeKubeconfig(t, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://c.example.com"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: "arn:aws:eks:eu-west-1:1:cluster/c", context: {cluster: c, user: u}}]
`)
		set, err := kube.ClusterSetFromKubeconfig(bad, kube.ClusterSetOptions{})
		require.NoError(t, err)
		err = set.Register(ctx, fake.NewHost("host"))
		require.ErrorContains(t, err, `register cluster "arn:aws:eks:eu-west-1:1:cluster/c"`)
	})
}
