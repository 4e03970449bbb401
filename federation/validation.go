package federation

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/internal/jsonpointer"
	"github.com/fedkit/fedkit/internal/labelselector"
)

// InvalidError reports that an object failed validation. It matches
// errors.Is(err, ErrInvalidObject); Errs carries each field path.
//
// +kubebuilder:object:generate=false
type InvalidError struct {
	// Kind and Key name the object.
	Kind string
	Key  Key
	// Errs are the field errors, each with its full path (spec.overrides[1].clusterName).
	Errs field.ErrorList
}

// NewInvalidError returns nil when errs is empty, else an *InvalidError.
func NewInvalidError(kind string, key Key, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Kind: kind, Key: key, Errs: errs}
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s %s is invalid: %v", e.Kind, e.Key, e.Errs.ToAggregate())
}

// Is matches ErrInvalidObject.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalidObject }

// ValidateFederatedObject checks a federated object's spec, and the name of a
// FederatedNamespace, which must be its own namespace (the one it governs). Paths are rooted
// at "spec" (at "metadata" for the name).
func ValidateFederatedObject(obj *FederatedObject) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateNamespaceName(obj)
	errs = append(errs, validateTemplate(obj.Spec.Template, spec.Child("template"))...)
	errs = append(errs, validateTemplateIdentity(obj, spec.Child("template", "metadata"))...)
	errs = append(errs, ValidatePlacement(obj.Spec.Placement, spec.Child("placement"))...)
	errs = append(errs, ValidateOverrides(obj.Spec.Overrides, spec.Child("overrides"))...)
	if l := obj.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		errs = append(errs, field.Invalid(spec.Child("revisionHistoryLimit"), *l, "must be non-negative"))
	}
	errs = append(errs, ValidateRollout(obj.Spec.Rollout, spec.Child("rollout"))...)
	return errs
}

// validateNamespaceName refuses a FederatedNamespace whose name is not its namespace: the
// member Namespace takes the federated object's name, so one in namespace "team" named
// "other-team" would govern, and when deleted delete, another team's namespace.
func validateNamespaceName(obj *FederatedObject) field.ErrorList {
	gvk := obj.GroupVersionKind()
	if gvk.Group != TypesGroupVersion.Group || gvk.Kind != NamespaceType.Federated.Kind || obj.Name == obj.Namespace {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), obj.Name,
		fmt.Sprintf("a FederatedNamespace governs the namespace it is in: its name must be %q", obj.Namespace))}
}

func validateTemplate(t RawObject, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Object == nil {
		return nil
	}
	if spec, ok := t.Object["spec"].(map[string]any); ok {
		if r, ok := spec["replicas"]; ok {
			switch n := r.(type) {
			case int64:
				if n < 0 {
					errs = append(errs, field.Invalid(path.Child("spec", "replicas"), n, "must be non-negative"))
				}
			case float64:
				errs = append(errs, field.Invalid(path.Child("spec", "replicas"), n, "must be an integer"))
			case nil:
			default:
				errs = append(errs, field.Invalid(path.Child("spec", "replicas"), r, "must be an integer"))
			}
		}
	}
	return errs
}

// validateTemplateIdentity refuses a template that names another object: the member object
// takes the federated object's name and namespace, and a template saying otherwise (another
// namespace, say) is a mistake to report, not to rewrite silently.
func validateTemplateIdentity(obj *FederatedObject, path *field.Path) field.ErrorList {
	raw, ok := obj.Spec.Template.Object["metadata"]
	if !ok || raw == nil {
		return nil
	}
	meta, ok := raw.(map[string]any)
	if !ok {
		return field.ErrorList{field.Invalid(path, raw, "must be an object")}
	}
	var errs field.ErrorList
	for _, f := range []struct{ key, want, what string }{
		{"name", obj.Name, "name"},
		{"namespace", obj.Namespace, "namespace"},
	} {
		v, ok := meta[f.key]
		if !ok || v == nil {
			continue
		}
		if s, ok := v.(string); !ok || (s != "" && s != f.want) {
			errs = append(errs, field.Invalid(path.Child(f.key), v,
				fmt.Sprintf("the member object takes the federated object's %s %q: leave it out of the template", f.what, f.want)))
		}
	}
	return errs
}

