package federation

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/internal/labelselector"
)

// ValidatePropagationPolicy checks a PropagationPolicy's spec. Paths are rooted at "spec".
// It selects in its own namespace: a selector may name that one (as Karmada's examples do),
// no other.
func ValidatePropagationPolicy(p *PropagationPolicy) field.ErrorList {
	return validatePropagationSpec(&p.Spec, false, p.Namespace, field.NewPath("spec"))
}

// ValidateClusterPropagationPolicy checks a ClusterPropagationPolicy's spec. Paths are
// rooted at "spec".
func ValidateClusterPropagationPolicy(p *ClusterPropagationPolicy) field.ErrorList {
	return validatePropagationSpec(&p.Spec, true, "", field.NewPath("spec"))
}

// ConflictResolutions returns the values spec.conflictResolution accepts besides "".
func ConflictResolutions() []ConflictResolution {
	return []ConflictResolution{ConflictAbort, ConflictOverwrite}
}

// validatePropagationSpec checks a policy's spec; namespace is a PropagationPolicy's own.
func validatePropagationSpec(s *PropagationSpec, clusterScoped bool, namespace string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(path.Child("resourceSelectors"), "at least one selector"))
	}
	for i, rs := range s.ResourceSelectors {
		errs = append(errs, validateResourceSelector(rs, clusterScoped, namespace, path.Child("resourceSelectors").Index(i))...)
	}
	errs = append(errs, ValidatePlacement(s.Placement, path.Child("placement"))...)
	errs = append(errs, ValidateOverrides(s.Overrides, path.Child("overrides"))...)
	if sc := s.Scheduling; sc != nil {
		sp := path.Child("scheduling")
		if sc.TotalReplicas != nil && *sc.TotalReplicas < 0 {
			errs = append(errs, field.Invalid(sp.Child("totalReplicas"), *sc.TotalReplicas, "must be non-negative"))
		}
		if p := sc.RebalancePeriod; p != nil && p.Duration <= 0 {
			errs = append(errs, field.Invalid(sp.Child("rebalancePeriod"), p.Duration.String(), "must be positive"))
		}
		errs = append(errs, ValidateAlgorithm(sc.Algorithm, sp.Child("algorithm"))...)
		errs = append(errs, ValidateStrategy(sc.Strategy, sp.Child("strategy"))...)
		names := make([]string, 0, len(sc.Clusters))
		for name := range sc.Clusters {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			errs = append(errs, ValidateClusterPreferences(sc.Clusters[name], sp.Child("clusters").Key(name))...)
		}
	}
	errs = append(errs, ValidateRollout(s.Rollout, path.Child("rollout"))...)
	if c := s.ConflictResolution; c != "" && !slices.Contains(ConflictResolutions(), c) {
		errs = append(errs, field.NotSupported(path.Child("conflictResolution"), c, ConflictResolutions()))
	}
	if v := s.Preemption; v != "" && v != PreemptAlways && v != PreemptNever {
		errs = append(errs, field.NotSupported(path.Child("preemption"), v, []Preemption{PreemptAlways, PreemptNever}))
	}
	if v := s.Removal; v != "" && v != PolicyRemovalOrphan && v != PolicyRemovalDelete {
		errs = append(errs, field.NotSupported(path.Child("removal"), v, []PolicyRemoval{PolicyRemovalOrphan, PolicyRemovalDelete}))
	}
	return errs
}

func validateResourceSelector(rs ResourceSelector, clusterScoped bool, namespace string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rs.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), "e.g. apps/v1"))
	} else if _, err := schema.ParseGroupVersion(rs.APIVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), rs.APIVersion, err.Error()))
	}
	if rs.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "e.g. Deployment"))
	}
	if rs.Name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(rs.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), rs.Name, msg))
		}
	}
	switch {
	case rs.Namespace == "":
	case !clusterScoped && rs.Namespace != namespace:
		errs = append(errs, field.Forbidden(path.Child("namespace"), fmt.Sprintf("a PropagationPolicy selects in its own namespace (%q) only", namespace)))
	default:
		for _, msg := range validation.IsDNS1123Label(rs.Namespace) {
			errs = append(errs, field.Invalid(path.Child("namespace"), rs.Namespace, msg))
		}
	}
	errs = append(errs, labelselector.Validate(rs.LabelSelector, path.Child("labelSelector"))...)
	return errs
}
