package override

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Input is everything Render needs to produce one member object. Render only reads it:
// Template, Overrides, ClusterLabels and Existing are never modified. The result shares no
// memory with Existing, Overrides or ClusterLabels; it does share the template's unchanged
// maps and slices (copy-on-write, see "Memory" in the package doc), so DeepCopy it before
// changing it in place.
type Input struct {
	// Key is the federated object's namespace and name, which the member object takes.
	Key federation.Key
	// Template is the federated object's spec.template: the member object without
	// apiVersion, kind, name and namespace. nil renders an object with metadata only.
	Template map[string]any
	// Overrides are the federated object's spec.overrides, for every cluster; Render picks
	// the entries for ClusterName (see ForCluster).
	Overrides []federation.ClusterOverride
	// RetainReplicas keeps the member's replica count (spec.retainReplicas, for an HPA in
	// the member cluster) instead of Replicas, when a member object exists. Ignored for a
	// type that is not divisible (Type has no ReplicasPath).
	RetainReplicas bool
	// Revision is the federated revision being rendered, written to
	// federation.RevisionAnnotation; 0 writes none.
	Revision int64

	// Type gives the target apiVersion and kind, whether it is namespaced, and where its
	// replica count lives.
	Type federation.TypeConfig

	// ClusterName and ClusterLabels identify the member cluster, for named and selector
	// overrides and for error messages.
	ClusterName   string
	ClusterLabels map[string]string

	// Replicas is the cluster's scheduled replica count (status.schedule), written at
	// Type.ReplicasPath; nil when the object is not scheduled (the template's count stays).
	// Ignored for a type that is not divisible: a ConfigMap has no replica count to set.
	Replicas *int64

	// Existing is the member object as it is now, for the fields the member owns; nil when
	// there is none.
	Existing *unstructured.Unstructured
}

// InputFor fills Key, Template, Overrides and RetainReplicas from a federated object.
// The Input refers to obj's data; Render does not modify it.
func InputFor(obj *federation.FederatedObject, typ federation.TypeConfig) Input {
	return Input{
		Key:            federation.Key{Namespace: obj.Namespace, Name: obj.Name},
		Template:       obj.Spec.Template.Object,
		Overrides:      obj.Spec.Overrides,
		RetainReplicas: obj.Spec.RetainReplicas,
		Type:           typ,
	}
}

// Options configure a Renderer. The zero value is the documented default.
type Options struct {
	// Retainers is the retention table (see Retainers). nil means DefaultRetainers(); pass
	// an empty, non-nil table to retain nothing, not even resourceVersion.
	Retainers Retainers
}

// Renderer renders member objects. It is immutable and safe for concurrent use. The zero
// Renderer is valid and uses DefaultRetainers.
type Renderer struct {
	retainers Retainers
}

// New returns a Renderer. It fails, wrapping ErrInvalidInput, when a retain function is nil.
func New(opts Options) (*Renderer, error) {
	if err := opts.Retainers.validate(); err != nil {
		return nil, err
	}
	return &Renderer{retainers: opts.Retainers}, nil
}

// Render renders in with a zero Renderer (the default retention table).
func Render(in Input) (*unstructured.Unstructured, error) {
	var r Renderer
	return r.Render(in)
}

// Render produces the member object for one cluster, in this order (see the package
// documentation for why):
//
//  1. a copy of the template, with apiVersion and kind from in.Type, name and namespace
//     from in.Key, and server-populated metadata (uid, resourceVersion, ...) removed;
//  2. retention of what the member owns, from in.Existing, through the retention table,
//     and of the replica count when in.RetainReplicas;
//  3. the scheduled replicas, for a divisible type, unless retained;
//  4. the cluster's overrides (ForCluster order; typed overriders, then raw operations);
//  5. fedkit's labels and annotations: managed-by, federated name and namespace, the
//     revision, the managed-key lists and the desired-state hash.
//
// Errors wrap the package's sentinels and name the object and cluster; those of an
// operation are *PathError values with Cluster set.
func (r *Renderer) Render(in Input) (*unstructured.Unstructured, error) {
	return r.renderWith(&in, nil)
}