// ValidatePlacement checks cluster names, selectors, affinity, tolerations and spread
// constraints. Every spread constraint's minGroups and maxGroups act on the selected clusters
// (package placement honours them together); maxSkew acts on the replicas divided among them,
// over one topology key, so at most one constraint may set it.
func ValidatePlacement(p Placement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range p.Clusters {
		errs = append(errs, uniqueName(seen, c.Name, path.Child("clusters").Index(i).Child("name"), "cluster name is required")...)
	}
	errs = append(errs, labelselector.Validate(p.ClusterSelector, path.Child("clusterSelector"))...)
	if a := p.ClusterAffinity; a != nil {
		for i, t := range a.Preferred {
			if t.Weight < 1 || t.Weight > 100 {
				errs = append(errs, field.Invalid(path.Child("clusterAffinity", "preferred").Index(i).Child("weight"), t.Weight, "must be in 1..100"))
			}
		}
	}
	for i, t := range p.Tolerations {
		errs = append(errs, validateToleration(t, path.Child("tolerations").Index(i))...)
	}
	if p.MaxClusters != nil && *p.MaxClusters < 0 {
		errs = append(errs, field.Invalid(path.Child("maxClusters"), *p.MaxClusters, "must be non-negative"))
	}
	keys := map[string]bool{}
	skewed := -1 // the constraint that sets maxSkew
	for i, s := range p.SpreadConstraints {
		sp := path.Child("spreadConstraints").Index(i)
		switch {
		case s.TopologyKey == "":
			errs = append(errs, field.Required(sp.Child("topologyKey"), "a topology key (region, zone, provider or a label key) is required"))
		case keys[s.TopologyKey]:
			errs = append(errs, field.Duplicate(sp.Child("topologyKey"), s.TopologyKey))
		}
		keys[s.TopologyKey] = true
		if s.MinGroups < 0 {
			errs = append(errs, field.Invalid(sp.Child("minGroups"), s.MinGroups, "must be non-negative"))
		}
		if s.MaxGroups < 0 {
			errs = append(errs, field.Invalid(sp.Child("maxGroups"), s.MaxGroups, "must be non-negative"))
		}
		if s.MaxGroups > 0 && s.MinGroups > s.MaxGroups {
			errs = append(errs, field.Invalid(sp.Child("maxGroups"), s.MaxGroups, fmt.Sprintf("must not be less than minGroups (%d)", s.MinGroups)))
		}
		switch {
		case s.MaxSkew < 0:
			errs = append(errs, field.Invalid(sp.Child("maxSkew"), s.MaxSkew, "must be non-negative"))
		case s.MaxSkew > 0 && skewed >= 0:
			errs = append(errs, field.Forbidden(sp.Child("maxSkew"), fmt.Sprintf(
				"only one spread constraint may bound replicas, and spreadConstraints[%d] sets maxSkew already: replicas are divided over one topology key", skewed)))
		case s.MaxSkew > 0:
			skewed = i
		}
	}
	errs = append(errs, ValidateFailover(p.Failover, path.Child("failover"))...)
	return errs
}

// uniqueName checks one entry of a list whose names must be present and distinct: an empty
// name is Required (with detail as the message), a repeated one a Duplicate. It records name in
// seen.
func uniqueName(seen map[string]bool, name string, path *field.Path, detail string) field.ErrorList {
	defer func() { seen[name] = true }()
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, detail)}
	case seen[name]:
		return field.ErrorList{field.Duplicate(path, name)}
	}
	return nil
}

