package fedtest

import (
	"errors"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// PolicyCase is one case of federation/testdata/admission.yaml (or autoscale.yaml): a
// policy (or a ReplicaSchedulingPreference, kind ReplicaSchedulingPreference), the fields
// fedkit's validation names for it, and whether the CRD refuses it at admission.
type PolicyCase struct {
	Name string
	// Policy is the PropagationPolicy (in the namespace PolicyCases was given) or
	// ClusterPropagationPolicy, named after the case.
	Policy *unstructured.Unstructured
	// Invalid are the fields Go validation names; empty when the policy is valid.
	Invalid []string
	// Refused: the CRD refuses the policy, naming Invalid[0].
	Refused bool
}

// PolicyCases reads the cases of file (federation/testdata/admission.yaml), the
// PropagationPolicies in namespace (which replaces NAMESPACE in their specs), the names
// prefixed with prefix.
func PolicyCases(t testing.TB, file, namespace, prefix string) []PolicyCase {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("policy cases: %v", err)
	}
	var raw []struct {
		Name      string         `json:"name"`
		Kind      string         `json:"kind"`
		Spec      map[string]any `json:"spec"`
		Invalid   []string       `json:"invalid"`
		Admission string         `json:"admission"`
	}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(string(data), "NAMESPACE", namespace)), &raw); err != nil {
		t.Fatalf("policy cases in %s: %v", file, err)
	}
	var out []PolicyCase
	for i, r := range raw {
		if r.Admission != "refused" && r.Admission != "accepted" {
			t.Fatalf("policy case %q: admission %q, want refused or accepted", r.Name, r.Admission)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": r.Spec}}
		gvk := federation.ClusterPropagationPolicyGVK
		switch r.Kind {
		case federation.PropagationPolicyGVK.Kind:
			gvk = federation.PropagationPolicyGVK
			u.SetNamespace(namespace)
		case federation.ReplicaSchedulingPreferenceGVK.Kind:
			gvk = federation.ReplicaSchedulingPreferenceGVK
			u.SetNamespace(namespace)
		}
		u.SetGroupVersionKind(gvk)
		u.SetName(prefix + strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				return r
			case r >= 'A' && r <= 'Z':
				return r - 'A' + 'a'
			}
			return '-'
		}, r.Name))
		if len(u.GetName()) > 63 {
			t.Fatalf("policy case %d: name %q too long", i, u.GetName())
		}
		out = append(out, PolicyCase{Name: r.Name, Policy: u, Invalid: r.Invalid, Refused: r.Admission == "refused"})
	}
	return out
}

// RequireAdmission checks the answer err of a real API server to the creation of tc.Policy:
// accepted when the case says so; else refused as Invalid, naming tc.Invalid[0] or a part of
// the object that holds it.
func RequireAdmission(t testing.TB, tc PolicyCase, err error) {
	t.Helper()
	if !tc.Refused {
		if err != nil {
			t.Fatalf("the CRD refuses %s: %v", tc.Name, err)
		}
		return
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Fatalf("the CRD accepts %s: %v", tc.Name, err)
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, c.Field)
		if strings.HasPrefix(tc.Invalid[0], c.Field) {
			return
		}
	}
	t.Errorf("the CRD names %q, not %s or a part of the object that holds it: %v", fields, tc.Invalid[0], err)
}
