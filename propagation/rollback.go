package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// EventRolledBack (Warning), on a native object: sync rolled its generated object back after
// a failed rollout (spec.rollout.autoRollback), and the loop restored the revision's template
// into the native object.
const EventRolledBack = "RolledBack"

// RolledBackTemplate returns the template to restore into native when sync's automated
// rollback marked its generated object fed (federation.RolledBackAnnotation), and the
// revision it names; ok is false when there is nothing to restore. The native object must be
// the version fed was rendered from (SourceGenerationAnnotation): one changed since holds the
// user's newer word, which wins, and the next rendering drops the mark. It is pure.
func RolledBackTemplate(native, fed *unstructured.Unstructured) (template map[string]any, revision string, ok bool) {
	revision, marked := fed.GetAnnotations()[federation.RolledBackAnnotation]
	if !marked || !Generated(fed) || fed.GetDeletionTimestamp() != nil {
		return nil, "", false
	}
	if fed.GetAnnotations()[SourceGenerationAnnotation] != strconv.FormatInt(native.GetGeneration(), 10) {
		return nil, "", false
	}
	t, found, err := unstructured.NestedMap(fed.Object, "spec", "template")
	if !found || err != nil {
		return nil, "", false
	}
	return t, revision, true
}

// rollBack carries out sync's automated rollback of fed on native ([RolledBackTemplate]): it
// restores fed's template into native (federation.WithTemplate) by a merge patch locked on
// the resourceVersion read, and returns the native object as the host now has it, so the
// generated object rendered from it is the rolled-back one. Without a rollback to carry out
// it returns native as it is.
func (p *Propagator) rollBack(ctx context.Context, t federation.TypeConfig, native, fed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	template, revision, ok := RolledBackTemplate(native, fed)
	if !ok {
		return native, false, nil
	}
	data, err := templatePatch(native, template)
	if err != nil {
		return nil, false, fmt.Errorf("restore revision %s into %s %s/%s: %w", revision, t.Target.Kind, native.GetNamespace(), native.GetName(), err)
	}
	if data == nil {
		return native, false, nil // it holds the template already (a pass that stopped half way)
	}
	out, err := p.host.Patch(ctx, t.TargetGVR(), native.GetNamespace(), native.GetName(), types.MergePatchType, data)
	if err != nil {
		return nil, false, fmt.Errorf("restore revision %s into %s %s/%s: %w", revision, t.Target.Kind, native.GetNamespace(), native.GetName(), err)
	}
	p.event(ctx, out, federation.EventTypeWarning, EventRolledBack, fmt.Sprintf(
		"the rollout of %s %s failed and was rolled back (spec.rollout.autoRollback): the template of revision %s is restored into this %s",
		t.Federated.Kind, fed.GetName(), revision, t.Target.Kind))
	return out, true, nil
}

// templatePatch is the merge patch that gives native the content of template
// (federation.WithTemplate), locked on native's resourceVersion; nil when native has it.
func templatePatch(native *unstructured.Unstructured, template map[string]any) ([]byte, error) {
	from, err := json.Marshal(native.Object)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(federation.WithTemplate(native, template).Object)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = native.GetResourceVersion()
	m["metadata"] = meta
	return json.Marshal(m)
}
