package controlplane_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// The policy CRDs refuse at admission what fedkit's validation refuses wherever their
// schema and CEL rules can say it, naming the field (or the part of the object holding it)
// that Go validation names: every case of federation/testdata/admission.yaml, whose Go side
// federation's TestAdmissionCases checks. A slash-less override path among them.
func TestPolicyAdmissionOnRealServers(t *testing.T) {
	ns := fmt.Sprintf("admission-%d", runs.Add(1))
	env, _ := setup(t, ns)
	host := env.Client(t, hostName)
	ctx := context.Background()
	for _, tc := range fedtest.PolicyCases(t, "../../federation/testdata/admission.yaml", ns, ns+"-") {
		t.Run(tc.Name, func(t *testing.T) {
			gvr := federation.ClusterPropagationPolicyGVR
			if tc.Policy.GetNamespace() != "" {
				gvr = federation.PropagationPolicyGVR
			}
			_, err := host.Create(ctx, gvr, tc.Policy.DeepCopy())
			if err == nil {
				require.NoError(t, host.Delete(ctx, gvr, tc.Policy.GetNamespace(), tc.Policy.GetName(), metav1.DeleteOptions{}))
			}
			fedtest.RequireAdmission(t, tc, err)
		})
	}
}