func (r *Renderer) renderWith(in *Input, sh *shared) (*unstructured.Unstructured, error) {
	out, err := r.render(in, sh)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("override: render %s %s: %w", in.Type.Target.Kind, in.Key, withCluster(err, in.ClusterName))
		}
		return nil, fmt.Errorf("override: render %s %s for cluster %q: %w", in.Type.Target.Kind, in.Key, in.ClusterName, err)
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// plan is an override entry ready to apply: its raw operations are compiled once per render
// (once per object with RenderMembers) and applied to both passes.
type plan struct {
	entry *federation.ClusterOverride
	raw   *Patch
}

func (r *Renderer) render(in *Input, sh *shared) (map[string]any, error) {
	if err := in.Type.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if in.Key.Name == "" || (in.Type.Namespaced && in.Key.Namespace == "") {
		return nil, fmt.Errorf("%w: the federated object's name (and namespace, for a namespaced type) is required", ErrInvalidInput)
	}
	idx, err := selectFor(in.Overrides, in.ClusterName, in.ClusterLabels, sh)
	if err != nil {
		return nil, err
	}
	var buf [4]plan
	plans := buf[:0]
	for _, j := range idx {
		p := plan{entry: &in.Overrides[j]}
		if p.entry.Replicas != nil && !in.Type.Divisible() {
			// Checked here, where the entry's index is known, so the error names it.
			return nil, fmt.Errorf("%w: overrides[%d].replicas: %s has no replica count (its TypeConfig has no ReplicasPath)",
				ErrInvalidOverride, j, in.Type.Target.Kind)
		}
		if sh != nil && (sh.compiled[j] != nil || sh.errs[j] != nil) {
			p.raw, err = sh.compiled[j], sh.errs[j]
		} else {
			p.raw, err = Compile(in.Overrides[j].ClusterOverrides)
			if sh != nil {
				sh.compiled[j], sh.errs[j] = p.raw, err
			}
		}
		if err != nil {
			var pe *PathError
			if errors.As(err, &pe) {
				cp := *pe // the shared error must not get this cluster's name
				err = &cp
			}
			return nil, err
		}
		plans = append(plans, p)
	}
	if in.Existing == nil {
		out, err := r.pass(in, plans, nil)
		if err != nil {
			return nil, err
		}
		return out, finish(out, nil, sh.encoder())
	}
	// The desired state without retention, D, for the hash and the managed-key lists.
	d, err := r.pass(in, plans, nil)
	if err != nil {
		return nil, err
	}
	out, err := r.pass(in, plans, in.Existing)
	if err != nil {
		return nil, err
	}
	if gk := in.Type.Target.GroupKind(); gk.Group == "" && gk.Kind == "Service" {
		e := editor{shared: true}
		out = e.ownRoot(out)
		if err := pruneService(&Target{e: &e, root: out}, d); err != nil {
			return nil, err
		}
	}
	return out, finish(out, d, sh.encoder())
}

