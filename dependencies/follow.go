package dependencies

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/placement"
)

// follow decides the federated objects of the dependencies deps: created, updated and
// deleted generated ones, the required-by-clusters annotation of the user's. What it learns
// of them (missing, refused, excluded somewhere) goes to the conditions.
func (x *decider) follow(deps []Dependency) {
	for _, kind := range []string{KindConfigMap, KindPersistentVolumeClaim, KindSecret, KindServiceAccount} {
		k := x.kind(kind)
		if k.Err != nil {
			x.errs = append(x.errs, fmt.Errorf("dependencies: list %s in %s: %w", k.Type.Federated.Kind, x.in.Namespace, k.Err))
			continue
		}
		existing := map[string]*unstructured.Unstructured{}
		for _, u := range k.Objects {
			existing[u.GetName()] = u
		}
		wanted := map[string]bool{}
		for _, dep := range deps {
			if dep.Kind == kind {
				wanted[dep.Name] = x.followOne(k.Type, dep, existing[dep.Name])
			}
		}
		for _, name := range slices.Sorted(maps.Keys(existing)) {
			if !wanted[name] {
				x.retire(k.Type, kind, existing[name])
			}
		}
	}
}

// kind is Input.Kinds[kind], with the built-in type when Input leaves the kind out.
func (x *decider) kind(kind string) Federated {
	k, ok := x.in.Kinds[kind]
	if !ok || k.Type.Federated.Kind == "" {
		k.Type = map[string]federation.TypeConfig{
			KindConfigMap: federation.ConfigMapType, KindSecret: federation.SecretType,
			KindServiceAccount: federation.ServiceAccountType, KindPersistentVolumeClaim: federation.PersistentVolumeClaimType,
		}[kind]
	}
	return k
}

// object is the host object ref, and whether it was read; one not read is asked for.
func (x *decider) object(ref Reference) (HostObject, bool) {
	o, ok := x.in.Objects[ref.String()]
	if !ok {
		x.reads.Objects = append(x.reads.Objects, Reference{Kind: ref.Kind, Name: ref.Name})
	}
	return o, ok
}

// followOne decides how dependency dep follows its workloads, given cur, its federated
// object (nil when there is none). It reports whether cur is still wanted: false makes
// [decider.retire] deal with it.
func (x *decider) followOne(typ federation.TypeConfig, dep Dependency, cur *unstructured.Unstructured) bool {
	if cur != nil && !generated(cur) {
		x.followUsers(typ, dep, cur)
		return true
	}
	o, read := x.object(dep.Reference)
	switch {
	case !read:
		return true
	case o.Err != nil:
		x.errs = append(x.errs, fmt.Errorf("dependencies: get %s %s/%s: %w", dep.Kind, x.in.Namespace, dep.Name, o.Err))
		return true
	case o.Object == nil:
		if !dep.Optional {
			x.missing[dep.String()] = true
		}
		return false
	}
	if why := x.credentials(dep.Kind, o.Object); why != "" {
		x.refused[dep.String()] = why
		return false
	}
	placed := placedIn(cur)
	clusters, kinds := x.where(typ, dep, cur, placed)
	if len(clusters) == 0 {
		return false
	}
	desired := generate(typ, o.Object, clusters, kinds)
	switch {
	case cur == nil:
		x.writes = append(x.writes, Write{Verb: Create, Type: typ, Object: desired})
	case cur.GetDeletionTimestamp() != nil:
		// The last one is still going (sync removes its member copies first): make it again
		// once it is gone.
		x.later(requeueGone)
	default:
		x.updateGenerated(typ, cur, desired, dep.Releases(federation.ReleaseClusters(cur.GetAnnotations()), placed))
	}
	return true
}

