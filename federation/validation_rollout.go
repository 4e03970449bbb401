package federation

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/internal/labelselector"
)

// ValidateRollout checks spec.rollout: every stage chooses its clusters in exactly one way
// (names, a selector or a percentage), no cluster is named by two stages, percentages grow
// from stage to stage (a smaller one would add nothing), stage names are distinct and the
// times are in range. A nil rollout is valid.
func ValidateRollout(r *Rollout, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	names := map[string]bool{}
	clusters := map[string]bool{}
	lastPct, lastPctAt := int32(0), -1
	for i, st := range r.Stages {
		sp := path.Child("stages").Index(i)
		if st.Name != "" {
			if names[st.Name] {
				errs = append(errs, field.Duplicate(sp.Child("name"), st.Name))
			}
			names[st.Name] = true
		}
		set := 0
		if len(st.Clusters) > 0 {
			set++
		}
		if st.ClusterSelector != nil {
			set++
		}
		if st.Percentage != nil {
			set++
		}
		switch {
		case set == 0:
			errs = append(errs, field.Required(sp, "one of clusters, clusterSelector or percentage is required"))
		case set > 1:
			errs = append(errs, field.Forbidden(sp, "only one of clusters, clusterSelector and percentage may be set"))
		}
		for j, c := range st.Clusters {
			cp := sp.Child("clusters").Index(j)
			switch {
			case c == "":
				errs = append(errs, field.Required(cp, "a cluster name is required"))
			case clusters[c]:
				errs = append(errs, field.Duplicate(cp, c))
			}
			clusters[c] = true
		}
		errs = append(errs, labelselector.Validate(st.ClusterSelector, sp.Child("clusterSelector"))...)
		if p := st.Percentage; p != nil {
			pp := sp.Child("percentage")
			switch {
			case *p < 1 || *p > 100:
				errs = append(errs, field.Invalid(pp, *p, "must be in 1..100"))
			case *p <= lastPct:
				errs = append(errs, field.Invalid(pp, *p, fmt.Sprintf("must be greater than stages[%d].percentage (%d): a stage's percentage counts the earlier stages' clusters", lastPctAt, lastPct)))
			default:
				lastPct, lastPctAt = *p, i
			}
		}
		if st.MinReadySeconds < 0 {
			errs = append(errs, field.Invalid(sp.Child("minReadySeconds"), st.MinReadySeconds, "must be non-negative"))
		}
		if d := st.ProgressDeadlineSeconds; d != nil && *d < 1 {
			errs = append(errs, field.Invalid(sp.Child("progressDeadlineSeconds"), *d, "must be positive"))
		}
	}
	return errs
}

// defaultRollout names unnamed stages "stage-<n>" and sets their progressDeadlineSeconds to
// DefaultProgressDeadlineSeconds.
func defaultRollout(r *Rollout) {
	if r == nil {
		return
	}
	for i := range r.Stages {
		st := &r.Stages[i]
		if st.Name == "" {
			st.Name = "stage-" + strconv.Itoa(i+1)
		}
		if st.ProgressDeadlineSeconds == nil {
			d := DefaultProgressDeadlineSeconds
			st.ProgressDeadlineSeconds = &d
		}
	}
}
