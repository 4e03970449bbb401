package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/cmd/internal/process/processtest"
	"github.com/google/go-cmp/cmp"
)

// A cluster's configuration is found in controller-runtime's order: --kubeconfig, KUBECONFIG,
// the in-cluster configuration (under ServiceAccountDir), ~/.kube/config.
func TestLoad(t *testing.T) {
	flagFile := processtest.Kubeconfig(t, "flag")
	envFile := processtest.Kubeconfig(t, "env", "other")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	homeFile := processtest.Kubeconfig(t, "home")
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
		source  Source
		env     map[string]string
		want    result
		wantErr string
	}{
		{"--kubeconfig first", Source{Kubeconfig: flagFile}, map[string]string{"KUBECONFIG": envFile, "KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			result{Host: "https://flag.invalid", Source: "--kubeconfig " + flagFile, Token: "x"}, ""},
		{"then KUBECONFIG, with a context", Source{Context: "other"}, map[string]string{"KUBECONFIG": envFile, "HOME": home},
			result{Host: "https://other.invalid", Source: "KUBECONFIG, context other", Token: "x"}, ""},
		{"then in cluster", Source{ServiceAccountDir: sa}, pod,
			result{Host: "https://10.0.0.1:443", Source: "in-cluster (" + sa + ")", Namespace: "platform", Token: "sa-token\n",
				TokenFile: filepath.Join(sa, "token"), CAFile: filepath.Join(sa, "ca.crt")}, ""},
		{"in cluster over IPv6", Source{ServiceAccountDir: sa}, map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"},
			result{Host: "https://[fd00::1]:6443", Source: "in-cluster (" + sa + ")", Namespace: "platform", Token: "sa-token\n",
				TokenFile: filepath.Join(sa, "token"), CAFile: filepath.Join(sa, "ca.crt")}, ""},
		{"then ~/.kube/config", Source{}, map[string]string{"HOME": home},
			result{Host: "https://home.invalid", Source: "~/.kube/config", Token: "x"}, ""},
		{"nothing", Source{}, map[string]string{"HOME": t.TempDir()}, result{}, "no configuration:"},
		{"a context in cluster", Source{ServiceAccountDir: sa, Context: "host", ContextFlag: "--host-context"}, pod, result{}, "--host-context \"host\": the in-cluster configuration has no contexts"},
		{"in cluster without a token", Source{ServiceAccountDir: t.TempDir()}, pod, result{}, "in-cluster configuration: open"},
		{"a missing kubeconfig", Source{Kubeconfig: filepath.Join(home, "absent")}, nil, result{}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.source.Getenv = func(k string) string { return tc.env[k] }
			hc, err := Load(tc.source)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load = %v; want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := result{Host: hc.Rest.Host, Source: hc.Source, Namespace: hc.Namespace, Token: hc.Rest.BearerToken,
				TokenFile: hc.Rest.BearerTokenFile, CAFile: hc.Rest.CAFile}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}

// A program without a linked version reports the build information's, or (devel).
func TestVersion(t *testing.T) {
	if got := Version("v1.2.3"); got != "v1.2.3" {
		t.Errorf("Version(v1.2.3) = %q", got)
	}
	if got := Version(""); got == "" {
		t.Error("Version without a linked version is empty; want the build information's or (devel)")
	}
}