// updateGenerated gives cur, a federated object the loop generated, desired's spec and the
// clusters where its copies are released when it leaves them
// (federation.ReleaseClustersAnnotation), in one update when either changed: the release of
// a cluster is written no later than the placement that leaves it.
func (x *decider) updateGenerated(typ federation.TypeConfig, cur, desired *unstructured.Unstructured, release []string) {
	next, released := withAnnotation(cur, federation.ReleaseClustersAnnotation, federation.FormatReleaseClusters(release))
	next, kinds := withAnnotation(next, federation.RequiredByKindsAnnotation, desired.GetAnnotations()[federation.RequiredByKindsAnnotation])
	annotated := released || kinds
	respec := !apiequality.Semantic.DeepEqual(cur.Object["spec"], desired.Object["spec"])
	switch {
	case !annotated && !respec:
		return
	case !annotated:
		next = cur.DeepCopy()
	}
	if respec {
		next.Object["spec"] = desired.Object["spec"]
	}
	x.writes = append(x.writes, Write{Verb: Update, Type: typ, Object: next})
}

// followUsers decides how a dependency the user federated (cur) follows its workloads: its
// spec is the user's, the required-by-clusters annotation says where the workloads need it,
// and placement adds those clusters but for the ones its placement explicitly refuses, which
// the conditions say. A Secret that holds credentials gets no annotation: it never follows a
// workload.
func (x *decider) followUsers(typ federation.TypeConfig, dep Dependency, cur *unstructured.Unstructured) {
	was := federation.RequiredClusters(cur.GetAnnotations())
	required, kinds := x.where(typ, dep, cur, was)
	release := dep.Releases(federation.ReleaseClusters(cur.GetAnnotations()), was)
	if why := x.credentials(dep.Kind, templateOf(cur)); why != "" {
		x.refused[dep.String()] = why
		required = nil
	}
	if len(required) > 0 {
		refused, ok := x.refusedBy(cur, required)
		if !ok {
			return
		}
		if len(refused) > 0 {
			x.excluded[dep.String()] = refused
		}
	}
	x.annotate(typ, cur, required, release, kinds)
}

// where returns the clusters dependency dep goes to, given current, those it is placed in
// (or, for a user's dependency cur, required in), and the kinds of the workloads it follows:
// dep's ([Dependency.Where]), and, when kinds the loop does not run over required cur
// ([decider.unseen]), current and those kinds too (recorded in Kept).
func (x *decider) where(typ federation.TypeConfig, dep Dependency, cur *unstructured.Unstructured, current []string) ([]string, []string) {
	clusters, kinds := dep.Where(current), dep.Kinds()
	if unseen := x.unseen(cur); len(unseen) > 0 {
		if !isSubset(current, clusters) {
			x.kept = append(x.kept, Kept{Type: typ, Name: cur.GetName(), Kinds: unseen})
		}
		clusters = sortedUnion(clusters, current)
		kinds = sortedUnion(kinds, unseen)
	}
	return clusters, kinds
}

// unseen returns the kinds that required cur (a federated dependency, or nil) when it was
// last written and that the loop does not run over (Input.WorkloadKinds).
func (x *decider) unseen(cur *unstructured.Unstructured) []string {
	if cur == nil {
		return nil
	}
	var out []string
	for _, k := range federation.RequiredKinds(cur.GetAnnotations()) {
		if !slices.Contains(x.in.WorkloadKinds, k) {
			out = append(out, k)
		}
	}
	return out
}

