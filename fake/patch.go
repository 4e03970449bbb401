package fake

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

// patchLocked applies a patch to the stored object and writes the result like Update: status
// changes are dropped for resources with a status subresource, generation follows the usual
// rules, and a metadata.resourceVersion set by the patch is a precondition (Conflict when
// stale). Errors follow the real server's patch handler: a malformed patch is a BadRequest, a
// JSON patch that cannot apply (a failed "test", a missing path) is 422 UnprocessableEntity,
// and a patch type the resource does not support is 415 UnsupportedMediaType.
func (c *Cluster) patchLocked(gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	gr := gvr.GroupResource()
	ri, err := c.servedLocked(gvr, "patch")
	if err != nil {
		return nil, err
	}
	ns, err := objectNamespace(ri, gvr, namespace)
	if err != nil {
		return nil, err
	}
	old, ok := c.objects[gvr][objectKey{ns, name}]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	if pt != types.ApplyYAMLPatchType && pt != types.ApplyCBORPatchType && !json.Valid(data) {
		return nil, apierrors.NewBadRequest("invalid JSON patch")
	}
	// The result may share with old what the patch leaves alone, except for the kinds whose
	// strategy changes more than metadata in place (see prepareKind).
	share := gvr != namespacesGVR() && gvr != crdGVR()
	next, err := applyPatch(gr, old, name, pt, data, share)
	if err != nil {
		return nil, err
	}
	// As the real patch handler: a namespace the patch removes is the request's again, one
	// set on a cluster-scoped object is dropped, and any other change of namespace or name is
	// a BadRequest (they are immutable).
	switch got := next.GetNamespace(); {
	case got == ns:
	case got == "" || ns == "":
		next.SetNamespace(ns)
	default:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if next.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", next.GetName(), name))
	}
	return c.replaceLocked(gvr, ri, next, writeMain, nil)
}

// applyPatch returns old with the patch applied, as a new object. A merge patch that is a
// JSON object is applied to the stored object's map, sharing what it leaves alone when share
// is set (see mergePatchObject); the other patches go through JSON, as the real server's patch
// handler does.
func applyPatch(gr schema.GroupResource, old *unstructured.Unstructured, name string, pt types.PatchType, data []byte, share bool) (*unstructured.Unstructured, error) {
	if pt == types.MergePatchType {
		if m, ok := mergePatchObject(old.Object, data, share); ok {
			return &unstructured.Unstructured{Object: m}, nil
		}
	}
	original, err := json.Marshal(old.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}

	var patched []byte
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if patched, err = p.Apply(original); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", gr, name, err.Error(), 0, false)
		}
	case types.MergePatchType:
		if patched, err = jsonpatch.MergePatch(original, data); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		typed, err := scheme.Scheme.New(old.GroupVersionKind())
		if err != nil {
			// Custom resources have no Go struct with patch strategies; the real server
			// refuses strategic merge patches for them the same way.
			return nil, unsupportedPatch(gr, name, pt, "strategic merge patch needs a built-in type")
		}
		if patched, err = strategicpatch.StrategicMergePatch(original, data, typed); err != nil {
			return nil, strategicPatchError(gr, name, err)
		}
	case types.ApplyYAMLPatchType, types.ApplyCBORPatchType:
		return nil, unsupportedPatch(gr, name, pt, "fake: server-side apply is not modelled; use Update, a JSON patch or a merge patch")
	default:
		return nil, unsupportedPatch(gr, name, pt, "unknown patch type")
	}

	return decodeObject(patched)
}

// unsupportedPatch is the 415 the real server answers for a content type it does not accept.
func unsupportedPatch(gr schema.GroupResource, name string, pt types.PatchType, why string) error {
	msg := fmt.Sprintf("the body of the request was in an unknown format (%s: %s) - accepted media types include: %s, %s",
		pt, why, types.JSONPatchType, types.MergePatchType)
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", gr, name, msg, 0, false)
}

// strategicPatchError maps strategicpatch errors to API errors as the real server does.
func strategicPatchError(gr schema.GroupResource, name string, err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", gr, name, err.Error(), 0, false)
	}
	return apierrors.NewBadRequest(err.Error())
}