func validateToleration(t corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
	}
	if t.Key == "" && t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "must be Exists when key is empty"))
	}
	errs = append(errs, validateEffect(t.Effect, true, path.Child("effect"))...)
	if s := t.TolerationSeconds; s != nil {
		// As Kubernetes: tolerationSeconds bounds how long a NoExecute taint is tolerated.
		switch {
		case t.Effect != "" && t.Effect != corev1.TaintEffectNoExecute:
			errs = append(errs, field.Invalid(path.Child("tolerationSeconds"), *s, "only allowed with effect NoExecute (or no effect)"))
		case *s < 0:
			errs = append(errs, field.Invalid(path.Child("tolerationSeconds"), *s, "must be non-negative"))
		}
	}
	return errs
}

func validateEffect(e corev1.TaintEffect, allowEmpty bool, path *field.Path) field.ErrorList {
	switch e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	case "":
		if allowEmpty {
			return nil
		}
		return field.ErrorList{field.Required(path, "a taint effect is required")}
	}
	return field.ErrorList{field.NotSupported(path, e, []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)})}
}

// ValidateOverrides checks the override entries: each names one cluster or selects clusters,
// no cluster is named twice, ops are known, paths are JSON pointers that do not touch the
// object's identity, add/replace/test carry a value, and the typed overriders are well formed
// (see validateTypedOverrides).
//
// No location is written twice by one entry: two operations with the same path are an error,
// except a test (the RFC 6902 idiom is a test followed by a replace of the same path) and
// appends ("/-", each adds an element); a raw operation may not write a label, annotation or
// replica count that a typed overrider of the same entry writes. The same path in different
// entries is how layering works (a selector entry, then the cluster's named entry), so it is
// allowed.
func ValidateOverrides(overrides []ClusterOverride, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	named := map[string]bool{}
	for i, o := range overrides {
		op := path.Index(i)
		switch {
		case o.ClusterName == "" && o.ClusterSelector == nil:
			errs = append(errs, field.Required(op.Child("clusterName"), "either clusterName or clusterSelector is required"))
		case o.ClusterName != "" && o.ClusterSelector != nil:
			errs = append(errs, field.Forbidden(op.Child("clusterSelector"), "may not be set together with clusterName"))
		case o.ClusterName != "" && named[o.ClusterName]:
			errs = append(errs, field.Duplicate(op.Child("clusterName"), o.ClusterName))
		}
		named[o.ClusterName] = true
		errs = append(errs, labelselector.Validate(o.ClusterSelector, op.Child("clusterSelector"))...)
		errs = append(errs, validateTypedOverrides(o, op)...)
		paths := typedPaths(o)
		for j, x := range o.ClusterOverrides {
			xp := op.Child("clusterOverrides").Index(j)
			errs = append(errs, ValidateOverrideOp(x, xp)...)
			if x.Op == OpTest || strings.HasSuffix(x.Path, "/-") {
				continue
			}
			if by, dup := paths[x.Path]; dup {
				errs = append(errs, field.Duplicate(xp.Child("path"), fmt.Sprintf("%s (already written by %s)", x.Path, by)))
			}
			paths[x.Path] = xp.String()
		}
	}
	return errs
}

// ValidateOverrideOp checks one operation.
func ValidateOverrideOp(x OverrideOp, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch x.Op {
	case "", OpAdd, OpRemove, OpReplace, OpTest:
	default:
		errs = append(errs, field.NotSupported(path.Child("op"), x.Op, []string{OpAdd, OpRemove, OpReplace, OpTest}))
	}
	if err := jsonpointer.Check(x.Path); err != nil {
		errs = append(errs, field.Invalid(path.Child("path"), x.Path, err.Error()))
	} else if jsonpointer.IsIdentity(x.Path) {
		errs = append(errs, field.Forbidden(path.Child("path"), fmt.Sprintf("%s identifies the object and cannot be overridden", x.Path)))
	}
	if x.Op != OpRemove && (x.Value == nil || len(x.Value.Raw) == 0) {
		errs = append(errs, field.Required(path.Child("value"), fmt.Sprintf("a value is required for op %q", opName(x.Op))))
	}
	return errs
}

