package fake

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The metadata rules every write of a real API server goes through (k8s.io/apiserver's
// rest.BeforeCreate and rest.BeforeUpdate, with the generic storage's resourceVersion
// check). They run the same k8s.io/apimachinery validation functions the real server runs,
// so the errors, field paths and messages are the real ones. The objects' own fields (spec,
// data, ...) are not validated: the fake has no schemas.

// validateCreate checks obj's metadata as a real server does on Create, after the name is
// generated: metadata.name follows the resource's rule (see nameRule), and labels,
// annotations (keys and a total size of 256 KiB), ownerReferences and finalizers are valid.
// It returns a 422 Invalid error, or nil.
func validateCreate(gvr schema.GroupVersionResource, namespaced bool, obj *unstructured.Unstructured) error {
	errs := apivalidation.ValidateObjectMetaAccessor(obj, namespaced, nameRule(gvr.GroupResource()), field.NewPath("metadata"))
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: obj.GetKind()}, obj.GetName(), errs)
}

// checkResourceVersion is the generic storage's optimistic lock: a set resourceVersion must
// be the stored one (else Conflict), and an empty one is allowed only where the resource
// allows unconditional updates (else 422 Invalid, whose kind the real server fills with the
// resource's plural name). Writes by other actors (Drift) always carry the stored version.
func (c *Cluster) checkResourceVersion(gr schema.GroupResource, custom bool, name string, in, old *unstructured.Unstructured) error {
	switch rv := in.GetResourceVersion(); {
	case rv == "" && !c.res.allowsUnconditionalUpdate(gr, custom):
		return apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: gr.Resource}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("resourceVersion"), uint64(0), "must be specified for an update"),
		})
	case rv != "" && rv != old.GetResourceVersion():
		return apierrors.NewConflict(gr, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return nil
}

// prepareUpdate does what rest.BeforeUpdate does to next, the object an update would store,
// given old, the stored one, and then validates next's metadata.
//
// Silently taken from old, whatever the client sent: resourceVersion (after the lock check),
// generation (bumped later by the resource's rule), creationTimestamp, a uid left empty (a
// different one is a Conflict, checked before), and a deletionTimestamp once old has one (so
// an update cannot remove or move it). deletionGracePeriodSeconds is taken from old when next
// omits it.
//
// Refused with 422 Invalid: setting a deletionTimestamp or deletionGracePeriodSeconds that
// old does not have (only Delete sets them: "field is immutable"), a new finalizer on an
// object being deleted, and invalid labels, annotations, ownerReferences or finalizers.
// name and namespace cannot differ from old's here: the fake finds old by them, as the real
// server finds it by the URL (and Patch refuses a patch that changes them).
func prepareUpdate(gvr schema.GroupVersionResource, namespaced bool, next, old *unstructured.Unstructured) error {
	next.SetResourceVersion(old.GetResourceVersion())
	next.SetNamespace(old.GetNamespace())
	next.SetName(old.GetName())
	if g := old.GetGeneration(); g != 0 {
		next.SetGeneration(g)
	} else {
		unstructured.RemoveNestedField(next.Object, "metadata", "generation")
	}
	if next.GetUID() == "" {
		next.SetUID(old.GetUID())
	}
	next.SetCreationTimestamp(old.GetCreationTimestamp())
	if old.GetDeletionTimestamp() != nil {
		next.SetDeletionTimestamp(old.GetDeletionTimestamp())
	}
	if old.GetDeletionGracePeriodSeconds() != nil && next.GetDeletionGracePeriodSeconds() == nil {
		next.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	}

	// The real server runs the create-time rules (with the path-segment name rule; the name
	// cannot change) and then the update rules.
	errs := apivalidation.ValidateObjectMetaAccessor(next, namespaced, validatePathSegmentName, field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(next, old, field.NewPath("metadata"))...)
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: old.GetKind()}, old.GetName(), dedup(errs))
	}
	if len(next.GetFinalizers()) == 0 {
		unstructured.RemoveNestedField(next.Object, "metadata", "finalizers")
	}
	return nil
}

// dedup drops repeated errors (the create-time and update-time rules both check labels and
// annotations), keeping the first of each.
func dedup(errs field.ErrorList) field.ErrorList {
	seen := map[string]bool{}
	out := errs[:0:0]
	for _, e := range errs {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}
