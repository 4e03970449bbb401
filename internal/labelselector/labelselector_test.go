package labelselector_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/internal/labelselector"
)

func selector(t *testing.T, y string) *metav1.LabelSelector {
	t.Helper()
	if y == "null" {
		return nil
	}
	var s metav1.LabelSelector
	require.NoError(t, yaml.UnmarshalStrict([]byte(y), &s))
	return &s
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, selector string
		want           []string // "type field" of each error, in order
	}{
		{name: "nil", selector: `null`},
		{name: "empty", selector: `{}`},
		{name: "valid", selector: `{matchLabels: {example.com/a: "1", b: ""}, matchExpressions: [{key: c, operator: NotIn, values: [x]}, {key: d, operator: Exists}]}`},
		{name: "bad keys, in key order", selector: `{matchLabels: {"z z": x, "bad key!": x, ok: x}}`,
			want: []string{"FieldValueInvalid sel.matchLabels[bad key!]", "FieldValueInvalid sel.matchLabels[z z]"}},
		{name: "bad value", selector: `{matchLabels: {a: "bad value!"}}`, want: []string{"FieldValueInvalid sel.matchLabels[a]"}},
		{name: "empty key", selector: `{matchLabels: {"": x}}`, want: []string{"FieldValueInvalid sel.matchLabels[]"}},
		{name: "expression key", selector: `{matchExpressions: [{key: ok, operator: Exists}, {key: "a/b/c", operator: Exists}]}`,
			want: []string{"FieldValueInvalid sel.matchExpressions[1].key"}},
		{name: "In without values", selector: `{matchExpressions: [{key: a, operator: In}]}`, want: []string{"FieldValueInvalid sel.matchExpressions[0].values"}},
		{name: "bad value in an expression", selector: `{matchExpressions: [{key: a, operator: NotIn, values: [ok, "x y"]}]}`,
			want: []string{"FieldValueInvalid sel.matchExpressions[0].values"}},
		{name: "Exists with values", selector: `{matchExpressions: [{key: a, operator: Exists, values: [x]}]}`, want: []string{"FieldValueInvalid sel.matchExpressions[0].values"}},
		{name: "unknown operator", selector: `{matchExpressions: [{key: a, operator: Near, values: [x]}]}`, want: []string{"FieldValueInvalid sel.matchExpressions[0].operator"}},
		{name: "every part is checked", selector: `{matchLabels: {"bad!": x}, matchExpressions: [{key: a, operator: In}, {key: b, operator: Gt, values: ["1"]}]}`,
			want: []string{"FieldValueInvalid sel.matchLabels[bad!]", "FieldValueInvalid sel.matchExpressions[0].values", "FieldValueInvalid sel.matchExpressions[1].operator"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := selector(t, tc.selector)
			errs := labelselector.Validate(s, field.NewPath("sel"))
			var got []string
			for _, e := range errs {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate(%s) mismatch (-want +got):\n%s", tc.selector, diff)
			}
			// Validity is the API machinery's, and Parse reports Validate's first error.
			_, refErr := metav1.LabelSelectorAsSelector(s)
			require.Equal(t, refErr != nil, len(errs) > 0, "LabelSelectorAsSelector error: %v", refErr)
			sel, err := labelselector.Parse(s, field.NewPath("sel"))
			if len(errs) > 0 {
				require.EqualError(t, err, errs[0].Error())
				require.Nil(t, sel)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// TestParseMeansLabelSelectorAsSelector: the parsed selector matches what the API
// machinery's does, nil selecting nothing and {} everything.
func TestParseMeansLabelSelectorAsSelector(t *testing.T) {
	selectors := []string{`null`, `{}`, `{matchLabels: {a: "1"}}`, `{matchExpressions: [{key: a, operator: NotIn, values: ["1"]}]}`,
		`{matchLabels: {a: "2"}, matchExpressions: [{key: b, operator: Exists}, {key: c, operator: DoesNotExist}]}`}
	sets := []labels.Set{nil, {"a": "1"}, {"a": "2", "b": ""}, {"a": "2", "b": "x", "c": "y"}}
	for _, y := range selectors {
		s := selector(t, y)
		ref, err := metav1.LabelSelectorAsSelector(s)
		require.NoError(t, err)
		got, err := labelselector.Parse(s, field.NewPath("sel"))
		require.NoError(t, err)
		for _, l := range sets {
			require.Equal(t, ref.Matches(l), got.Matches(l), "%s on %v", y, l)
		}
	}
}

// TestParseErrorIsStable: with several bad keys, Go's map order does not change the message
// (LabelSelectorAsSelector alone reports whichever key it meets first).
func TestParseErrorIsStable(t *testing.T) {
	s := selector(t, `{matchLabels: {"a!": x, "b!": x, "c!": x, "d!": x, "e!": x}}`)
	_, first := labelselector.Parse(s, field.NewPath("spec", "placement", "clusterSelector"))
	require.ErrorContains(t, first, `spec.placement.clusterSelector.matchLabels[a!]: Invalid value: "a!": name part must consist of`)
	for i := 0; i < 50; i++ {
		_, err := labelselector.Parse(s, field.NewPath("spec", "placement", "clusterSelector"))
		require.Equal(t, first.Error(), err.Error())
	}
}
