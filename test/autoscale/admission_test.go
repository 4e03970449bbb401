package autoscale_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
)

// hostWithCRDs returns the host's client, with fedkit's CRDs installed and the namespace ns.
func hostWithCRDs(t *testing.T, ns string) (*testenv.Env, *kube.Client) {
	t.Helper()
	env := testenv.Shared(t)
	host := env.Client(t, hostName)
	crds, err := federation.CRDs(federation.DeploymentType)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, conformance.InstallCRDs(ctx, host, crds...))
	for _, name := range []string{"fedkit-system", ns} {
		fedtest.Create(t, host, namespacesGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: `+name+`}}`)
	}
	return env, host
}

// TestAutoscaleAdmissionOnRealServer: the ReplicaSchedulingPreference CRD refuses at
// admission what fedkit's validation refuses wherever its schema and CEL rules can say it,
// naming the field (or the object holding it) Go validation names; it accepts every
// preference Go accepts. The cases are federation/testdata/autoscale.yaml, whose Go side
// federation's TestAutoscaleAdmissionCases checks.
func TestAutoscaleAdmissionOnRealServer(t *testing.T) {
	_, host := hostWithCRDs(t, "admission")
	ctx := context.Background()
	for _, tc := range fedtest.PolicyCases(t, "../../federation/testdata/autoscale.yaml", "admission", "") {
		t.Run(tc.Name, func(t *testing.T) {
			_, err := host.Create(ctx, federation.ReplicaSchedulingPreferenceGVR, tc.Policy.DeepCopy())
			if err == nil {
				require.NoError(t, host.Delete(ctx, federation.ReplicaSchedulingPreferenceGVR, tc.Policy.GetNamespace(), tc.Policy.GetName(), metav1.DeleteOptions{}))
			}
			fedtest.RequireAdmission(t, tc, err)
		})
	}
}
