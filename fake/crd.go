package fake

import (
	"errors"
	"slices"
	"strings"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// CustomResourceDefinitions, as the apiextensions-apiserver inside kube-apiserver has them:
// the CRD strategy (defaults, the checks a fake can make without schemas), the controllers
// that establish a CRD and serve its resource, and the finalizer that deletes its objects
// when the CRD is deleted. The fake's controllers act at once.

// crdGVR is apiextensions.k8s.io/v1 CustomResourceDefinitions.
func crdGVR() schema.GroupVersionResource {
	return apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
}

// crdCleanupFinalizer is the finalizer a real server puts on a deleted CRD until its objects
// are gone.
const crdCleanupFinalizer = apiextensionsv1.CustomResourceCleanupFinalizer

// decodeCRD converts a stored CRD. Stored CRDs went through prepareCRD, so they decode.
func decodeCRD(u *unstructured.Unstructured) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd)
	return crd, err
}

// prepareCRD is the CRD strategy for a create (old nil) or an update of next: names.singular,
// names.listKind and conversion are defaulted, create sets status.storedVersions, and the spec
// must be one a real server accepts as far as serving goes (see validateCRD). The schemas are
// not checked beyond their presence.
func prepareCRD(next, old *unstructured.Unstructured) error {
	crd, err := decodeCRD(next)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	names := &crd.Spec.Names
	if names.Singular == "" {
		names.Singular = strings.ToLower(names.Kind)
	}
	if names.ListKind == "" && names.Kind != "" {
		names.ListKind = names.Kind + "List"
	}
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	var oldCRD *apiextensionsv1.CustomResourceDefinition
	if old != nil {
		if oldCRD, err = decodeCRD(old); err != nil {
			return apierrors.NewInternalError(err)
		}
	}
	if errs := validateCRD(crd, oldCRD); len(errs) > 0 {
		return apierrors.NewInvalid(apiextensionsv1.Kind("CustomResourceDefinition"), crd.Name, errs)
	}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&crd.Spec)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	next.Object["spec"] = spec
	if old == nil {
		stored := []any{}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				stored = append(stored, v.Name)
			}
		}
		next.Object["status"] = map[string]any{
			"acceptedNames":  map[string]any{"kind": "", "plural": ""},
			"storedVersions": stored,
		}
	}
	return nil
}

