package fake

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// writeMode says which part of an object a write may change.
type writeMode int

const (
	// writeMain is Update and Patch of the main resource: everything but system metadata, and
	// status too when the resource has no status subresource.
	writeMain writeMode = iota
	// writeStatus is UpdateStatus: only .status.
	writeStatus
	// writeAll is an external actor (Drift, the simulated controllers): spec and status.
	writeAll
)

// updateLocked replaces the stored object named by obj following mode. A resourceVersion or
// uid in obj that does not match the stored one is a Conflict; an empty resourceVersion makes
// the update unconditional.
func (c *Cluster) updateLocked(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, mode writeMode) (*unstructured.Unstructured, error) {
	in, err := normalize(obj)
	if err != nil {
		return nil, err
	}
	return c.replaceLocked(gvr, in, mode)
}

// replaceLocked is updateLocked for an object that is already a private, normalised copy.
func (c *Cluster) replaceLocked(gvr schema.GroupVersionResource, in *unstructured.Unstructured, mode writeMode) (*unstructured.Unstructured, error) {
	gr := gvr.GroupResource()
	ns, err := c.objectNamespace(gvr, in.GetNamespace())
	if err != nil {
		return nil, err
	}
	name := in.GetName()
	if name == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fake: %s: name is required", gr))
	}
	hasStatus := c.res.hasStatus(gr)
	if mode == writeStatus && !hasStatus {
		// There is no /status endpoint to call.
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/status"}, name)
	}
	old, ok := c.objects[gvr][objectKey{ns, name}]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	if rv := in.GetResourceVersion(); rv != "" && rv != old.GetResourceVersion() {
		return nil, apierrors.NewConflict(gr, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if uid := in.GetUID(); uid != "" && uid != old.GetUID() {
		return nil, apierrors.NewConflict(gr, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, old.GetUID()))
	}
	if err := checkTypeMeta(gvr, in, old.GetKind()); err != nil {
		return nil, err
	}

	var next *unstructured.Unstructured
	switch mode {
	case writeStatus:
		next = old.DeepCopy()
		copyField(next, in, "status")
	case writeMain:
		next = in
		if hasStatus {
			copyField(next, old, "status")
		}
	default:
		next = in
	}
	keepSystemMetadata(next, old)
	if err := checkDecodes(next); err != nil {
		return nil, err
	}

	if old.GetDeletionTimestamp() != nil {
		if added := newFinalizers(old, next); len(added) > 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: old.GetKind()}, name, field.ErrorList{
				field.Forbidden(field.NewPath("metadata", "finalizers"),
					fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", added)),
			})
		}
	}
	if old.GetGeneration() > 0 && specChanged(hasStatus, old, next) {
		next.SetGeneration(old.GetGeneration() + 1)
	}
	if equality.Semantic.DeepEqual(old.Object, next.Object) {
		// A no-op write: the real server stores nothing, keeps the resourceVersion and sends
		// no watch event.
		return old.DeepCopy(), nil
	}
	if old.GetDeletionTimestamp() != nil && len(next.GetFinalizers()) == 0 {
		// The last finalizer is gone: the object is deleted now.
		return c.commitLocked(gvr, watch.Deleted, next, old), nil
	}
	return c.commitLocked(gvr, watch.Modified, next, old), nil
}

// keepSystemMetadata copies the fields clients cannot change from old into next.
func keepSystemMetadata(next, old *unstructured.Unstructured) {
	next.SetNamespace(old.GetNamespace())
	next.SetName(old.GetName())
	next.SetUID(old.GetUID())
	next.SetCreationTimestamp(old.GetCreationTimestamp())
	next.SetDeletionTimestamp(old.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	next.SetResourceVersion(old.GetResourceVersion())
	if g := old.GetGeneration(); g > 0 {
		next.SetGeneration(g)
	} else {
		unstructured.RemoveNestedField(next.Object, "metadata", "generation")
	}
	if len(next.GetFinalizers()) == 0 {
		unstructured.RemoveNestedField(next.Object, "metadata", "finalizers")
	}
}

// specChanged is the real server's rule for bumping metadata.generation: it bumps when
// anything but metadata changes, and status does not count when the resource has a status
// subresource. For custom resources that is the CRD rule verbatim; for built-ins, whose
// strategies compare their desired-state fields (.spec for workloads, .webhooks for webhook
// configurations, .endpoints and .ports for EndpointSlices), it comes to the same. Label,
// annotation and other metadata changes never bump it.
func specChanged(hasStatus bool, old, next *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		m := make(map[string]any, len(u.Object))
		for k, v := range u.Object {
			switch k {
			case "metadata", "apiVersion", "kind":
				continue
			case "status":
				if hasStatus {
					continue
				}
			}
			m[k] = v
		}
		return m
	}
	return !equality.Semantic.DeepEqual(strip(old), strip(next))
}

// copyField sets dst[key] to a copy of src[key], or removes it when src has none.
func copyField(dst, src *unstructured.Unstructured, key string) {
	v, ok := src.Object[key]
	if !ok {
		delete(dst.Object, key)
		return
	}
	dst.Object[key] = runtime.DeepCopyJSONValue(v) // both objects went through normalize
}

// newFinalizers returns the finalizers of next that old does not have.
func newFinalizers(old, next *unstructured.Unstructured) []string {
	var added []string
	for _, f := range next.GetFinalizers() {
		if !slices.Contains(old.GetFinalizers(), f) {
			added = append(added, f)
		}
	}
	return added
}
