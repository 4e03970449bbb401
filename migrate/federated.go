package migrate

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// FederatedFrom converts a Federated<Kind> of types.kubefed.io. scheduled says a
// ReplicaSchedulingPreference targets it: the /spec/replicas overrides KubeFed's scheduler
// wrote are then dropped, as fedkit's scheduler writes status.schedule instead.
//
// The result carries federation.MigratedFromAnnotation: "kubefed", so that sync adopts the
// member objects KubeFed made for it. Its kubefed.io/orphan annotation becomes
// federation.OrphanAnnotation. The template of a built-in type is checked against the type
// fedkit federates (see [templateFrom]).
func FederatedFrom(u *unstructured.Unstructured, scheduled bool) (*federation.FederatedObject, []Warning, error) {
	var in kubeFedFederated
	m, ws, err := decodeMeta(u, &in, &in.ObjectMeta, true)
	if err != nil {
		return nil, nil, err
	}
	what := describe(u)
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[federation.MigratedFromAnnotation] = federation.MigratedFromKubeFed
	f := &federation.FederatedObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: federation.TypesGroupVersion.String(), Kind: in.Kind},
		ObjectMeta: m,
	}
	var tws []Warning
	f.Spec.Template.Object, tws = templateFrom(u)
	ws = append(ws, tws...)
	if in.Spec.Placement.Clusters != nil {
		f.Spec.Placement.Clusters = make([]federation.ClusterReference, 0, len(in.Spec.Placement.Clusters))
		for _, c := range in.Spec.Placement.Clusters {
			f.Spec.Placement.Clusters = append(f.Spec.Placement.Clusters, federation.ClusterReference{Name: c.Name})
		}
	}
	f.Spec.Placement.ClusterSelector = in.Spec.Placement.ClusterSelector
	if scheduled && in.Spec.Placement.Clusters != nil {
		ws = append(ws, note(what, "spec.placement.clusters", "kept as found; KubeFed's scheduler wrote it from its schedule, fedkit's scheduler does not: the preference's clusters decide (with intersectWithClusterSelector, this list does)"))
	}
	var ows []Warning
	f.Spec.Overrides, ows = overridesFrom(in, scheduled, what)
	ws = append(ws, ows...)
	if len(in.Status) > 0 && string(in.Status) != "{}" && string(in.Status) != "null" {
		ws = append(ws, note(what, "status", "not carried over: fedkit's loops recompute it"))
	}
	for _, e := range federation.ValidateFederatedObject(f) {
		ws = append(ws, loss(what, e.Field, "invalid in fedkit: "+e.ErrorBody()))
	}
	return f, ws, nil
}

// overridesFrom converts the overrides, leaving out the replica counts KubeFed's scheduler
// wrote when a preference schedules the object.
func overridesFrom(in kubeFedFederated, scheduled bool, what string) ([]federation.ClusterOverride, []Warning) {
	var out []federation.ClusterOverride
	var ws []Warning
	for i, o := range in.Spec.Overrides {
		co := federation.ClusterOverride{ClusterName: o.ClusterName}
		for j, op := range o.ClusterOverrides {
			if scheduled && op.Path == "/spec/replicas" {
				ws = append(ws, note(what, fmt.Sprintf("spec.overrides[%d].clusterOverrides[%d]", i, j), "dropped: KubeFed's scheduler wrote this replica count; fedkit's writes status.schedule"))
				continue
			}
			x := federation.OverrideOp{Op: op.Op, Path: op.Path}
			if len(op.Value) > 0 {
				x.Value = &federation.RawValue{Raw: slices.Clone(op.Value)}
			}
			co.ClusterOverrides = append(co.ClusterOverrides, x)
		}
		if len(co.ClusterOverrides) > 0 {
			out = append(out, co)
		}
	}
	return out, ws
}

// templateFrom returns u's spec.template (nil without one) as fedkit federates it. The
// template comes from u itself, where integers are still int64 (json.Unmarshal into a map
// would make them float64). For a built-in type:
//
//   - an Ingress template in the extensions/v1beta1 form KubeFed's samples use (a backend's
//     serviceName and servicePort, spec.backend, paths without pathType) is converted to the
//     networking.k8s.io/v1 form fedkit's Ingress type has, as the API server converts a
//     stored v1beta1 Ingress: a warning says so;
//   - every field the target type does not have is a loss: a member's API server would drop
//     it (federation.UnknownFields).
func templateFrom(u *unstructured.Unstructured) (map[string]any, []Warning) {
	t, ok, _ := unstructured.NestedMap(u.Object, "spec", "template")
	if !ok {
		return nil, nil
	}
	typ, builtin := federation.BuiltinTypeFor(u.GetKind())
	if !builtin || typ.Federated.Kind != u.GetKind() {
		return t, nil
	}
	what := describe(u)
	var ws []Warning
	if typ.Target == federation.IngressType.Target && ingressV1(t) {
		ws = append(ws, note(what, "spec.template.spec", "converted from extensions/v1beta1 to networking.k8s.io/v1, fedkit's Ingress type: serviceName and servicePort became service.name and service.port, backend became defaultBackend, a path without pathType got ImplementationSpecific"))
	}
	member := &unstructured.Unstructured{Object: t}
	obj := member.DeepCopy()
	obj.SetAPIVersion(typ.Target.GroupVersion().String())
	obj.SetKind(typ.Target.Kind)
	for _, p := range federation.UnknownFields(obj) {
		ws = append(ws, loss(what, "spec.template."+p, fmt.Sprintf("%s has no such field: a member's API server drops it", typ.Target.GroupKind())))
	}
	return t, ws
}
