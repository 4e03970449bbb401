package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// The member object takes the federated object's namespace and name: a template that names
// others is refused with an error at the field, not silently rewritten (found by the hostile
// input table, test/hostile).
func TestValidateTemplateIdentity(t *testing.T) {
	tests := []struct {
		name     string
		metadata string
		want     []string
	}{
		{name: "none", metadata: `{labels: {app: web}}`},
		{name: "the same", metadata: `{name: web, namespace: shop}`},
		{name: "another namespace", metadata: `{namespace: kube-system}`, want: []string{"FieldValueInvalid spec.template.metadata.namespace"}},
		{name: "another name", metadata: `{name: other}`, want: []string{"FieldValueInvalid spec.template.metadata.name"}},
		{name: "not a string", metadata: `{namespace: 3, name: [x]}`, want: []string{"FieldValueInvalid spec.template.metadata.name", "FieldValueInvalid spec.template.metadata.namespace"}},
		{name: "metadata not an object", metadata: `yes`, want: []string{"FieldValueInvalid spec.template.metadata"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &federation.FederatedObject{}
			require.NoError(t, yaml.Unmarshal([]byte(`{metadata: {name: web, namespace: shop}, spec: {template: {metadata: `+tc.metadata+`}}}`), obj))
			if diff := cmp.Diff(tc.want, errorPaths(federation.ValidateFederatedObject(obj))); diff != "" {
				t.Errorf("ValidateFederatedObject (-want +got):\n%s", diff)
			}
		})
	}
}
