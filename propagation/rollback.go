package propagation

import (
	"encoding/json"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// templatePatch is the merge patch that gives native the content of template
// (federation.WithTemplate); nil when native has it. The driver locks it on the
// resourceVersion it holds.
func templatePatch(native *unstructured.Unstructured, template map[string]any) (map[string]any, error) {
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
	return m, nil
}
