package override

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonvalue"
)

// RetainFunc copies into desired the fields that the member cluster owns, from existing, the
// member object as it is now. desired shares memory with the template: write through its
// Set, Map and Remove methods (see Target), and copy maps and slices taken from existing
// before storing them. existing must not be changed. It runs before the scheduled replicas
// and the overrides are applied, so those still win over what it retains. An error fails
// the render.
type RetainFunc func(desired *Target, existing *unstructured.Unstructured) error

// Retainers is the retention table: the functions to run for each target GroupKind (the
// version does not matter). The functions under the zero GroupKind, schema.GroupKind{}, run
// for every kind, before the kind's own.
//
// There is no global registry: start from DefaultRetainers, add or replace entries, and
// pass the table in Options.Retainers:
//
//	rs := override.DefaultRetainers()
//	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
//	rs[gk] = append(rs[gk], retainWidgetEndpoint)
//	r, err := override.New(override.Options{Retainers: rs})
type Retainers map[schema.GroupKind][]RetainFunc

// DefaultRetainers returns a new table with fedkit's built-in retention:
//
//   - every kind: RetainMetadata (resourceVersion, finalizers, labels and annotations
//     added in the member);
//   - Service: RetainServiceFields (clusterIP, clusterIPs, node ports, health check node port);
//   - ServiceAccount: RetainServiceAccountSecrets;
//   - PersistentVolumeClaim: RetainVolumeName;
//   - batch Job: RetainJobSelector (selector and controller-uid / job-name labels).
//
// Retaining spec.replicas for Input.RetainReplicas is a step of Render, not a table entry,
// and so is retaining the fields a kind's type configuration declares the member's
// (federation.KindRules.Retain, for kinds without Go code), after the table's functions.
func DefaultRetainers() Retainers {
	return Retainers{
		{}:                              {RetainMetadata}, // every kind
		{Kind: "Service"}:               {RetainServiceFields},
		{Kind: "ServiceAccount"}:        {RetainServiceAccountSecrets},
		{Kind: "PersistentVolumeClaim"}: {RetainVolumeName},
		{Group: "batch", Kind: "Job"}:   {RetainJobSelector},
	}
}

// builtinRetainers is DefaultRetainers' lookup without building the map (for the zero
// Renderer).
func builtinRetainers(gk schema.GroupKind, fns []RetainFunc) []RetainFunc {
	fns = append(fns, RetainMetadata)
	switch gk {
	case schema.GroupKind{Kind: "Service"}:
		fns = append(fns, RetainServiceFields)
	case schema.GroupKind{Kind: "ServiceAccount"}:
		fns = append(fns, RetainServiceAccountSecrets)
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		fns = append(fns, RetainVolumeName)
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		fns = append(fns, RetainJobSelector)
	}
	return fns
}

// lookup returns the functions for gk: those for every kind, then gk's.
func (rs Retainers) lookup(gk schema.GroupKind, fns []RetainFunc) []RetainFunc {
	fns = append(fns, rs[schema.GroupKind{}]...)
	if gk != (schema.GroupKind{}) {
		fns = append(fns, rs[gk]...)
	}
	return fns
}

// validate checks that no function is nil.
func (rs Retainers) validate() error {
	for gk, fns := range rs {
		for i, f := range fns {
			if f == nil {
				return fmt.Errorf("%w: Retainers[%v][%d] is nil", ErrInvalidInput, gk, i)
			}
		}
	}
	return nil
}

// bookkeeping reports whether a label or annotation key is one fedkit writes on every render;
// retention leaves these to the render.
func bookkeeping(key string) bool {
	switch key {
	case federation.ManagedByLabel, federation.FederatedNameLabel, federation.FederatedNamespaceLabel,
		federation.RevisionAnnotation, federation.DesiredHashAnnotation,
		federation.ManagedLabelsAnnotation, federation.ManagedAnnotationsAnnotation, federation.ManagedFinalizersAnnotation:
		return true
	}
	return false
}

