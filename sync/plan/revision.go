package plan

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// Revisions. Every change of a federated object's template, overrides, placement or
// retainReplicas gets the next revision number, and the driver keeps a snapshot of each in
// the object's history (the Syncer keeps apps/v1 ControllerRevisions). What a snapshot holds,
// how it is named and what a rollback writes back are decided here, so that a staged
// rollout, a rollback and the history agree.

// Snapshot is what a revision records: the parts of the spec that define the member objects,
// as the data of the revision's ControllerRevision (encoding/json sorts map keys, so equal
// specs give equal data).
type Snapshot struct {
	Template       map[string]any               `json:"template,omitempty"`
	Overrides      []federation.ClusterOverride `json:"overrides,omitempty"`
	Placement      federation.Placement         `json:"placement"`
	RetainReplicas bool                         `json:"retainReplicas,omitempty"`
}

// SnapshotOf returns the encoded snapshot of obj's spec: its revision's data.
func SnapshotOf(obj *federation.FederatedObject) ([]byte, error) {
	return json.Marshal(Snapshot{
		Template:       obj.Spec.Template.Object,
		Overrides:      obj.Spec.Overrides,
		Placement:      obj.Spec.Placement,
		RetainReplicas: obj.Spec.RetainReplicas,
	})
}

// RevisionName is the name of the ControllerRevision of the snapshot data of the federated
// object name of kind gk: the name (cut to leave room) and a hash of the kind's group and
// kind with the snapshot, as the apps controllers name theirs. The kind is in the hash
// because two kinds can have an object of the same name with the same snapshot in one
// namespace (a FederatedDeployment and a FederatedStatefulSet made from one manifest), and
// each needs its own history.
func RevisionName(gk schema.GroupKind, name string, data []byte) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(gk.Group + "/" + gk.Kind + "\n"))
	_, _ = h.Write(data)
	return nameWithSuffix(name, strconv.FormatUint(h.Sum64(), 36))
}

// LegacyRevisionName is the name earlier versions gave a snapshot's ControllerRevision: a
// hash of the snapshot alone. A driver still finds history recorded under it.
func LegacyRevisionName(name string, data []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(data)
	return nameWithSuffix(name, strconv.FormatUint(h.Sum64(), 36))
}

// nameWithSuffix is name and suffix joined by a dash, name cut so that the whole is a valid
// object name (at most 253 characters).
func nameWithSuffix(name, suffix string) string {
	if max := 253 - 1 - len(suffix); len(name) > max {
		name = name[:max]
	}
	return name + "-" + suffix
}

// RevisionOf reads federation.RevisionAnnotation on a federated or member object: the
// revision it records, 0 when absent or malformed.
func RevisionOf(u *unstructured.Unstructured) int64 {
	n, err := strconv.ParseInt(u.GetAnnotations()[federation.RevisionAnnotation], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Restore writes a snapshot's fields into the federated object u's spec, as a rollback does:
// what runs (template, overrides, retainReplicas), and with placement the snapshot's
// placement too. The template's replica count (at replicas: the type's
// TypeConfig.ReplicasFields) stays the spec's: how many replicas run is never rolled back.
func Restore(u *unstructured.Unstructured, snap Snapshot, placement bool, replicas []string) error {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	current, _ := spec["template"].(map[string]any)
	snap.Template = RestoredTemplate(snap.Template, current, replicas)
	fields := []string{"template", "overrides", "retainReplicas"}
	if placement {
		fields = append(fields, "placement")
	} else {
		snap.Placement = federation.Placement{}
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	var values map[string]any
	if err := json.Unmarshal(data, &values); err != nil {
		return err
	}
	for _, k := range fields {
		if v, ok := values[k]; ok {
			spec[k] = v
		} else {
			delete(spec, k)
		}
	}
	u.Object["spec"] = normalizeJSON(spec)
	return nil
}

// RolledBack is the federated object u as an automated rollback (Decision.Rollback) writes
// it back: stable's template, overrides and retainReplicas restored (Restore; never the
// placement nor the replica count). An object a propagation policy generated
// (federation.GeneratedByLabel: propagation) is also marked federation.RolledBackAnnotation
// naming stable: package propagation then restores the template into the native object it is
// rendered from, instead of rendering it again from the failed revision, which would undo the
// rollback. u is not modified.
func RolledBack(u *unstructured.Unstructured, stable Revision, replicas []string) (*unstructured.Unstructured, error) {
	obj := u.DeepCopy()
	snap := Snapshot{Template: stable.Spec.Template.Object, Overrides: stable.Spec.Overrides, RetainReplicas: stable.Spec.RetainReplicas}
	if err := Restore(obj, snap, false, replicas); err != nil {
		return nil, err
	}
	if obj.GetLabels()[federation.GeneratedByLabel] == federation.GeneratedByPropagation {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[federation.RolledBackAnnotation] = strconv.FormatInt(stable.Number, 10)
		obj.SetAnnotations(ann)
	}
	return obj, nil
}

// RestoredTemplate is the template a rollback restores: tmpl, a revision's, with the replica
// count (at replicas: TypeConfig.ReplicasFields) of current, the template it replaces, or
// without one when current has none. tmpl and current are not modified.
func RestoredTemplate(tmpl, current map[string]any, replicas []string) map[string]any {
	return withReplicasOf(tmpl, current, replicas)
}

// normalizeJSON round-trips m through JSON so numbers compare alike (int vs int64 vs float64).
func normalizeJSON(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		return m
	}
	return toInt64(out).(map[string]any)
}

// toInt64 turns json.Numbers into int64 (or float64), as the API machinery decodes them.
func toInt64(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = toInt64(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = toInt64(e)
		}
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
