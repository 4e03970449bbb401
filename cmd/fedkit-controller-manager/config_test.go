package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// listen holds a port on 127.0.0.1 until the test ends and returns its address.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}

// The host's configuration is found in controller-runtime's order: --kubeconfig, KUBECONFIG,
// the in-cluster configuration (under --serviceaccount-dir), ~/.kube/config.
func TestLoadConfig(t *testing.T) {
	flagFile := writeKubeconfig(t, "flag")
	envFile := writeKubeconfig(t, "env", "other")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	homeFile := writeKubeconfig(t, "home")
	data, err := os.ReadFile(homeFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	sa := t.TempDir()
	for name, content := range map[string]string{"token": "sa-token\n", "ca.crt": "-----BEGIN CERTIFICATE-----\n", "namespace": "platform"} {
		if err := os.WriteFile(filepath.Join(sa, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pod := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "HOME": home}

	type result struct {
		Host, Source, Namespace, Token, TokenFile, CAFile string
	}
	for _, tc := range []struct {
		name    string
		flags   flags
		env     map[string]string
		want    result
		wantErr string
	}{
		{"--kubeconfig first", flags{kubeconfig: flagFile}, map[string]string{"KUBECONFIG": envFile, "KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			result{Host: "https://flag.invalid", Source: "--kubeconfig " + flagFile, Token: "x"}, ""},
		{"then KUBECONFIG, with a context", flags{hostContext: "other"}, map[string]string{"KUBECONFIG": envFile, "HOME": home},
			result{Host: "https://other.invalid", Source: "KUBECONFIG, context other", Token: "x"}, ""},
		{"then in cluster", flags{serviceAccountDir: sa}, pod,
			result{Host: "https://10.0.0.1:443", Source: "in-cluster (" + sa + ")", Namespace: "platform", Token: "sa-token\n",
				TokenFile: filepath.Join(sa, "token"), CAFile: filepath.Join(sa, "ca.crt")}, ""},
		{"in cluster over IPv6", flags{serviceAccountDir: sa}, map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"},
			result{Host: "https://[fd00::1]:6443", Source: "in-cluster (" + sa + ")", Namespace: "platform", Token: "sa-token\n",
				TokenFile: filepath.Join(sa, "token"), CAFile: filepath.Join(sa, "ca.crt")}, ""},
		{"then ~/.kube/config", flags{}, map[string]string{"HOME": home},
			result{Host: "https://home.invalid", Source: "~/.kube/config", Token: "x"}, ""},
		{"nothing", flags{}, map[string]string{"HOME": t.TempDir()}, result{}, "no configuration for the host"},
		{"a context in cluster", flags{serviceAccountDir: sa, hostContext: "host"}, pod, result{}, "the in-cluster configuration has no contexts"},
		{"in cluster without a token", flags{serviceAccountDir: t.TempDir()}, pod, result{}, "in-cluster configuration: open"},
		{"a missing kubeconfig", flags{kubeconfig: filepath.Join(home, "absent")}, nil, result{}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc, err := loadConfig(&tc.flags, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("loadConfig = %v; want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := result{Host: hc.rest.Host, Source: hc.source, Namespace: hc.namespace, Token: hc.rest.BearerToken,
				TokenFile: hc.rest.BearerTokenFile, CAFile: hc.rest.CAFile}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("loadConfig (-want +got):\n%s", diff)
			}
		})
	}
}
