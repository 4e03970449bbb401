package override

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
)

// Validate is the check to run before a federated object is stored: in an admission webhook,
// in a CLI or platform API that accepts objects, in a CI job over manifests, in a dry run
// such as package preview. It finds every error the object would meet on its way to the
// member clusters, each with its field path, without touching any cluster:
//
//  1. federation.ValidateFederatedObject: the spec's own rules (placement, override paths
//     and operations, selectors, typed overriders), in [Validation].Invalid. When these
//     fail, nothing is rendered: rendering would only repeat them.
//  2. A dry-run render for every cluster in clusters, and for every cluster an override
//     names that is not among them (with no labels): what only rendering finds, because
//     it depends on the template. An override path the template does not have
//     (remove /spec/paused when the template has no paused), a value of the wrong type
//     under a path, a typed overrider naming a container the pod template lacks, an image
//     that does not parse, a replicas overrider on a type that has no replica count. These
//     are [Validation].Failures, one per field at fault and cause, with the clusters it
//     fails for.
//
// Without Validate these pass the API server, validation and the scheduler, and show up
// only when sync renders: as RenderFailed in status.clusters for those clusters, after the
// object is stored.
//
// [Validation.Errors] is the result as one field.ErrorList, each render failure once per
// field with the clusters it fails for:
// spec.overrides[1].clusterOverrides[0].path: Invalid value: "/spec/paused": clusters "eu-1",
// "eu-2": remove /spec/paused: override: path not found: no member "paused" to remove. The
// path is the raw operation at fault when one is, else the typed overrider
// (spec.overrides[0].containers) or the override entry, else spec.template (the template
// alone does not render).
//
// Every cluster is rendered, not only those the placement selects now: placement changes
// with the fleet (a cluster joins, becomes ready, gets a label), and the same override must
// render then. Rendering uses the template's replica count as the schedule (1 when unset)
// for a divisible type, as sync writes a scheduled count there, and no existing member
// object (what sync retains from one cannot make an override fail).
//
// An admission webhook turns the result into its answer with
// apierrors.NewInvalid(schema.GroupKind{...}, name, v.Errors()), a controller with
// federation.NewInvalidError(kind, key, v.Errors()). Validate is pure: the same input gives
// the same result, in the order of the clusters.
func Validate(obj *federation.FederatedObject, typ federation.TypeConfig, clusters []federation.Cluster) Validation {
	if errs := federation.ValidateFederatedObject(obj); len(errs) > 0 {
		return Validation{Invalid: errs}
	}
	if err := typ.Validate(); err != nil {
		return Validation{Invalid: field.ErrorList{field.InternalError(nil, fmt.Errorf("override: Validate: %w", err))}}
	}
	in := InputFor(obj, typ)
	in.Revision = 1
	if typ.Divisible() {
		n := templateReplicaCount(obj.Spec.Template.Object, typ)
		in.Replicas = &n
	}

	var v Validation
	var r Renderer
	targets := validationTargets(obj.Spec.Overrides, clusters)
	sh := newShared(in, len(targets)) // as RenderMembers: the entries compiled once
	for _, c := range targets {
		in.ClusterName, in.ClusterLabels = c.Name, c.Labels
		if _, err := r.render(&in, sh); err == nil {
			continue
		}
		for _, f := range r.locate(in) {
			i := slices.IndexFunc(v.Failures, func(g RenderFailure) bool { return g.Field.String() == f.Field.String() && g.Detail == f.Detail })
			if i < 0 {
				v.Failures = append(v.Failures, f)
				i = len(v.Failures) - 1
			}
			v.Failures[i].Clusters = append(v.Failures[i].Clusters, c.Name)
		}
	}
	return v
}

// Validation is what [Validate] found: plain data. A zero Validation found nothing.
type Validation struct {
	// Invalid are the object's validation errors (federation.ValidateFederatedObject), or
	// the TypeConfig's. When there are any, nothing was rendered and Failures is empty.
	Invalid field.ErrorList
	// Failures are what rendering found, in the order of the clusters that first failed.
	Failures []RenderFailure
}

// RenderFailure is one reason the object does not render, for one or more clusters: what
// sync would report as RenderFailed for each of them.
type RenderFailure struct {
	// Field is the field at fault: the raw operation's path
	// (spec.overrides[1].clusterOverrides[0].path), else the typed overrider
	// (spec.overrides[0].containers) or the override entry (spec.overrides[0]), else
	// spec.template.
	Field *field.Path
	// Value is the value at fault (a raw operation's path), field.OmitValueType{} when
	// there is none to show.
	Value any
	// Detail is the render error, naming no cluster:
	// remove /spec/paused: override: path not found: no member "paused" to remove.
	Detail string
	// Clusters are the clusters it fails for, in the order they were rendered.
	Clusters []string
}

// FieldError is the failure as one field error naming its clusters:
// Invalid value: "/spec/paused": clusters "eu-1", "eu-2": remove /spec/paused: ...
func (f RenderFailure) FieldError() *field.Error {
	who := "cluster "
	if len(f.Clusters) > 1 {
		who = "clusters "
	}
	return field.Invalid(f.Field, f.Value, who+quotedNames(f.Clusters)+": "+f.Detail)
}

