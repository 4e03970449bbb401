package scheduler

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
)

// ErrInvalidRequest is returned by [Divide] when the request cannot be planned: a negative
// total, a negative weight, maxReplicas below minReplicas, an empty or duplicate cluster name,
// a negative current or capacity, an unknown algorithm or strategy, or a combination the
// algorithm or strategy cannot honour (a Spread or Refill with KubeFed, a Spread with
// CostOptimized or Duplicated). The message names each
// offending field by its path (spec.clusters[eu].maxReplicas for a preference,
// clusters[2].name for the request's cluster list), and the error is never worth retrying.
var ErrInvalidRequest = errors.New("scheduler: invalid request")

// ErrInvalidOptions is wrapped by [New]'s error when an option is invalid (an Options.Shard
// out of range); the message names the field.
var ErrInvalidOptions = errors.New("scheduler: invalid options")

// validate returns every problem of req at once, as field errors. Without detailed, it
// first runs the allocation-free looksValid, which leaves the clusters, duplicate names and
// preferences to [Divide] (it finds them for free while it builds the candidates and the
// plan's map, and then reports them with everything else: see invalid).
func validate(req *Request, detailed bool) error {
	if !detailed && looksValid(req) {
		return nil
	}
	return fieldErrors(req, detailed)
}

// fieldErrors returns every problem of req at once, as field errors; duplicate names only
// with dups.
func fieldErrors(req *Request, dups bool) error {
	spec := field.NewPath("spec")
	errs := specErrors(req, spec)
	for name, p := range req.Preferences {
		if len(errs) > 32 {
			break // enough to act on; the map order makes the rest arbitrary anyway
		}
		errs = append(errs, federation.ValidateClusterPreferences(p, spec.Child("clusters").Key(name))...)
	}
	errs = append(errs, clusterErrors(req.Clusters, dups)...)
	if len(errs) == 0 {
		return nil
	}
	sortErrors(errs)
	return fmt.Errorf("%w: %s", ErrInvalidRequest, errs.ToAggregate().Error())
}

// specErrors returns the problems of req's own fields: the total, the algorithm, the
// strategy, the spread and the refill, and the combinations they cannot honour.
func specErrors(req *Request, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if req.TotalReplicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("totalReplicas"), req.TotalReplicas, "must be non-negative"))
	}
	errs = append(errs, federation.ValidateAlgorithm(req.Algorithm, spec.Child("algorithm"))...)
	errs = append(errs, federation.ValidateStrategy(req.Strategy, spec.Child("strategy"))...)
	kubefed := req.Algorithm == federation.AlgorithmKubeFed
	switch req.Strategy {
	case federation.StrategyCapacityWeighted, federation.StrategyCostOptimized:
		if kubefed {
			errs = append(errs, field.Invalid(spec.Child("strategy"), req.Strategy,
				"needs algorithm Webster: KubeFed's planner only knows preference weights"))
		}
	}
	if s := req.Spread; s != nil {
		errs = append(errs, spreadErrors(s, req, spec.Child("spread"))...)
	}
	if req.Refill && kubefed {
		errs = append(errs, field.Forbidden(spec.Child("refill"), "needs algorithm Webster: KubeFed's planner has no notion of a fair share to refill"))
	}
	return errs
}

// spreadErrors returns the problems of req's spread s, at sp.
func spreadErrors(s *Spread, req *Request, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case req.Algorithm == federation.AlgorithmKubeFed:
		errs = append(errs, field.Forbidden(sp, "needs algorithm Webster"))
	case req.Strategy == federation.StrategyCostOptimized || req.Strategy == federation.StrategyDuplicated:
		errs = append(errs, field.Forbidden(sp, fmt.Sprintf("needs strategy Weighted or CapacityWeighted, not %s", req.Strategy)))
	}
	if s.MinDomains < 0 {
		errs = append(errs, field.Invalid(sp.Child("minDomains"), s.MinDomains, "must be non-negative"))
	}
	if s.MaxSkew < 0 {
		errs = append(errs, field.Invalid(sp.Child("maxSkew"), s.MaxSkew, "must be non-negative"))
	}
	return errs
}

