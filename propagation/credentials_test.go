package propagation_test

import (
	"testing"

	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/propagation"
)

// TestSelectableRefusesCredentials: no policy selects credentials (federation.Credentials, the
// test the dependencies loop applies too): a member's credentials, a service-account token.
func TestSelectableRefusesCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      bool
	}{
		{"an ordinary Secret", `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: shop}, type: Opaque}`, true},
		{"a member's credentials", `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: shop, labels: {federation.k8s.io/cluster: eu}}}`, false},
		{"a service-account token", `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: shop}, type: kubernetes.io/service-account-token}`, false},
		{"a member copy", `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: shop, labels: {federation.k8s.io/managed-by: fedkit}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := propagation.Selectable(fedtest.Decode(t, tc.doc)); got != tc.want {
				t.Errorf("Selectable() = %v; want %v", got, tc.want)
			}
		})
	}
}