// validateCRD runs the real server's CRD rules that decide what is served, with its messages:
// the name is <plural>.<group>, the group a domain with a dot (and approved when it is a
// *.k8s.io or *.kubernetes.io group), the scope Namespaced or Cluster, the names set and
// valid, version names unique DNS labels with a schema each, exactly one storage version; on
// update the group and scope cannot change.
func validateCRD(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	spec, fld := crd.Spec, field.NewPath("spec")
	if crd.Name != spec.Names.Plural+"."+spec.Group {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	switch {
	case spec.Group == "":
		errs = append(errs, field.Required(fld.Child("group"), ""))
	case len(validation.IsDNS1123Subdomain(spec.Group)) > 0:
		errs = append(errs, field.Invalid(fld.Child("group"), spec.Group, strings.Join(validation.IsDNS1123Subdomain(spec.Group), ",")))
	case !strings.Contains(spec.Group, "."):
		errs = append(errs, field.Invalid(fld.Child("group"), spec.Group, "should be a domain with at least one dot"))
	}
	switch spec.Scope {
	case apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped:
	case "":
		errs = append(errs, field.Required(fld.Child("scope"), ""))
	default:
		errs = append(errs, field.NotSupported(fld.Child("scope"), spec.Scope, []string{string(apiextensionsv1.ClusterScoped), string(apiextensionsv1.NamespaceScoped)}))
	}
	storage, seen := 0, map[string]bool{}
	for i, v := range spec.Versions {
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			errs = append(errs, field.Invalid(fld.Child("versions"), v.Name, "must contain unique version names"))
		}
		seen[v.Name] = true
		if msgs := validation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("versions").Index(i).Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			errs = append(errs, field.Required(fld.Child("versions").Index(i).Child("schema", "openAPIV3Schema"), ""))
		}
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(fld.Child("versions"), len(spec.Versions), "must have exactly one version marked as storage version"))
	}
	for _, n := range []struct{ name, value string }{{"plural", spec.Names.Plural}, {"singular", spec.Names.Singular}, {"kind", spec.Names.Kind}, {"listKind", spec.Names.ListKind}} {
		if n.value == "" {
			errs = append(errs, field.Required(fld.Child("names", n.name), ""))
		}
	}
	if msgs := validation.IsDNS1035Label(spec.Names.Plural); spec.Names.Plural != "" && len(msgs) > 0 {
		errs = append(errs, field.Invalid(fld.Child("names", "plural"), spec.Names.Plural, strings.Join(msgs, ",")))
	}
	if apihelpers.IsProtectedCommunityGroup(spec.Group) {
		key := field.NewPath("metadata", "annotations").Key(apiextensionsv1.KubeAPIApprovedAnnotation)
		switch state, reason := apihelpers.GetAPIApprovalState(crd.Annotations); state {
		case apihelpers.APIApprovalMissing:
			errs = append(errs, field.Required(key, reason))
		case apihelpers.APIApprovalInvalid:
			errs = append(errs, field.Invalid(key, crd.Annotations[apiextensionsv1.KubeAPIApprovedAnnotation], reason))
		}
	}
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(spec.Group, old.Spec.Group, fld.Child("group"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(spec.Scope, old.Spec.Scope, fld.Child("scope"))...)
	}
	return errs
}

// crdResources returns the resources a stored CRD serves: one per served version.
func crdResources(u *unstructured.Unstructured) map[schema.GroupVersionResource]resourceInfo {
	crd, err := decodeCRD(u)
	if err != nil {
		return nil
	}
	out := map[schema.GroupVersionResource]resourceInfo{}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
		listKind := crd.Spec.Names.ListKind
		if listKind == "" { // a seeded CRD may lack the defaults
			listKind = crd.Spec.Names.Kind + "List"
		}
		out[gvr] = resourceInfo{
			kind:       crd.Spec.Names.Kind,
			listKind:   listKind,
			namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			status:     v.Subresources != nil && v.Subresources.Status != nil,
			verbs:      allVerbs(),
			crd:        crd.Name,
		}
	}
	return out
}

// syncCRDLocked serves what the CRD named name now serves (nothing when stored is nil) and
// ends the watches of the resources it no longer serves, as the real server tears their
// handlers down.
func (c *Cluster) syncCRDLocked(name string, stored *unstructured.Unstructured) {
	now := map[schema.GroupVersionResource]resourceInfo{}
	if stored != nil {
		now = crdResources(stored)
	}
	for gvr, ri := range c.served {
		if _, still := now[gvr]; ri.crd == name && !still {
			delete(c.served, gvr)
			for w := range c.watch {
				if w.gvr == gvr {
					w.signal()
				}
			}
		}
	}
	for gvr, ri := range now {
		if cur, ok := c.served[gvr]; !ok || cur.crd == name {
			c.served[gvr] = ri // a built-in of the same name keeps precedence
		}
	}
}

// establishLocked is the naming and establishing controllers: a CRD whose accepted names are
// not its spec's gets them, with NamesAccepted and Established conditions.
func (c *Cluster) establishLocked(name string) {
	old, ok := c.objects[crdGVR()][objectKey{"", name}]
	if !ok || old.GetDeletionTimestamp() != nil {
		return
	}
	names, _, _ := unstructured.NestedFieldCopy(old.Object, "spec", "names")
	accepted, _, _ := unstructured.NestedFieldNoCopy(old.Object, "status", "acceptedNames")
	if equality.Semantic.DeepEqual(names, accepted) && crdCondition(old, "Established") == "True" {
		return
	}
	next := old.DeepCopy()
	_ = unstructured.SetNestedField(next.Object, names, "status", "acceptedNames")
	now := c.nowLocked().UTC().Format(time.RFC3339)
	setCRDCondition(next, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now)
	if crdCondition(next, "Established") != "True" {
		setCRDCondition(next, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now)
	}
	c.commitLocked(crdGVR(), watch.Modified, next, old)
}

