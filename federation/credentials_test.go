package federation_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// TestCredentials: a member's credentials, a service-account token and anything in the
// control plane's own namespace are credentials; an ordinary Secret is not.
func TestCredentials(t *testing.T) {
	secret := func(ns string, labels map[string]string, typ string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
		u.SetNamespace(ns)
		u.SetName("s")
		u.SetLabels(labels)
		if typ != "" {
			u.Object["type"] = typ
		}
		return u
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		cp   string
		want string // a part of the answer; "" for none
	}{
		{"an ordinary Secret", secret("shop", map[string]string{"app": "web"}, "Opaque"), federation.DefaultNamespace, ""},
		{"a member's credentials", secret("shop", map[string]string{federation.SecretClusterLabel: "eu"}, ""), "", `Cluster "eu" (label federation.k8s.io/cluster)`},
		{"a service-account token", secret("shop", nil, "kubernetes.io/service-account-token"), "", "service account token"},
		{"the control plane's own", secret(federation.DefaultNamespace, nil, "Opaque"), federation.DefaultNamespace, "control plane's own namespace fedkit-system"},
		{"no control plane namespace given", secret(federation.DefaultNamespace, nil, "Opaque"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := federation.Credentials(tc.obj, tc.cp)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Credentials() = %q; want %q", got, tc.want)
			}
		})
	}
}
