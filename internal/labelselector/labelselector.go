package labelselector

import (
	"errors"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Parse returns the labels.Selector that s means, exactly as metav1.LabelSelectorAsSelector
// builds it. When s is invalid the error is the first of Validate's errors, a *field.Error
// rooted at path (e.g. spec.placement.clusterSelector.matchLabels[bad key!]): the same
// selector always gives the same message, whatever Go's map order, so a loop that writes
// the message into a status condition does not rewrite it on every pass.
func Parse(s *metav1.LabelSelector, path *field.Path) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err == nil {
		return sel, nil
	}
	if errs := Validate(s, path); len(errs) > 0 {
		return nil, errs[0]
	}
	return nil, field.Invalid(path, s.String(), err.Error()) // not reached: some part failed
}

// Validate returns a field error for every invalid part of s, in a fixed order (matchLabels
// by key, then matchExpressions in order), each at the path of that part. s is valid, for
// Parse and for the API machinery, exactly when the list is empty.
//
// A selector is invalid exactly when one of its parts is: metav1.LabelSelectorAsSelector
// builds one requirement per part, independently, and fails when one of them fails. Each
// part is checked by the same function, so validity cannot drift from what Parse accepts.
func Validate(s *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		part := &metav1.LabelSelector{MatchLabels: map[string]string{k: s.MatchLabels[k]}}
		if _, err := metav1.LabelSelectorAsSelector(part); err != nil {
			errs = append(errs, partError(path.Child("matchLabels").Key(k), k, err, nil))
		}
	}
	for i := range s.MatchExpressions {
		r := s.MatchExpressions[i]
		part := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{r}}
		if _, err := metav1.LabelSelectorAsSelector(part); err != nil {
			errs = append(errs, partError(path.Child("matchExpressions").Index(i), r.Key, err, &r))
		}
	}
	return errs
}

// partError turns the API machinery's error for one part into a field error at that part.
// labels.NewRequirement reports one *field.Error with its own relative path ("key",
// "values", "values[0][a]"); its detail and bad value are kept and the path refined to the
// key, values or operator of the part. Anything else is kept whole.
func partError(path *field.Path, key string, err error, expr *metav1.LabelSelectorRequirement) *field.Error {
	var fe *field.Error
	if !errors.As(err, &fe) {
		var agg utilerrors.Aggregate
		if errors.As(err, &agg) && len(agg.Errors()) == 1 {
			errors.As(agg.Errors()[0], &fe)
		}
	}
	switch {
	case fe == nil && expr != nil:
		// The only error that is not a field error: an unknown operator.
		return field.Invalid(path.Child("operator"), string(expr.Operator), err.Error())
	case fe == nil:
		return field.Invalid(path, key, err.Error())
	case expr != nil && fe.Field == "key":
		return field.Invalid(path.Child("key"), fe.BadValue, fe.Detail)
	case expr != nil && strings.HasPrefix(fe.Field, "values"):
		return field.Invalid(path.Child("values"), fe.BadValue, fe.Detail)
	}
	return field.Invalid(path, fe.BadValue, fe.Detail)
}
