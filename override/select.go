package override

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/labelselector"
)

// ForCluster returns the override entries that apply to a cluster, in the order they apply:
// first every entry whose ClusterSelector matches the cluster's labels, in list order, then
// the entry whose ClusterName is the cluster. The most specific entry applies last and so
// wins where entries write the same location; among selector entries, later ones win.
//
// The result shares the entries' contents with overrides (treat it as read-only). It is an
// error, wrapping ErrInvalidOverride, when an entry names the cluster twice, has both or
// neither of ClusterName and ClusterSelector, or has an invalid selector, whatever the
// cluster's labels; ValidateOverrides in package federation reports the same problems up
// front.
//
// A selector means what metav1.LabelSelectorAsSelector makes of it, as in placement and
// validation: {} matches every cluster, and a key that is not a qualified name, a value
// that is not a label value, In or NotIn without values, Exists or DoesNotExist with
// values, or an unknown operator is an error.
func ForCluster(overrides []federation.ClusterOverride, cluster string, labels map[string]string) ([]federation.ClusterOverride, error) {
	idx, err := selectFor(overrides, cluster, labels, nil)
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
// and not another: a malformed entry fails every cluster, so a typo is seen at once. sh,
// when not nil, keeps the parsed selectors for the next cluster of the same object.
func selectFor(overrides []federation.ClusterOverride, cluster string, set map[string]string, sh *shared) ([]int, error) {
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
			sel, err := sh.selector(overrides, i)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalidOverride, err)
			}
			if sel.Matches(labels.Set(set)) {
				out = append(out, i)
			}
		}
	}
	if named >= 0 {
		out = append(out, named)
	}
	return out, nil
}

// selector parses the cluster selector of overrides[i], as placement and validation do
// (package internal/labelselector: the API machinery's meaning, an invalid selector an
// error), or returns it from sh when an earlier cluster of the object parsed it.
func (sh *shared) selector(overrides []federation.ClusterOverride, i int) (labels.Selector, error) {
	if sh != nil && (sh.selectors[i] != nil || sh.selErrs[i] != nil) {
		return sh.selectors[i], sh.selErrs[i]
	}
	sel, err := labelselector.Parse(overrides[i].ClusterSelector, field.NewPath("overrides").Index(i).Child("clusterSelector"))
	if sh != nil {
		sh.selectors[i], sh.selErrs[i] = sel, err
	}
	return sel, err
}