// pass runs steps 1 to 5 (without the hash), copy-on-write over the template: the new object
// shares every container no step changes with in.Template. Retention runs only when existing
// is set.
func (r *Renderer) pass(in *Input, plans []plan, existing *unstructured.Unstructured) (map[string]any, error) {
	e := editor{shared: true}
	root := e.ownRoot(in.Template)

	// 1. Identity. The apiVersion comes from the TypeConfig, so one template can be
	// rendered as another version of the kind by changing only the type.
	root["apiVersion"], root["kind"] = in.Type.Target.ToAPIVersionAndKind()
	meta, err := e.ownChild(root, "metadata")
	if err != nil {
		return nil, err
	}
	// A template copied from a live object carries the server's metadata; written to a
	// member it would make a create fail (resourceVersion) or point at another object
	// (uid). generateName would give the member object another name.
	for _, f := range [...]string{"generateName", "uid", "resourceVersion", "generation", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"} {
		delete(meta, f)
	}
	meta["name"] = in.Key.Name
	if in.Type.Namespaced {
		meta["namespace"] = in.Key.Namespace
	} else {
		delete(meta, "namespace")
	}

	// 2. Retention, only for an update: the retain functions for every kind, then the
	// kind's own. The replica count is retained here, not by a table entry, because it
	// depends on the federated object (RetainReplicas) and on the TypeConfig's path.
	replicasRetained := false
	if existing != nil {
		var err error
		if replicasRetained, err = r.retain(&Target{e: &e, root: root}, existing, in.Type, in.RetainReplicas); err != nil {
			return nil, err
		}
	}

	// 3. Scheduled replicas. Only for a divisible type: a ConfigMap, a Service or a
	// DaemonSet has no replica count, and a spec.replicas written into one would be
	// rejected or silently dropped by the member's API server (and change the hash). Not
	// when retained either: an HPA in the member owns the count then, and writing the
	// schedule would fight it on every sync.
	if in.Replicas != nil && !replicasRetained && in.Type.Divisible() {
		fields := in.Type.ReplicasFields()
		parent, err := e.ownChild(root, fields[:len(fields)-1]...)
		if err != nil {
			return nil, err
		}
		parent[fields[len(fields)-1]] = *in.Replicas
	}

	// 4. Overrides, the cluster's entries in ForCluster order.
	a := entryApplier{e: &e, replicas: replicasPointer(in.Type)}
	for i := range plans {
		if err := a.run(root, plans[i].entry, plans[i].raw); err != nil {
			return nil, err
		}
	}

	// 5. fedkit's labels and annotations (the managed-key lists and the hash are added by
	// finish, which needs the unretained object). A name longer than a label value can be
	// gets no federated-name label; members are found by name anyway.
	labels, err := e.ownChild(root, "metadata", "labels")
	if err != nil {
		return nil, err
	}
	labels[federation.ManagedByLabel] = federation.ManagedByValue
	if isLabelValue(in.Key.Name) {
		labels[federation.FederatedNameLabel] = in.Key.Name
	}
	if in.Key.Namespace != "" && isLabelValue(in.Key.Namespace) {
		labels[federation.FederatedNamespaceLabel] = in.Key.Namespace
	}
	annotations, err := e.ownChild(root, "metadata", "annotations")
	if err != nil {
		return nil, err
	}
	if in.Revision != 0 {
		annotations[federation.RevisionAnnotation] = strconv.FormatInt(in.Revision, 10)
	}
	return root, nil
}

// finish writes the managed-key lists and the hash into out. d is the desired object without
// retention (nil when out is that object). The lists come from d, not out: out also holds
// the labels retained from the member, which the federation does not manage, and listing
// them would make the next render drop them.
func finish(out, d map[string]any, enc encoder) error {
	if d == nil {
		d = out
	}
	dmeta, _ := d["metadata"].(map[string]any)
	dlabels, _ := dmeta["labels"].(map[string]any)
	dannotations, _ := dmeta["annotations"].(map[string]any)
	dfinalizers, _ := dmeta["finalizers"].([]any)
	ml, ma, mf := managedList(dlabels), managedList(dannotations), managedFinalizers(dfinalizers)
	// Step 5 made both maps (owned by this render); checked anyway, never a panic.
	meta, _ := out["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		return fmt.Errorf("%w: the rendered object has no metadata.annotations map", ErrInvalidInput)
	}
	for _, m := range [...]map[string]any{annotations, dannotations} {
		if m == nil {
			continue
		}
		setOrDelete(m, federation.ManagedLabelsAnnotation, ml)
		setOrDelete(m, federation.ManagedAnnotationsAnnotation, ma)
		setOrDelete(m, federation.ManagedFinalizersAnnotation, mf)
	}
	h, err := enc.desiredHash(d)
	if err != nil {
		return err
	}
	annotations[federation.DesiredHashAnnotation] = h
	return nil
}