func opName(op string) string {
	if op == "" {
		return OpReplace
	}
	return op
}

// ValidateReplicaSchedulingPreference checks an RSP's spec. Paths are rooted at "spec".
func ValidateReplicaSchedulingPreference(rsp *ReplicaSchedulingPreference) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if rsp.Spec.TargetKind == "" {
		errs = append(errs, field.Required(spec.Child("targetKind"), "the federated kind to schedule, e.g. FederatedDeployment"))
	}
	if rsp.Spec.TotalReplicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("totalReplicas"), rsp.Spec.TotalReplicas, "must be non-negative"))
	}
	if p := rsp.Spec.RebalancePeriod; p != nil && p.Duration <= 0 {
		errs = append(errs, field.Invalid(spec.Child("rebalancePeriod"), p.Duration.String(), "must be positive"))
	}
	errs = append(errs, ValidateAlgorithm(rsp.Spec.Algorithm, spec.Child("algorithm"))...)
	errs = append(errs, ValidateStrategy(rsp.Spec.Strategy, spec.Child("strategy"))...)
	errs = append(errs, ValidateFailover(rsp.Spec.Failover, spec.Child("failover"))...)
	errs = append(errs, ValidateAutoscale(rsp.Spec.Autoscale, spec.Child("autoscale"))...)
	names := make([]string, 0, len(rsp.Spec.Clusters))
	for name := range rsp.Spec.Clusters {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic error order
	for _, name := range names {
		errs = append(errs, ValidateClusterPreferences(rsp.Spec.Clusters[name], spec.Child("clusters").Key(name))...)
	}
	return errs
}

// ValidateAlgorithm checks an algorithm name: "" (the default) or one of [Algorithms].
func ValidateAlgorithm(a Algorithm, path *field.Path) field.ErrorList {
	if a == "" || slices.Contains(Algorithms(), a) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, a, Algorithms())}
}

// ValidateStrategy checks a strategy name: "" (the default) or one of [Strategies].
func ValidateStrategy(s Strategy, path *field.Path) field.ErrorList {
	if s == "" || slices.Contains(Strategies(), s) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, s, Strategies())}
}

// ValidateClusterPreferences checks one cluster's bounds and weight.
func ValidateClusterPreferences(p ClusterPreferences, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.MinReplicas != nil && *p.MinReplicas < 0 {
		errs = append(errs, field.Invalid(path.Child("minReplicas"), *p.MinReplicas, "must be non-negative"))
	}
	if p.MaxReplicas != nil && *p.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), *p.MaxReplicas, "must be non-negative"))
	}
	if p.MinReplicas != nil && p.MaxReplicas != nil && *p.MaxReplicas >= 0 && *p.MaxReplicas < *p.MinReplicas {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), *p.MaxReplicas, fmt.Sprintf("must not be less than minReplicas (%d)", *p.MinReplicas)))
	}
	if p.Weight < 0 {
		errs = append(errs, field.Invalid(path.Child("weight"), p.Weight, "must be non-negative"))
	}
	return errs
}

// ValidateCluster checks a Cluster's spec: the connection rules of
// [ValidateClusterConnection], taints and cost; a pull cluster's name must leave a valid
// namespace name for [PullNamespace] (48 characters at most).
func ValidateCluster(c *Cluster) field.ErrorList {
	spec := field.NewPath("spec")
	errs := ValidateClusterConnection(&c.Spec, spec)
	if c.Spec.Pull() {
		errs = append(errs, validatePullName(c.Name)...)
	}
	for i, t := range c.Spec.Taints {
		tp := spec.Child("taints").Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(tp.Child("key"), "a taint key is required"))
		}
		errs = append(errs, validateEffect(t.Effect, false, tp.Child("effect"))...)
	}
	if c.Spec.Cost != nil && c.Spec.Cost.Sign() < 0 {
		errs = append(errs, field.Invalid(spec.Child("cost"), c.Spec.Cost.String(), "must be non-negative"))
	}
	return errs
}