// Errors returns everything v found as one list, what an admission webhook or a controller
// reports: Invalid, then each render failure's FieldError. It is empty when the object is
// valid and renders for every cluster.
func (v Validation) Errors() field.ErrorList {
	errs := slices.Clone(v.Invalid)
	for _, f := range v.Failures {
		errs = append(errs, f.FieldError())
	}
	return errs
}

// validationTargets returns clusters, then a label-less Cluster for each name an override
// entry names that is not among them, in the overrides' order.
func validationTargets(overrides []federation.ClusterOverride, clusters []federation.Cluster) []federation.Cluster {
	out := slices.Clone(clusters)
	for _, o := range overrides {
		if o.ClusterName == "" || slices.ContainsFunc(out, func(c federation.Cluster) bool { return c.Name == o.ClusterName }) {
			continue
		}
		var c federation.Cluster
		c.Name = o.ClusterName
		out = append(out, c)
	}
	return out
}

// locate finds every override at fault for one cluster that does not render: the template
// alone, or each entry (and each raw operation in it) that fails on top of the entries that
// render before it. A failing raw operation is left out and its entry tried again, so one
// entry reports each of its failing operations; any other failure leaves the whole entry out.
// The failures are in the order of spec.overrides; Clusters is left for the caller.
func (r *Renderer) locate(in Input) []RenderFailure {
	idx, err := selectFor(in.Overrides, in.ClusterName, in.ClusterLabels, nil)
	if err != nil {
		return []RenderFailure{{Field: field.NewPath("spec", "overrides"), Value: field.OmitValueType{}, Detail: err.Error()}}
	}
	all := in.Overrides
	type entry struct {
		at int // the index in spec.overrides
		o  federation.ClusterOverride
	}
	renders := func(entries []entry) error {
		sorted := slices.Clone(entries)
		slices.SortFunc(sorted, func(a, b entry) int { return a.at - b.at }) // list order: selectFor orders them again as they apply
		in.Overrides = make([]federation.ClusterOverride, len(sorted))
		for i, e := range sorted {
			in.Overrides[i] = e.o
		}
		_, err := r.render(&in, nil)
		return err
	}
	if err := renders(nil); err != nil {
		return []RenderFailure{{Field: field.NewPath("spec", "template"), Value: field.OmitValueType{}, Detail: err.Error()}}
	}
	type found struct {
		at int
		f  RenderFailure
	}
	var out []found
	var good []entry
	for _, j := range idx {
		e := entry{at: j, o: all[j]}
		e.o.ClusterOverrides = slices.Clone(e.o.ClusterOverrides)
		for {
			err := renders(append(slices.Clone(good), e))
			if err == nil {
				good = append(good, e)
				break
			}
			f, op := atFault(all[j], j, err)
			out = append(out, found{at: j, f: f})
			k := slices.IndexFunc(e.o.ClusterOverrides, func(o federation.OverrideOp) bool { return o.Path == op.Path && o.Op == op.Op })
			if op == nil || k < 0 {
				break // not a raw operation: the entry is left out
			}
			e.o.ClusterOverrides = slices.Delete(e.o.ClusterOverrides, k, k+1)
		}
	}
	if len(out) == 0 {
		// Cannot happen: every entry rendered on top of the others, so the whole list does.
		return []RenderFailure{{Field: field.NewPath("spec", "overrides"), Value: field.OmitValueType{}, Detail: "does not render"}}
	}
	// In the order of spec.overrides, as a reader goes through them; one entry's in the
	// order of its operations.
	slices.SortStableFunc(out, func(a, b found) int { return a.at - b.at })
	failures := make([]RenderFailure, len(out))
	for i, f := range out {
		failures[i] = f.f
	}
	return failures
}

// atFault is the failure err of entry o at index j of spec.overrides: the raw operation it
// names (returned too), else the typed overrider, else the entry.
func atFault(o federation.ClusterOverride, j int, err error) (RenderFailure, *federation.OverrideOp) {
	at := field.NewPath("spec", "overrides").Index(j)
	var pe *PathError
	if errors.As(err, &pe) {
		for k, op := range o.ClusterOverrides {
			if op.Path == pe.Path && opName(op.Op) == pe.Op {
				return RenderFailure{Field: at.Child("clusterOverrides").Index(k).Child("path"), Value: op.Path, Detail: err.Error()}, &op
			}
		}
		switch pe.Op {
		case "replicas", "images", "containers", "labels", "annotations":
			return RenderFailure{Field: at.Child(pe.Op), Value: field.OmitValueType{}, Detail: err.Error()}, nil // a typed overrider
		}
	}
	return RenderFailure{Field: at, Value: field.OmitValueType{}, Detail: err.Error()}, nil
}

// opName is an operation's name as PathError reports it: "" is replace.
func opName(op string) string {
	if op == "" {
		return "replace"
	}
	return op
}

// templateReplicaCount is the template's replica count at the type's path, 1 when unset or
// not an integer (validation reports that one).
func templateReplicaCount(template map[string]any, typ federation.TypeConfig) int64 {
	if n, ok, _ := unstructured.NestedInt64(template, typ.ReplicasFields()...); ok && n >= 0 {
		return n
	}
	return 1
}

// quotedNames returns names as "a", "b".
func quotedNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