// setOrDelete sets m[key], or deletes it when value is empty (an empty list is no list).
func setOrDelete(m map[string]any, key, value string) {
	if value == "" {
		delete(m, key)
	} else {
		m[key] = value
	}
}

// managedList is the sorted, comma-separated list of m's keys, fedkit's own left out.
func managedList(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !bookkeeping(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// managedFinalizers is the sorted, comma-separated list of the finalizers in fins (the
// template's), for federation.ManagedFinalizersAnnotation; "" when there are none.
func managedFinalizers(fins []any) string {
	if len(fins) == 0 {
		return ""
	}
	names := make([]string, 0, len(fins))
	for _, f := range fins {
		if s, ok := f.(string); ok && s != "" && !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// ownChild returns the map at fields under root, writable by e, creating maps as needed. A
// field on the way that holds something other than an object (metadata: "x") is an error
// rather than overwritten: the template is wrong, and guessing would hide it.
func (e *editor) ownChild(root map[string]any, fields ...string) (map[string]any, error) {
	cur := root
	for i, f := range fields {
		v := cur[f]
		var m map[string]any
		switch x := v.(type) {
		case map[string]any:
			m, _ = e.ownMap(x)
		case nil:
			m = e.register(make(map[string]any, 4))
		default:
			return nil, &PathError{Path: Pointer(fields[:i+1]...), Op: "render", Err: fmt.Errorf("%w: %s is %s, not an object", ErrPathNotFound, Pointer(fields[:i+1]...), describe(v))}
		}
		cur[f] = m // cur is writable: the root, or a map owned on the way down
		cur = m
	}
	return cur, nil
}

// isLabelValue reports whether s is a valid label value: at most 63 characters,
// alphanumerics, "-", "_" and ".", starting and ending with an alphanumeric. Names longer
// than 63 characters (DNS subdomains may have 253) get no federated-name label.
func isLabelValue(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// retain runs step 2 of Render on desired: the retention table's functions for typ's kind,
// the fields typ declares the member's, and the replica count with retainReplicas.
// replicasRetained reports whether the count was retained.
func (r *Renderer) retain(desired *Target, existing *unstructured.Unstructured, typ federation.TypeConfig, retainReplicas bool) (replicasRetained bool, err error) {
	var buf [4]RetainFunc
	fns := buf[:0]
	gk := typ.Target.GroupKind()
	if r.retainers == nil {
		fns = builtinRetainers(gk, fns)
	} else {
		fns = r.retainers.lookup(gk, fns)
	}
	for _, f := range fns {
		if err := f(desired, existing); err != nil {
			return false, fmt.Errorf("retain: %w", err)
		}
	}
	if err := retainDeclared(desired, existing, typ); err != nil {
		return false, fmt.Errorf("retain: %w", err)
	}
	if retainReplicas && typ.Divisible() {
		fields := typ.ReplicasFields()
		if v, ok, _ := unstructured.NestedFieldNoCopy(existing.Object, fields...); ok {
			if err := desired.Set(deepCopyValue(v), fields...); err != nil {
				return false, err
			}
			return true, nil
		}
	}
	return false, nil
}

// Retain returns desired, a rendered member object, with what the member owns retained
// from existing, the member object as it is now: step 2 of Render, with the same retention
// table, on an object rendered elsewhere. Package agent calls it before it writes an
// Assignment's manifest over a pull cluster's member object, so that the member keeps its
// resourceVersion, its allocated clusterIP, its controllers' labels, as in push mode.
// desired and existing are not modified; the result shares no memory with existing.
func (r *Renderer) Retain(desired, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	e := editor{shared: true}
	root := e.ownRoot(desired.Object)
	typ := federation.TypeConfig{Target: desired.GroupVersionKind()}
	if _, err := r.retain(&Target{e: &e, root: root}, existing, typ, false); err != nil {
		return nil, fmt.Errorf("override: retain %s %s/%s: %w", desired.GetKind(), desired.GetNamespace(), desired.GetName(), err)
	}
	return &unstructured.Unstructured{Object: root}, nil
}