// RetainMetadata keeps what the member cluster owns in metadata:
//
//   - resourceVersion, so that the update is an optimistic-locking update of the object
//     that was read;
//   - finalizers: the member's, then any the template adds. One the federation set on the
//     previous render (listed in federation.ManagedFinalizersAnnotation) that the template
//     no longer sets is dropped, so removing a finalizer from the template removes it from
//     the members;
//   - labels and annotations that member controllers added. A key the template sets keeps
//     the template's value. A key the federation set on the previous render (listed in
//     federation.ManagedLabelsAnnotation / ManagedAnnotationsAnnotation) and that is no
//     longer desired is dropped, not retained, so removing a key from the template removes
//     it from the members.
func RetainMetadata(desired *Target, existing *unstructured.Unstructured) error {
	meta, _ := existing.Object["metadata"].(map[string]any)
	if meta == nil {
		return nil
	}
	dmeta, err := desired.Map("metadata")
	if err != nil {
		return err
	}
	if rv, ok := meta["resourceVersion"].(string); ok && rv != "" {
		dmeta["resourceVersion"] = rv
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if fins, _ := meta["finalizers"].([]any); len(fins) > 0 {
		managed, _ := annotations[federation.ManagedFinalizersAnnotation].(string)
		tmpl, _ := dmeta["finalizers"].([]any)
		out := make([]any, 0, len(fins)+len(tmpl))
		for _, f := range fins {
			if s, ok := f.(string); ok && listed(managed, s) && !containsValue(tmpl, f) {
				continue // the federation's, and no longer desired
			}
			out = append(out, f)
		}
		for _, f := range tmpl {
			if !containsValue(out, f) {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			dmeta["finalizers"] = out
		} else {
			delete(dmeta, "finalizers")
		}
	}
	managedLabels, _ := annotations[federation.ManagedLabelsAnnotation].(string)
	managedAnnotations, _ := annotations[federation.ManagedAnnotationsAnnotation].(string)
	if err := retainKeys(desired, meta, "labels", managedLabels); err != nil {
		return err
	}
	return retainKeys(desired, meta, "annotations", managedAnnotations)
}

// retainKeys copies member-added keys of the string map meta[field] into the desired
// object's metadata[field].
func retainKeys(desired *Target, meta map[string]any, field, managed string) error {
	member, _ := meta[field].(map[string]any)
	if len(member) == 0 {
		return nil
	}
	current, _ := desired.Get("metadata", field)
	cur, _ := current.(map[string]any)
	var out map[string]any // writable, once a key is retained
	for k, v := range member {
		if _, set := cur[k]; set || bookkeeping(k) || listed(managed, k) {
			continue
		}
		if out == nil {
			m, err := desired.Map("metadata", field)
			if err != nil {
				return err
			}
			out = m
		}
		out[k] = v
	}
	return nil
}

// listed reports whether key is an element of the comma-separated list.
func listed(list, key string) bool {
	for list != "" {
		var item string
		item, list, _ = strings.Cut(list, ",")
		if item == key {
			return true
		}
	}
	return false
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if jsonvalue.Equal(x, v) {
			return true
		}
	}
	return false
}

// Target is the object being rendered, as retain functions see it. Render builds member
// objects copy-on-write over the template, so the object shares every container it has not
// changed with Input.Template: a retain function reads with Get and Object, writes with Set,
// Map and Remove, which copy only the containers on the written path, and never changes a
// value it read in place.
type Target struct {
	e    *editor
	root map[string]any
}

// Object returns the object's content for reading. Do not change it in place.
func (t *Target) Object() map[string]any { return t.root }

// Get returns the value at the nested field path, and whether it exists. Do not change the
// value in place; Set a new one.
func (t *Target) Get(fields ...string) (any, bool) {
	var cur any = t.root
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[f]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Set stores value at the nested field path, creating the objects on the way. value becomes
// part of the object: it must not be shared with anything the caller changes later (copy
// what comes from the existing object unless it is a string, number or bool). It fails when
// a field on the way holds something other than an object.
func (t *Target) Set(value any, fields ...string) error {
	if len(fields) == 0 {
		return fmt.Errorf("%w: Target.Set needs a field path", ErrInvalidInput)
	}
	m, err := t.e.ownChild(t.root, fields[:len(fields)-1]...)
	if err != nil {
		return err
	}
	m[fields[len(fields)-1]] = value
	return nil
}

// Map returns the object at the nested field path, writable (a copy when it was shared),
// creating it and the objects on the way when absent. It fails when a field on the way
// holds something other than an object.
func (t *Target) Map(fields ...string) (map[string]any, error) {
	return t.e.ownChild(t.root, fields...)
}

// Remove deletes the field at the nested path; a missing field is not an error.
func (t *Target) Remove(fields ...string) error {
	if len(fields) == 0 {
		return nil
	}
	if _, ok := t.Get(fields...); !ok {
		return nil
	}
	m, err := t.e.ownChild(t.root, fields[:len(fields)-1]...)
	if err != nil {
		return err
	}
	delete(m, fields[len(fields)-1])
	return nil
}

// retainDeclared keeps the fields a kind's type configuration declares the member's
// (federation.KindRules.Retain, dotted paths such as spec.clusterIP): each one the member
// object has is copied into desired, over the template's. A path the member object lacks
// is left to the template.
func retainDeclared(desired *Target, existing *unstructured.Unstructured, t federation.TypeConfig) error {
	if t.Rules == nil {
		return nil
	}
	for _, p := range t.Rules.Retain {
		fields := strings.Split(p, ".")
		v, ok, _ := unstructured.NestedFieldNoCopy(existing.Object, fields...)
		if !ok {
			continue
		}
		if err := desired.Set(deepCopyValue(v), fields...); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
