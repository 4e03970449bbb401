package kube_test

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// token is a credential that must never show up in an error.
const token = "s3cr3t-t0ken-value"

func testCA(t *testing.T) []byte {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func testCluster(mutate func(*federation.ClusterSpec)) *federation.Cluster {
	c := &federation.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "eu"},
		Spec: federation.ClusterSpec{
			APIEndpoint: "https://eu.example.com:6443",
			SecretRef:   &federation.LocalSecretReference{Name: "eu-credentials"},
		},
	}
	if mutate != nil {
		mutate(&c.Spec)
	}
	return c
}

func testSecret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eu-credentials", Namespace: "fedkit-system"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// kubeconfig returns a kubeconfig whose current context's user has the given YAML body.
func kubeconfig(user, cluster string) string {
	if cluster == "" {
		cluster = `server: https://ignored.example.com`
	}
	return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {` + cluster + `}
users:
- name: u
  user: {` + user + `}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`
}

func TestRESTConfig(t *testing.T) {
	ca := testCA(t)
	otherCA := testCA(t)
	type want struct {
		Host, BearerToken, Username, Password, ServerName string
		Insecure                                          bool
		CAData, CertData                                  []byte
		Proxy                                             string
	}
	tests := []struct {
		name    string
		cluster *federation.Cluster
		secret  *corev1.Secret
		want    want
		wantErr error
		errHas  string
	}{{
		name:    "token",
		cluster: testCluster(func(s *federation.ClusterSpec) { s.CABundle = ca }),
		secret:  testSecret(map[string]string{"token": token + "\n"}),
		want:    want{Host: "https://eu.example.com:6443", BearerToken: token, CAData: ca},
	}, {
		name:    "token wins over kubeconfig",
		cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"token": token, "kubeconfig": kubeconfig("token: other", "")}),
		want:    want{Host: "https://eu.example.com:6443", BearerToken: token},
	}, {
		name:    "kubeconfig token, its CA and server name; the spec's endpoint wins",
		cluster: testCluster(nil),
		secret: testSecret(map[string]string{"kubeconfig": kubeconfig("token: "+token,
			`server: "https://ignored", certificate-authority-data: "`+b64(ca)+`", tls-server-name: api.internal, insecure-skip-tls-verify: true, proxy-url: "http://ignored:3128"`)}),
		want: want{Host: "https://eu.example.com:6443", BearerToken: token, CAData: ca, ServerName: "api.internal"},
	}, {
		name:    "the spec's CA wins over the kubeconfig's",
		cluster: testCluster(func(s *federation.ClusterSpec) { s.CABundle = otherCA }),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig("token: "+token, `server: "https://x", certificate-authority-data: "`+b64(ca)+`"`)}),
		want:    want{Host: "https://eu.example.com:6443", BearerToken: token, CAData: otherCA},
	}, {
		name:    "kubeconfig client certificate",
		cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig(`client-certificate-data: "`+b64(ca)+`", client-key-data: "`+b64([]byte("key"))+`"`, "")}),
		want:    want{Host: "https://eu.example.com:6443", CertData: ca},
	}, {
		name:    "kubeconfig basic auth",
		cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig(`username: admin, password: `+token, "")}),
		want:    want{Host: "https://eu.example.com:6443", Username: "admin", Password: token},
	}, {
		name:    "insecure drops the CA",
		cluster: testCluster(func(s *federation.ClusterSpec) { s.CABundle = ca; s.InsecureSkipTLSVerify = true }),
		secret:  testSecret(map[string]string{"token": token}),
		want:    want{Host: "https://eu.example.com:6443", BearerToken: token, Insecure: true},
	}, {
		name:    "proxy",
		cluster: testCluster(func(s *federation.ClusterSpec) { s.ProxyURL = "socks5://proxy.internal:1080" }),
		secret:  testSecret(map[string]string{"token": token}),
		want:    want{Host: "https://eu.example.com:6443", BearerToken: token, Proxy: "socks5://proxy.internal:1080"},
	}, {
		name: "no credentials", cluster: testCluster(nil), secret: testSecret(map[string]string{"other": "x"}),
		wantErr: kube.ErrInvalidCredentials, errHas: `neither a "token" nor a "kubeconfig" key`,
	}, {
		name: "blank token", cluster: testCluster(nil), secret: testSecret(map[string]string{"token": " \n"}),
		wantErr: kube.ErrInvalidCredentials, errHas: "blank",
	}, {
		name: "kubeconfig that does not parse does not echo it", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": "users:\n- name: u\n  user: {token: " + token + "\n  ]]: [\n"}),
		wantErr: kube.ErrInvalidCredentials, errHas: "not a kubeconfig",
	}, {
		name: "kubeconfig with a token of the wrong type does not echo it", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig("token: {nested: "+token+"}", "")}),
		wantErr: kube.ErrInvalidCredentials,
	}, {
		name: "exec plugin refused", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig(`exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "curl evil"]}`, "")}),
		wantErr: kube.ErrInvalidCredentials, errHas: "exec",
	}, {
		name: "auth provider refused", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig(`auth-provider: {name: oidc}`, "")}),
		wantErr: kube.ErrInvalidCredentials, errHas: "auth providers",
	}, {
		name: "token file refused", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig(`tokenFile: /var/run/secrets/token`, "")}),
		wantErr: kube.ErrInvalidCredentials, errHas: "file references",
	}, {
		name: "CA file refused", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig("token: "+token, `server: "https://x", certificate-authority: /etc/ca.pem`)}),
		wantErr: kube.ErrInvalidCredentials, errHas: "certificate-authority file",
	}, {
		name: "kubeconfig user without credentials", cluster: testCluster(nil),
		secret:  testSecret(map[string]string{"kubeconfig": kubeconfig(`act-as: someone`, "")}),
		wantErr: kube.ErrInvalidCredentials, errHas: "no token",
	}, {
		name: "http endpoint refused", cluster: testCluster(func(s *federation.ClusterSpec) { s.APIEndpoint = "http://eu.example.com" }),
		secret: testSecret(map[string]string{"token": token}), wantErr: kube.ErrInvalidConfig, errHas: "https",
	}, {
		name: "endpoint with user info refused", cluster: testCluster(func(s *federation.ClusterSpec) { s.APIEndpoint = "https://admin:" + token + "@eu.example.com" }),
		secret: testSecret(map[string]string{"token": token}), wantErr: kube.ErrInvalidConfig, errHas: "user information",
	}, {
		name: "bad CA bundle", cluster: testCluster(func(s *federation.ClusterSpec) { s.CABundle = []byte("not pem") }),
		secret: testSecret(map[string]string{"token": token}), wantErr: kube.ErrInvalidConfig, errHas: "caBundle",
	}, {
		name: "proxy with a bad scheme is quoted without its password", cluster: testCluster(func(s *federation.ClusterSpec) { s.ProxyURL = "ftp://user:" + token + "@proxy" }),
		secret: testSecret(map[string]string{"token": token}), wantErr: kube.ErrInvalidConfig, errHas: `spec.proxyURL.scheme: Unsupported value: "ftp"`,
	}, {
		name: "proxy that does not parse is not quoted", cluster: testCluster(func(s *federation.ClusterSpec) { s.ProxyURL = "http://user:" + token + "@pro xy:%zz" }),
		secret: testSecret(map[string]string{"token": token}), wantErr: kube.ErrInvalidConfig, errHas: `spec.proxyURL: Invalid value: "(not quoted)"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := kube.RESTConfig(tt.cluster, tt.secret)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				for _, secret := range []string{token, "admin:", "user:"} {
					require.NotContains(t, err.Error(), secret, "credentials leaked into the error")
				}
				require.Contains(t, err.Error(), tt.errHas)
				return
			}
			require.NoError(t, err)
			got := want{
				Host: cfg.Host, BearerToken: cfg.BearerToken, Username: cfg.Username, Password: cfg.Password,
				ServerName: cfg.ServerName, Insecure: cfg.Insecure, CAData: cfg.CAData, CertData: cfg.CertData,
			}
			if cfg.Proxy != nil {
				u, err := cfg.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "eu.example.com"}})
				require.NoError(t, err)
				got.Proxy = u.String()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RESTConfig() mismatch (-want +got):\n%s", diff)
			}
			// rest.Config redacts credentials when printed, so an accidental log stays clean.
			require.False(t, strings.Contains(cfg.String(), token) && tt.want.BearerToken != "")
		})
	}
}

func TestRESTConfigNil(t *testing.T) {
	_, err := kube.RESTConfig(nil, nil)
	require.ErrorIs(t, err, kube.ErrInvalidConfig)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// A rest.Config that a panic or a debugging log prints (%v, %+v, %#v: what a panic's value
// or a logged struct shows) carries no credential: client-go's Config redacts its bearer
// token, password and key data when formatted, and the Client fedkit builds from it keeps
// them out of its own fields' formatting too.
func TestFormattedConfigCarriesNoCredentials(t *testing.T) {
	const password = "p4ssw0rd-value"
	for name, secret := range map[string]*corev1.Secret{
		"token":      testSecret(map[string]string{"token": token}),
		"basic auth": testSecret(map[string]string{"kubeconfig": kubeconfig(`username: admin, password: `+password, "")}),
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := kube.RESTConfig(testCluster(nil), secret)
			require.NoError(t, err)
			c, err := kube.New(cfg, kube.Options{})
			require.NoError(t, err)
			for _, v := range []any{cfg, c} {
				for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
					out := fmt.Sprintf(format, v)
					require.NotContains(t, out, token, format)
					require.NotContains(t, out, password, format)
				}
			}
		})
	}
}

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