// clusterErrors returns the problems of the request's clusters, at clusters[i]: duplicate
// names only when dups (see validate).
func clusterErrors(clusters []ClusterState, dups bool) field.ErrorList {
	var errs field.ErrorList
	var seen map[string]struct{}
	if dups {
		seen = make(map[string]struct{}, len(clusters))
	}
	for i := range clusters {
		c := &clusters[i]
		cp := field.NewPath("clusters").Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(cp.Child("name"), "a cluster name is required"))
		} else if _, dup := seen[c.Name]; dup {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		if dups {
			seen[c.Name] = struct{}{}
		}
		errs = nonNegative(errs, cp.Child("current"), c.Current)
		errs = nonNegative(errs, cp.Child("capacity"), c.Capacity)
		errs = nonNegative(errs, cp.Child("cost"), c.Cost)
	}
	return errs
}

// nonNegative returns errs with an error at path when v is set and negative.
func nonNegative(errs field.ErrorList, path *field.Path, v *int64) field.ErrorList {
	if v != nil && *v < 0 {
		errs = append(errs, field.Invalid(path, *v, "must be non-negative"))
	}
	return errs
}

// invalid reports a problem Divide found on its way: the field errors, which always name it
// (the fallback only guards against the checks drifting apart). Duplicate names are among
// them only when every cluster is valid otherwise, as when the clusters were checked before
// the plan's map looked for duplicates.
func invalid(req *Request) error {
	if err := fieldErrors(req, clustersLookValid(req.Clusters)); err != nil {
		return err
	}
	return fmt.Errorf("%w: spec: a preference or cluster name is invalid", ErrInvalidRequest)
}

// looksValid is validate's fast path: a check that allocates nothing. When it says no,
// validate builds the field errors. It leaves the clusters and the preferences to
// candidates, which checks each as it reads it rather than walking them twice.
func looksValid(req *Request) bool {
	return req.TotalReplicas >= 0 && specLooksValid(req)
}

// specLooksValid is looksValid for the algorithm, the strategy, the spread and the refill.
func specLooksValid(req *Request) bool {
	var kubefed bool
	switch req.Algorithm {
	case "", federation.AlgorithmWebster:
	case federation.AlgorithmKubeFed:
		kubefed = true
	default:
		return false
	}
	switch req.Strategy {
	case "", federation.StrategyWeighted:
	case federation.StrategyCapacityWeighted:
		if kubefed {
			return false
		}
	case federation.StrategyCostOptimized:
		if kubefed || req.Spread != nil {
			return false
		}
	case federation.StrategyDuplicated:
		if req.Spread != nil {
			return false
		}
	default:
		return false
	}
	return spreadLooksValid(req.Spread, kubefed) && !(req.Refill && kubefed)
}

// spreadLooksValid is looksValid for a spread (nil: none).
func spreadLooksValid(s *Spread, kubefed bool) bool {
	return s == nil || (!kubefed && s.MinDomains >= 0 && s.MaxSkew >= 0)
}

// clustersLookValid reports whether every cluster looks valid (see clusterLooksValid).
func clustersLookValid(clusters []ClusterState) bool {
	for i := range clusters {
		if !clusterLooksValid(&clusters[i]) {
			return false
		}
	}
	return true
}

// clusterLooksValid is the allocation-free check of one cluster: a name, and no negative
// number. Duplicate names are found as the plan's map is built.
func clusterLooksValid(c *ClusterState) bool {
	return c.Name != "" && (c.Current == nil || *c.Current >= 0) && (c.Capacity == nil || *c.Capacity >= 0) && (c.Cost == nil || *c.Cost >= 0)
}

// goodPreference is the allocation-free form of federation.ValidateClusterPreferences.
func goodPreference(p *federation.ClusterPreferences) bool {
	return p.Weight >= 0 && (p.MinReplicas == nil || *p.MinReplicas >= 0) && (p.MaxReplicas == nil || *p.MaxReplicas >= 0) &&
		(p.MinReplicas == nil || p.MaxReplicas == nil || *p.MaxReplicas >= *p.MinReplicas)
}

// sortErrors orders errors by field path, so the message does not depend on map order.
func sortErrors(errs field.ErrorList) {
	for i := 1; i < len(errs); i++ {
		for j := i; j > 0 && errs[j].Field < errs[j-1].Field; j-- {
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}
