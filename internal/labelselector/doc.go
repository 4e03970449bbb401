// Package labelselector gives a metav1.LabelSelector the one meaning it has everywhere in fedkit.
//
//	sel, err := labelselector.Parse(p.ClusterSelector, field.NewPath("spec", "placement", "clusterSelector"))
//	if err == nil && sel.Matches(labels.Set(cluster.Labels)) { ... }
//	errs := labelselector.Validate(p.ClusterSelector, path) // the same rules, as a field.ErrorList
//
// That meaning is what metav1.LabelSelectorAsSelector gives it, which is also what a
// Kubernetes API server gives the selectors of its own objects. Placement's cluster selector,
// the override entries' cluster selectors and the validation of both go through this
// package. So a selector that validation rejects can never match, or fail to match, a
// cluster somewhere else.
//
//   - nil selects nothing; an empty selector ({}) selects every label set;
//   - matchLabels keys and matchExpressions keys are qualified names
//     (validation.IsQualifiedName), values are label values (validation.IsValidLabelValue);
//   - In and NotIn need values, Exists and DoesNotExist take none, and no other operator
//     exists.
//
// A selector with any invalid part is an error, whatever the labels it would be matched
// against. So a typo is reported at once, not the day a cluster gets the label.
//
// It imports nothing from fedkit, so that package federation may import it.
package labelselector
