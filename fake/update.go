package fake

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// the update unconditional where the resource allows it (see unconditionalUpdate).
// The object it returns may be shared with the store.
func (c *Cluster) updateLocked(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, mode writeMode) (*unstructured.Unstructured, error) {
	in, err := normalizeFor(mode, obj)
	return c.updateNormalizedLocked(gvr, in, err, mode, nil)
}

// normalizeFor is what an update of mode takes from obj (see normalize and
// normalizeStatusWrite). It depends on obj alone: storage.Update and UpdateStatus call it
// before they take the cluster's lock.
func normalizeFor(mode writeMode, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if mode == writeStatus {
		return normalizeStatusWrite(obj)
	}
	return normalize(obj)
}

// updateNormalizedLocked is updateLocked with obj normalised already into in, or failed to
// with nerr, which is reported where the real server's order puts it. The paths of the fields
// dropped because the Go type does not have them are added to *dropped (nil: not wanted).
func (c *Cluster) updateNormalizedLocked(gvr schema.GroupVersionResource, in *unstructured.Unstructured, nerr error, mode writeMode, dropped *[]string) (*unstructured.Unstructured, error) {
	ri, err := c.servedLocked(gvr, "update")
	if err != nil {
		return nil, err
	}
	if nerr != nil {
		return nil, nerr
	}
	return c.replaceLocked(gvr, ri, in, mode, dropped)
}

// replaceLocked is updateLocked for an object that is already a private, normalised copy. Its
// result may be shared with the store. It
// follows the real server's order: the uid precondition, the resourceVersion lock, then what
// the resource's strategy prepares and validates (rest.BeforeUpdate), then the write, which
// stores nothing when nothing changed.
func (c *Cluster) replaceLocked(gvr schema.GroupVersionResource, ri resourceInfo, in *unstructured.Unstructured, mode writeMode, dropped *[]string) (*unstructured.Unstructured, error) {
	gr := gvr.GroupResource()
	ns, err := objectNamespace(ri, gvr, in.GetNamespace())
	if err != nil {
		return nil, err
	}
	name := in.GetName()
	if name == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fake: %s: name is required", gr))
	}
	hasStatus := ri.status
	if mode == writeStatus && !hasStatus {
		// There is no /status endpoint to call.
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/status"}, name)
	}
	old, ok := c.objects[gvr][objectKey{ns, name}]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	if uid := in.GetUID(); uid != "" && uid != old.GetUID() {
		//lint:ignore ST1005 kube-apiserver's message, word for word
		return nil, apierrors.NewConflict(gr, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, old.GetUID()))
	}
	if err := c.checkResourceVersion(gr, ri.crd != "", name, in, old); err != nil {
		return nil, err
	}
	if err := checkTypeMeta(gvr, in, old.GetKind()); err != nil {
		return nil, err
	}
	// What the client sent must decode, as the real server's request body must, before any
	// of the strategy's rules apply.
	unknown, err := checkDecodes(in)
	if err != nil {
		return nil, err
	}
	if dropped != nil {
		*dropped = unknown
	}

	var next *unstructured.Unstructured
	switch mode {
	case writeStatus:
		// Only the metadata of next changes from here on: the rest is shared with old,
		// which the store never mutates, and status is taken from in, a private copy.
		next = withOwnMetadata(old)
		if v, ok := in.Object["status"]; ok {
			next.Object["status"] = v
		} else {
			delete(next.Object, "status")
		}
	case writeMain:
		next = in
		if hasStatus {
			copyField(next, old, "status")
		}
	default:
		next = in
	}
	if isDaemonSet(gr) {
		if err := prepareDaemonSetUpdate(old, next); err != nil {
			return nil, err
		}
	}
	if err := prepareUpdate(gvr, ri.namespaced, next, old); err != nil {
		return nil, err
	}
	if mode != writeStatus {
		if err := prepareKind(gvr, next, old); err != nil {
			return nil, err
		}
	}
	if bumpsGeneration(generationBump(gr, ri.crd != ""), hasStatus, old, next) {
		next.SetGeneration(old.GetGeneration() + 1)
	}
	if equality.Semantic.DeepEqual(old.Object, next.Object) {
		// A no-op write: the real server stores nothing, keeps the resourceVersion and sends
		// no watch event.
		return old, nil
	}
	if old.GetDeletionTimestamp() != nil && len(next.GetFinalizers()) == 0 && (gvr != namespacesGVR() || namespaceDeletable(next)) {
		// The last finalizer is gone: the real server does not write the update but deletes
		// the stored object, so watchers get Deleted with its last stored state (a label
		// selector sees the labels it had), and the caller gets the object it sent, as
		// prepared, with the resourceVersion it had.
		c.commitLocked(gvr, watch.Deleted, old.DeepCopy(), old)
		return next, nil
	}
	return c.commitLocked(gvr, watch.Modified, next, old), nil
}

// withOwnMetadata returns a copy of obj that shares everything but its metadata with it.
func withOwnMetadata(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
	if m, ok := obj.Object["metadata"]; ok {
		out.Object["metadata"] = runtime.DeepCopyJSONValue(m)
	}
	return out
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
