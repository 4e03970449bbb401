package federation

import (
	"fmt"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/internal/labelselector"
)

// Limits of [Autoscale]'s behavior, an HPA's.
const (
	// MaxStabilizationWindowSeconds is the longest stabilization window.
	MaxStabilizationWindowSeconds int32 = 3600
	// MaxPolicyPeriodSeconds is the longest period of a scaling policy.
	MaxPolicyPeriodSeconds int32 = 1800
)

// ValidateAutoscale checks a preference's spec.autoscale by the rules the API server applies
// to an HPA's spec, and a few of the fleet's: a nil a is valid. Paths are rooted at path.
//
// Each metric has exactly the source its type names, and a target of a type that source
// can have: Utilization (averageUtilization) for Resource and ContainerResource only,
// AverageValue (averageValue) for every source, Value (value) for Object and External only,
// each with the field its type names, positive. minReplicas 0 needs an Object or External
// metric (the only ones reported while no pod runs). Behavior's windows are 0 to 3600
// seconds, its policies have a positive value and a period of 1 to 1800 seconds, and
// selectPolicy is Max, Min or Disabled.
func ValidateAutoscale(a *Autoscale, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if a.Mode != "" && !slices.Contains(AutoscaleModes(), a.Mode) {
		errs = append(errs, field.NotSupported(path.Child("mode"), a.Mode, AutoscaleModes()))
	}
	lo := DefaultAutoscaleMinReplicas
	if a.MinReplicas != nil {
		lo = *a.MinReplicas
	}
	switch {
	case lo < 0:
		errs = append(errs, field.Invalid(path.Child("minReplicas"), lo, "must be non-negative"))
	case lo == 0 && !slices.ContainsFunc(a.Metrics, reportsWithoutPods):
		errs = append(errs, field.Invalid(path.Child("minReplicas"), lo, "0 needs an Object or External metric: pods that do not run report nothing"))
	}
	if a.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), a.MaxReplicas, "must be at least 1"))
	} else if a.MaxReplicas < lo {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), a.MaxReplicas, fmt.Sprintf("must not be less than minReplicas (%d)", lo)))
	}
	for i := range a.Metrics {
		errs = append(errs, ValidateMetricSpec(a.Metrics[i], path.Child("metrics").Index(i))...)
	}
	if b := a.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, path.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, path.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func reportsWithoutPods(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType
}

// metricSource is what validation knows of one metric source type: whether the spec has it,
// and the checks of its fields.
type metricSource struct {
	field   string
	present func(autoscalingv2.MetricSpec) bool
	check   func(autoscalingv2.MetricSpec, *field.Path) field.ErrorList
	targets []autoscalingv2.MetricTargetType
}

// metricSources is the table of the five metric source types, in the order of the API.
var metricSources = map[autoscalingv2.MetricSourceType]metricSource{
	autoscalingv2.ObjectMetricSourceType: {
		field: "object", present: func(m autoscalingv2.MetricSpec) bool { return m.Object != nil },
		check:   func(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList { return checkObject(m.Object, p) },
		targets: []autoscalingv2.MetricTargetType{autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType},
	},
	autoscalingv2.PodsMetricSourceType: {
		field: "pods", present: func(m autoscalingv2.MetricSpec) bool { return m.Pods != nil },
		check: func(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
			return checkIdentifier(m.Pods.Metric, p.Child("metric"))
		},
		targets: []autoscalingv2.MetricTargetType{autoscalingv2.AverageValueMetricType},
	},
	autoscalingv2.ResourceMetricSourceType: {
		field: "resource", present: func(m autoscalingv2.MetricSpec) bool { return m.Resource != nil },
		check: func(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
			return checkResourceName(string(m.Resource.Name), p)
		},
		targets: []autoscalingv2.MetricTargetType{autoscalingv2.UtilizationMetricType, autoscalingv2.AverageValueMetricType},
	},
	autoscalingv2.ContainerResourceMetricSourceType: {
		field: "containerResource", present: func(m autoscalingv2.MetricSpec) bool { return m.ContainerResource != nil },
		check: func(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
			return checkContainerResource(m.ContainerResource, p)
		},
		targets: []autoscalingv2.MetricTargetType{autoscalingv2.UtilizationMetricType, autoscalingv2.AverageValueMetricType},
	},
	autoscalingv2.ExternalMetricSourceType: {
		field: "external", present: func(m autoscalingv2.MetricSpec) bool { return m.External != nil },
		check: func(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
			return checkIdentifier(m.External.Metric, p.Child("metric"))
		},
		targets: []autoscalingv2.MetricTargetType{autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType},
	},
}

// metricSourceTypes lists the source types in the API's order, for messages.
var metricSourceTypes = []autoscalingv2.MetricSourceType{
	autoscalingv2.ObjectMetricSourceType, autoscalingv2.PodsMetricSourceType, autoscalingv2.ResourceMetricSourceType,
	autoscalingv2.ContainerResourceMetricSourceType, autoscalingv2.ExternalMetricSourceType,
}

// ValidateMetricSpec checks one autoscaling/v2 metric: its type, that it populates the source
// of that type and no other, the source's fields and its target.
func ValidateMetricSpec(m autoscalingv2.MetricSpec, path *field.Path) field.ErrorList {
	src, ok := metricSources[m.Type]
	if !ok {
		return field.ErrorList{field.NotSupported(path.Child("type"), m.Type, metricSourceTypes)}
	}
	var errs field.ErrorList
	for _, t := range metricSourceTypes {
		if other := metricSources[t]; t != m.Type && other.present(m) {
			errs = append(errs, field.Forbidden(path.Child(other.field), fmt.Sprintf("a metric of type %s populates %s only", m.Type, src.field)))
		}
	}
	if !src.present(m) {
		return append(errs, field.Required(path.Child(src.field), fmt.Sprintf("a metric of type %s needs it", m.Type)))
	}
	p := path.Child(src.field)
	errs = append(errs, src.check(m, p)...)
	return append(errs, checkTarget(targetOf(m), src.targets, p.Child("target"))...)
}

// targetOf returns m's target; m has the source of its type.
func targetOf(m autoscalingv2.MetricSpec) autoscalingv2.MetricTarget {
	switch m.Type {
	case autoscalingv2.ObjectMetricSourceType:
		return m.Object.Target
	case autoscalingv2.PodsMetricSourceType:
		return m.Pods.Target
	case autoscalingv2.ResourceMetricSourceType:
		return m.Resource.Target
	case autoscalingv2.ContainerResourceMetricSourceType:
		return m.ContainerResource.Target
	}
	return m.External.Target
}

// checkTarget checks that the target's type is one of allowed and sets the field it names,
// positive.
func checkTarget(t autoscalingv2.MetricTarget, allowed []autoscalingv2.MetricTargetType, path *field.Path) field.ErrorList {
	if !slices.Contains(allowed, t.Type) {
		return field.ErrorList{field.NotSupported(path.Child("type"), t.Type, allowed)}
	}
	switch t.Type {
	case autoscalingv2.UtilizationMetricType:
		if t.AverageUtilization == nil || *t.AverageUtilization < 1 {
			return field.ErrorList{field.Required(path.Child("averageUtilization"), "a Utilization target needs a percentage of the requests, at least 1")}
		}
	case autoscalingv2.AverageValueMetricType:
		return positive(t.AverageValue, path.Child("averageValue"), "an AverageValue target")
	case autoscalingv2.ValueMetricType:
		return positive(t.Value, path.Child("value"), "a Value target")
	}
	return nil
}

func positive(q *resource.Quantity, path *field.Path, what string) field.ErrorList {
	switch {
	case q == nil:
		return field.ErrorList{field.Required(path, what+" needs it")}
	case q.Sign() != 1:
		return field.ErrorList{field.Invalid(path, q.String(), "must be positive")}
	}
	return nil
}

func checkResourceName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path.Child("name"), "the resource: cpu, memory, ...")}
	}
	return nil
}

