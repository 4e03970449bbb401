package override

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/fedkit/fedkit/federation"
)

// ForCluster returns the override entries that apply to a cluster, in the order they apply:
// first every entry whose ClusterSelector matches the cluster's labels, in list order, then
// the entry whose ClusterName is the cluster. The most specific entry applies last and so
// wins where entries write the same location; among selector entries, later ones win.
//
// The result shares the entries' contents with overrides (treat it as read-only). It is an
// error, wrapping ErrInvalidOverride, when an entry names the cluster twice, has both or
// neither of ClusterName and ClusterSelector, or has a selector that cannot be evaluated;
// ValidateOverrides in package federation reports the same problems up front.
func ForCluster(overrides []federation.ClusterOverride, cluster string, labels map[string]string) ([]federation.ClusterOverride, error) {
	idx, err := selectFor(overrides, cluster, labels)
	if err != nil || len(idx) == 0 {
		return nil, err
	}
	out := make([]federation.ClusterOverride, len(idx))
	for i, j := range idx {
		out[i] = overrides[j]
	}
	return out, nil
}

// selectFor is ForCluster returning the indexes of the entries, which lets RenderMembers
// compile each entry once for all clusters. A selector entry never errors for one cluster
// and not another: a malformed entry fails every cluster, so a typo is seen at once.
func selectFor(overrides []federation.ClusterOverride, cluster string, labels map[string]string) ([]int, error) {
	var out []int
	named := -1
	for i := range overrides {
		o := &overrides[i]
		switch {
		case o.ClusterName != "" && o.ClusterSelector != nil:
			return nil, fmt.Errorf("%w: overrides[%d] has both clusterName and clusterSelector", ErrInvalidOverride, i)
		case o.ClusterName == "" && o.ClusterSelector == nil:
			return nil, fmt.Errorf("%w: overrides[%d] has neither clusterName nor clusterSelector", ErrInvalidOverride, i)
		case o.ClusterName != "":
			// The named entry is held back and appended last, wherever it is in the list:
			// the most specific entry wins however the user ordered them.
			if o.ClusterName != cluster {
				continue
			}
			if named >= 0 {
				return nil, fmt.Errorf("%w: cluster %q is named by overrides[%d] and overrides[%d]", ErrInvalidOverride, cluster, named, i)
			}
			named = i
		default:
			ok, err := matchSelector(o.ClusterSelector, labels)
			if err != nil {
				return nil, fmt.Errorf("%w: overrides[%d].clusterSelector: %v", ErrInvalidOverride, i, err)
			}
			if ok {
				out = append(out, i)
			}
		}
	}
	if named >= 0 {
		out = append(out, named)
	}
	return out, nil
}

// matchSelector evaluates a label selector as metav1.LabelSelectorAsSelector would, without
// building a labels.Selector (which allocates and sorts on every call): nil matches nothing,
// an empty selector matches everything, and malformed requirements are errors.
func matchSelector(s *metav1.LabelSelector, labels map[string]string) (bool, error) {
	if s == nil {
		return false, nil
	}
	// Every requirement is evaluated, even after a mismatch, so a malformed requirement
	// is reported whatever the labels are (as LabelSelectorAsSelector does).
	match := true
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			match = false
		}
	}
	for _, r := range s.MatchExpressions {
		got, has := labels[r.Key]
		switch r.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(r.Values) == 0 {
				return false, fmt.Errorf("values of %s %s must not be empty", r.Key, r.Operator)
			}
			in := false
			for _, v := range r.Values {
				if has && v == got {
					in = true
				}
			}
			if in != (r.Operator == metav1.LabelSelectorOpIn) {
				match = false
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				return false, fmt.Errorf("values of %s %s must be empty", r.Key, r.Operator)
			}
			if has != (r.Operator == metav1.LabelSelectorOpExists) {
				match = false
			}
		default:
			return false, fmt.Errorf("%q is not a valid label selector operator (%s, %s, %s, %s)", r.Operator,
				selection.In, selection.NotIn, selection.Exists, selection.DoesNotExist)
		}
	}
	return match, nil
}
