package federation_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/jsonpointer"
)

// TestAdmissionCases checks Go validation against the table that test/controlplane's
// TestPolicyAdmissionOnRealServers checks the CRDs against: the fields each policy has
// wrong, and that the CRD refuses nothing Go accepts (it would refuse a valid policy).
func TestAdmissionCases(t *testing.T) {
	for _, tc := range fedtest.PolicyCases(t, "testdata/admission.yaml", "shop", "") {
		t.Run(tc.Name, func(t *testing.T) {
			var errs field.ErrorList
			if tc.Policy.GetKind() == federation.PropagationPolicyGVK.Kind {
				p, err := federation.PropagationPolicyFromUnstructured(tc.Policy)
				require.NoError(t, err)
				errs = federation.ValidatePropagationPolicy(p)
			} else {
				p, err := federation.ClusterPropagationPolicyFromUnstructured(tc.Policy)
				require.NoError(t, err)
				errs = federation.ValidateClusterPropagationPolicy(p)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.Invalid, got); diff != "" && !(len(tc.Invalid) == 0 && len(got) == 0) {
				t.Errorf("invalid fields (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.Refused && len(got) == 0 {
				t.Errorf("the CRD refuses %s, which fedkit's validation accepts", tc.Name)
			}
		})
	}
}

// TestOverridePathPatternIsCheck: the CRDs' pattern for an override path accepts exactly
// what jsonpointer.Check (fedkit's validation) accepts.
func TestOverridePathPatternIsCheck(t *testing.T) {
	crd, err := federation.ClusterPropagationPolicyCRD()
	require.NoError(t, err)
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["overrides"].Items.Schema.
		Properties["clusterOverrides"].Items.Schema.Properties["path"]
	re, err := regexp.Compile(s.Pattern)
	require.NoError(t, err)
	fed, err := federation.CRDFor(federation.DeploymentType)
	require.NoError(t, err)
	require.Equal(t, s.Pattern, fed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["overrides"].Items.Schema.
		Properties["clusterOverrides"].Items.Schema.Properties["path"].Pattern, "the Federated<Kind> CRDs have the same pattern")
	for _, p := range []string{"", "/", "//", "/a", "a", "a/b", "/a/b", "/a/", "/a//b", "/~", "/~0", "/~1", "/~2", "/a~", "/a~0b",
		"/metadata/labels/app.kubernetes.io~1name", "/spec/containers/-", "/ä/ö", "/a b", " /a", "/~01", "/~~0"} {
		if got, want := re.MatchString(p), jsonpointer.Check(p) == nil; got != want {
			t.Errorf("pattern matches %q = %v; jsonpointer.Check accepts it = %v", p, got, want)
		}
	}
}