func checkContainerResource(c *autoscalingv2.ContainerResourceMetricSource, path *field.Path) field.ErrorList {
	errs := checkResourceName(string(c.Name), path)
	if c.Container == "" {
		return append(errs, field.Required(path.Child("container"), "the container whose usage counts"))
	}
	for _, msg := range validation.IsDNS1123Label(c.Container) {
		errs = append(errs, field.Invalid(path.Child("container"), c.Container, msg))
	}
	return errs
}

func checkObject(o *autoscalingv2.ObjectMetricSource, path *field.Path) field.ErrorList {
	errs := checkIdentifier(o.Metric, path.Child("metric"))
	ref := path.Child("describedObject")
	if o.DescribedObject.Kind == "" {
		errs = append(errs, field.Required(ref.Child("kind"), "the kind of the object the metric describes"))
	}
	if o.DescribedObject.Name == "" {
		errs = append(errs, field.Required(ref.Child("name"), "the name of the object the metric describes"))
	}
	return errs
}

func checkIdentifier(id autoscalingv2.MetricIdentifier, path *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(path.Child("name"), "the metric's name")}
	}
	var errs field.ErrorList
	if id.Name == "." || id.Name == ".." || strings.ContainsAny(id.Name, "/%") {
		errs = append(errs, field.Invalid(path.Child("name"), id.Name, "must be a path segment: no '/', '%', '.' or '..'"))
	}
	return append(errs, labelselector.Validate(id.Selector, path.Child("selector"))...)
}

// validateScalingRules checks one direction's behavior; nil is valid (defaulted).
func validateScalingRules(r *autoscalingv2.HPAScalingRules, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > MaxStabilizationWindowSeconds) {
		errs = append(errs, field.Invalid(path.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be 0 to %d", MaxStabilizationWindowSeconds)))
	}
	selects := []autoscalingv2.ScalingPolicySelect{autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect}
	if s := r.SelectPolicy; s != nil && !slices.Contains(selects, *s) {
		errs = append(errs, field.NotSupported(path.Child("selectPolicy"), *s, selects))
	}
	if r.Policies != nil && len(r.Policies) == 0 {
		errs = append(errs, field.Required(path.Child("policies"), "at least one policy (leave the field out for the default ones)"))
	}
	for i, p := range r.Policies {
		errs = append(errs, validateScalingPolicy(p, path.Child("policies").Index(i))...)
	}
	if t := r.Tolerance; t != nil && t.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("tolerance"), t.String(), "must be non-negative"))
	}
	return errs
}

func validateScalingPolicy(p autoscalingv2.HPAScalingPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	types := []autoscalingv2.HPAScalingPolicyType{autoscalingv2.PodsScalingPolicy, autoscalingv2.PercentScalingPolicy}
	if !slices.Contains(types, p.Type) {
		errs = append(errs, field.NotSupported(path.Child("type"), p.Type, types))
	}
	if p.Value <= 0 {
		errs = append(errs, field.Invalid(path.Child("value"), p.Value, "must be positive"))
	}
	if p.PeriodSeconds <= 0 || p.PeriodSeconds > MaxPolicyPeriodSeconds {
		errs = append(errs, field.Invalid(path.Child("periodSeconds"), p.PeriodSeconds, fmt.Sprintf("must be 1 to %d", MaxPolicyPeriodSeconds)))
	}
	return errs
}
