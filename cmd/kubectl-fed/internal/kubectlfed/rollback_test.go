package kubectlfed

import (
	"testing"

	"github.com/fedkit/fedkit/federation"
)

// TestRollbackReport: the line `kubectl fed rollback` prints says what was rolled back; for
// a Federated<Kind> a policy generated, that is the native object, which the policy
// federates again (fedsync.Rollback restored the revision there).
func TestRollbackReport(t *testing.T) {
	key := federation.Key{Namespace: "shop", Name: "web"}
	own := &federation.FederatedObject{}
	own.Generation = 4
	generated := &federation.FederatedObject{}
	generated.Generation = 7
	generated.Labels = map[string]string{federation.GeneratedByLabel: federation.GeneratedByPropagation}
	generated.Annotations = map[string]string{federation.PolicyAnnotation: "cluster/web"}
	for _, tc := range []struct {
		name string
		fed  *federation.FederatedObject
		want string
	}{
		{"the user's own", own, "FederatedDeployment shop/web rolled back to revision 3: generation 4; sync propagates it"},
		{"a policy's", generated, "Deployment shop/web rolled back to revision 3: policy cluster/web generates FederatedDeployment shop/web from it, and sync propagates that"},
	} {
		if got := rollbackReport(federation.DeploymentType, key, tc.fed, "revision 3"); got != tc.want {
			t.Errorf("%s: rollbackReport = %q; want %q", tc.name, got, tc.want)
		}
	}
}