// sortedUnion returns a and b's names, sorted, without repeats.
func sortedUnion(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// isSubset reports whether every name of a is in b.
func isSubset(a, b []string) bool {
	return !slices.ContainsFunc(a, func(s string) bool { return !slices.Contains(b, s) })
}

// refusedBy returns the clusters of required that the placement of cur, a dependency the
// user federated, explicitly refuses ([placement.Refused]), as the scheduler and sync will
// find. An object that does not decode refuses nothing here: the scheduler reports it. ok is
// false without the Clusters (asked for, or their list failed).
func (x *decider) refusedBy(cur *unstructured.Unstructured, required []string) (map[string]placement.Diagnosis, bool) {
	obj, err := federation.FederatedObjectFromUnstructured(cur)
	if err != nil {
		return nil, true
	}
	switch {
	case !x.in.FleetRead:
		x.reads.Fleet = true
		return nil, false
	case x.in.FleetErr != nil:
		x.errs = append(x.errs, fmt.Errorf("dependencies: list Clusters: %w", x.in.FleetErr))
		return nil, false
	}
	running := make([]string, 0, len(obj.Status.Clusters))
	for _, c := range obj.Status.Clusters {
		running = append(running, c.Name)
	}
	return placement.Refused(placement.Input{Placement: obj.Spec.Placement, Clusters: x.in.Fleet, Running: running, Now: x.in.Now}, required), true
}

// retire decides for cur, a federated dependency no workload needs any more (or none can
// have: it is missing, or refused). The user's loses its required-by-clusters annotation. A
// generated one is deleted, and sync removes its member copies; but one whose host object
// exists is kept, placed nowhere, when it is a FederatedPersistentVolumeClaim or lists
// clusters to release its copies in (federation.ReleaseClustersAnnotation: orphaned
// workloads there use them): sync releases those copies rather than delete them (a claim's
// data, an orphaned pod's ConfigMap, are never collateral of a move), and takes them back if
// a workload needs them there again. It goes when the host object does.
func (x *decider) retire(typ federation.TypeConfig, kind string, cur *unstructured.Unstructured) {
	release := federation.ReleaseClusters(cur.GetAnnotations())
	unseen := x.unseen(cur)
	if !generated(cur) {
		if len(unseen) > 0 {
			x.kept = append(x.kept, Kept{Type: typ, Name: cur.GetName(), Kinds: unseen})
			return
		}
		x.annotate(typ, cur, nil, release, nil)
		return
	}
	if cur.GetDeletionTimestamp() != nil {
		return
	}
	if kind == KindPersistentVolumeClaim || len(release) > 0 || len(unseen) > 0 {
		o, read := x.object(Reference{Kind: kind, Name: cur.GetName()})
		switch {
		case !read:
			return
		case o.Err != nil:
			x.errs = append(x.errs, fmt.Errorf("dependencies: get %s %s/%s: %w", kind, cur.GetNamespace(), cur.GetName(), o.Err))
			return
		case o.Object != nil && len(unseen) > 0:
			x.kept = append(x.kept, Kept{Type: typ, Name: cur.GetName(), Kinds: unseen})
			return
		case o.Object != nil:
			x.updateGenerated(typ, cur, generate(typ, o.Object, nil, nil), release)
			return
		}
	}
	x.writes = append(x.writes, Write{Verb: Delete, Type: typ, Object: cur})
}

// GateWrite is the gate.Write of w, a Delete, with the evidence retire decided it on: the
// object carries federation.GeneratedByLabel: dependencies, and a generated
// Federated<PersistentVolumeClaim> is deleted only once the host claim it was made from is
// gone (its owner's deletion).
func (w Write) GateWrite() gate.Write {
	return gate.Write{
		Verb: gate.Delete, Resource: w.Type.FederatedGVR(), Object: w.Object,
		Evidence: gate.Evidence{
			Mark:         gate.Mark{Label: federation.GeneratedByLabel, Value: federation.GeneratedByDependencies},
			OwnerDeleted: w.Type.Target.Group == "" && w.Type.Target.Kind == KindPersistentVolumeClaim,
		},
	}
}

// annotate sets (or, for no clusters, removes) the required-by-clusters and release-clusters
// annotations of a federated object the user made, in one update.
func (x *decider) annotate(typ federation.TypeConfig, u *unstructured.Unstructured, required, release, kinds []string) {
	next, changed := withAnnotation(u, federation.RequiredByClustersAnnotation, federation.FormatRequiredClusters(required))
	next, released := withAnnotation(next, federation.ReleaseClustersAnnotation, federation.FormatReleaseClusters(release))
	next, kinded := withAnnotation(next, federation.RequiredByKindsAnnotation, federation.FormatRequiredKinds(kinds))
	if changed || released || kinded {
		x.writes = append(x.writes, Write{Verb: Update, Type: typ, Object: next})
	}
}

// credentials says why the dependency obj of kind must never follow a workload
// ([federation.Credentials]: a member's credentials, a service-account token, the control
// plane's own Secrets), or "". Only Secrets are refused.
func (x *decider) credentials(kind string, obj *unstructured.Unstructured) string {
	if kind != KindSecret {
		return ""
	}
	return federation.Credentials(obj, x.in.ControlPlaneNamespace)
}

// templateOf is the member object the federated object u's template describes, as far as
// [federation.Credentials] reads it: its labels and type, in u's namespace.
func templateOf(u *unstructured.Unstructured) *unstructured.Unstructured {
	t, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	out := &unstructured.Unstructured{Object: map[string]any{}}
	if typ, ok := t["type"]; ok {
		out.Object["type"] = typ
	}
	if l, _, _ := unstructured.NestedStringMap(t, "metadata", "labels"); len(l) > 0 {
		out.SetLabels(l)
	}
	out.SetNamespace(u.GetNamespace())
	return out
}

// placedIn returns the clusters the generated object u places its dependency in; none when
// there is no u or it is being deleted (what a workload being deleted holds goes with it).
func placedIn(u *unstructured.Unstructured) []string {
	if u == nil || u.GetDeletionTimestamp() != nil {
		return nil
	}
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "placement", "clusters")
	var out []string
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			if name, ok := m["name"].(string); ok && name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// generated reports whether the dependencies loop owns u.
func generated(u *unstructured.Unstructured) bool {
	return u.GetLabels()[federation.GeneratedByLabel] == federation.GeneratedByDependencies
}

// withAnnotation returns a copy of u whose annotation key is value ("" removes it), and true;
// or u itself, and false, when it has that already.
func withAnnotation(u *unstructured.Unstructured, key, value string) (*unstructured.Unstructured, bool) {
	if u.GetAnnotations()[key] == value {
		return u, false
	}
	next := u.DeepCopy()
	ann := maps.Clone(u.GetAnnotations())
	if ann == nil {
		ann = map[string]string{}
	}
	if value == "" {
		delete(ann, key)
	} else {
		ann[key] = value
	}
	next.SetAnnotations(ann)
	return next, true
}

// generate is the federated object the loop owns for native, placed in clusters. Nobody gave
// it a placement of its own, so it follows its workloads wherever they run: it tolerates
// every taint (a workload that tolerates a tainted cluster, or is still being evicted from a
// drained one, has its dependency there). An untolerated taint would be an exclusion nobody
// asked for.
func generate(typ federation.TypeConfig, native *unstructured.Unstructured, clusters, kinds []string) *unstructured.Unstructured {
	refs := make([]any, 0, len(clusters))
	for _, c := range clusters {
		refs = append(refs, map[string]any{"name": c})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"template": federation.NativeTemplate(native),
			"placement": map[string]any{
				"clusters":    refs,
				"tolerations": []any{map[string]any{"operator": string(corev1.TolerationOpExists)}},
			},
		},
	}}
	u.SetAPIVersion(typ.Federated.GroupVersion().String())
	u.SetKind(typ.Federated.Kind)
	u.SetNamespace(native.GetNamespace())
	u.SetName(native.GetName())
	u.SetLabels(map[string]string{federation.GeneratedByLabel: federation.GeneratedByDependencies})
	if len(kinds) > 0 {
		u.SetAnnotations(map[string]string{federation.RequiredByKindsAnnotation: federation.FormatRequiredKinds(kinds)})
	}
	return u
}