// deleteCRDLocked deletes a CRD as a real server does: it gets a deletionTimestamp, the
// cleanup finalizer and a Terminating condition; creates of its resource are then Forbidden;
// every object of the resource is deleted, finalizers honoured; and the CRD goes, its
// resource no longer served, once none is left.
func (c *Cluster) deleteCRDLocked(old *unstructured.Unstructured) {
	name := old.GetName()
	if old.GetDeletionTimestamp() == nil {
		next := old.DeepCopy()
		now := metav1.NewTime(c.nowLocked())
		next.SetDeletionTimestamp(&now)
		zero := int64(0)
		next.SetDeletionGracePeriodSeconds(&zero)
		next.SetFinalizers(append(next.GetFinalizers(), crdCleanupFinalizer))
		setCRDCondition(next, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", now.UTC().Format(time.RFC3339))
		c.commitLocked(crdGVR(), watch.Modified, next, old)
	}
	gr := crdGroupResource(old)
	for _, gvr := range c.storedResourcesLocked() {
		if gvr.GroupResource() != gr {
			continue
		}
		for _, obj := range c.objects[gvr] {
			c.deleteObjectLocked(gvr, obj)
		}
	}
	c.finalizeCRDLocked(name)
}

// finalizeCRDLocked removes the cleanup finalizer of a terminating CRD whose resource holds no
// object any more; the CRD is deleted when no other finalizer remains.
func (c *Cluster) finalizeCRDLocked(name string) {
	old, ok := c.objects[crdGVR()][objectKey{"", name}]
	if !ok || old.GetDeletionTimestamp() == nil || !slices.Contains(old.GetFinalizers(), crdCleanupFinalizer) {
		return
	}
	gr := crdGroupResource(old)
	for gvr, objs := range c.objects {
		if gvr.GroupResource() == gr && len(objs) > 0 {
			return
		}
	}
	next := old.DeepCopy()
	next.SetFinalizers(slices.DeleteFunc(next.GetFinalizers(), func(f string) bool { return f == crdCleanupFinalizer }))
	if len(next.GetFinalizers()) == 0 {
		c.commitLocked(crdGVR(), watch.Deleted, old.DeepCopy(), old)
		return
	}
	c.commitLocked(crdGVR(), watch.Modified, next, old)
}

// admitCustomResourceLocked refuses creates of a resource whose CRD is being deleted.
func (c *Cluster) admitCustomResourceLocked(gvr schema.GroupVersionResource, ri resourceInfo, name string) error {
	if ri.crd == "" {
		return nil
	}
	crd, ok := c.objects[crdGVR()][objectKey{"", ri.crd}]
	if !ok || crd.GetDeletionTimestamp() == nil {
		return nil
	}
	return apierrors.NewForbidden(gvr.GroupResource(), name, errors.New("create not allowed while custom resource definition is terminating"))
}

func crdGroupResource(u *unstructured.Unstructured) schema.GroupResource {
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
	return schema.GroupResource{Group: group, Resource: plural}
}

// crdCondition returns the status of a CRD condition, or "".
func crdCondition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// setCRDCondition sets a CRD condition, keeping its lastTransitionTime when its status stays.
func setCRDCondition(u *unstructured.Unstructured, typ, status, reason, message, now string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	cond := map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			if m["status"] == status {
				cond["lastTransitionTime"] = m["lastTransitionTime"]
			}
			conds[i] = cond
			_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
			return
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, append(conds, cond), "status", "conditions")
}
