package fake

import (
	"errors"
	"maps"
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

// crdSpec is what the fake reads of a CRD: what decides what it serves. It is read from the
// unstructured object, without decoding the schemas, which are large and not modelled.
type crdSpec struct {
	name, group, scope               string
	plural, singular, kind, listKind string
	versions                         []crdVersion
	annotations                      map[string]string
}

type crdVersion struct {
	name            string
	served, storage bool
	status, schema  bool
}

func readCRD(u *unstructured.Unstructured) crdSpec {
	str := func(fields ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, fields...)
		return s
	}
	cs := crdSpec{
		name: u.GetName(), group: str("spec", "group"), scope: str("spec", "scope"),
		plural: str("spec", "names", "plural"), singular: str("spec", "names", "singular"),
		kind: str("spec", "names", "kind"), listKind: str("spec", "names", "listKind"),
		annotations: u.GetAnnotations(),
	}
	versions, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "versions")
	list, _ := versions.([]any)
	for _, v := range list {
		m, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "name")
		served, _, _ := unstructured.NestedBool(m, "served")
		storage, _, _ := unstructured.NestedBool(m, "storage")
		_, status, _ := unstructured.NestedFieldNoCopy(m, "subresources", "status")
		_, schema, _ := unstructured.NestedFieldNoCopy(m, "schema", "openAPIV3Schema")
		cs.versions = append(cs.versions, crdVersion{name: name, served: served, storage: storage, status: status, schema: schema})
	}
	return cs
}

// prepareCRD is the CRD strategy for a create (old nil) or an update of next: names.singular,
// names.listKind and conversion are defaulted, create sets status.storedVersions, and the spec
// must be one a real server accepts as far as serving goes (see validateCRD). The schemas are
// not checked beyond their presence.
func prepareCRD(next, old *unstructured.Unstructured) error {
	cs := readCRD(next)
	if cs.singular == "" && cs.kind != "" {
		cs.singular = strings.ToLower(cs.kind)
		_ = unstructured.SetNestedField(next.Object, cs.singular, "spec", "names", "singular")
	}
	if cs.listKind == "" && cs.kind != "" {
		cs.listKind = cs.kind + "List"
		_ = unstructured.SetNestedField(next.Object, cs.listKind, "spec", "names", "listKind")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(next.Object, "spec", "conversion"); !ok {
		_ = unstructured.SetNestedField(next.Object, string(apiextensionsv1.NoneConverter), "spec", "conversion", "strategy")
	}
	var oldCS *crdSpec
	if old != nil {
		o := readCRD(old)
		oldCS = &o
	}
	if errs := validateCRD(cs, oldCS); len(errs) > 0 {
		return apierrors.NewInvalid(apiextensionsv1.Kind("CustomResourceDefinition"), cs.name, errs)
	}
	if old == nil {
		stored := []any{}
		for _, v := range cs.versions {
			if v.storage {
				stored = append(stored, v.name)
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
func validateCRD(cs crdSpec, old *crdSpec) field.ErrorList {
	var errs field.ErrorList
	fld := field.NewPath("spec")
	if cs.name != cs.plural+"."+cs.group {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cs.name, `must be spec.names.plural+"."+spec.group`))
	}
	switch {
	case cs.group == "":
		errs = append(errs, field.Required(fld.Child("group"), ""))
	case len(validation.IsDNS1123Subdomain(cs.group)) > 0:
		errs = append(errs, field.Invalid(fld.Child("group"), cs.group, strings.Join(validation.IsDNS1123Subdomain(cs.group), ",")))
	case !strings.Contains(cs.group, "."):
		errs = append(errs, field.Invalid(fld.Child("group"), cs.group, "should be a domain with at least one dot"))
	}
	switch apiextensionsv1.ResourceScope(cs.scope) {
	case apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped:
	case "":
		errs = append(errs, field.Required(fld.Child("scope"), ""))
	default:
		errs = append(errs, field.NotSupported(fld.Child("scope"), cs.scope, []string{string(apiextensionsv1.ClusterScoped), string(apiextensionsv1.NamespaceScoped)}))
	}
	storage, seen := 0, map[string]bool{}
	for i, v := range cs.versions {
		if v.storage {
			storage++
		}
		if seen[v.name] {
			errs = append(errs, field.Invalid(fld.Child("versions"), v.name, "must contain unique version names"))
		}
		seen[v.name] = true
		if msgs := validation.IsDNS1035Label(v.name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("versions").Index(i).Child("name"), v.name, strings.Join(msgs, ",")))
		}
		if !v.schema {
			errs = append(errs, field.Required(fld.Child("versions").Index(i).Child("schema", "openAPIV3Schema"), ""))
		}
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(fld.Child("versions"), len(cs.versions), "must have exactly one version marked as storage version"))
	}
	for _, n := range []struct{ name, value string }{{"plural", cs.plural}, {"singular", cs.singular}, {"kind", cs.kind}, {"listKind", cs.listKind}} {
		if n.value == "" {
			errs = append(errs, field.Required(fld.Child("names", n.name), ""))
		}
	}
	if msgs := validation.IsDNS1035Label(cs.plural); cs.plural != "" && len(msgs) > 0 {
		errs = append(errs, field.Invalid(fld.Child("names", "plural"), cs.plural, strings.Join(msgs, ",")))
	}
	if apihelpers.IsProtectedCommunityGroup(cs.group) {
		key := field.NewPath("metadata", "annotations").Key(apiextensionsv1.KubeAPIApprovedAnnotation)
		switch state, reason := apihelpers.GetAPIApprovalState(cs.annotations); state {
		case apihelpers.APIApprovalMissing:
			errs = append(errs, field.Required(key, reason))
		case apihelpers.APIApprovalInvalid:
			errs = append(errs, field.Invalid(key, cs.annotations[apiextensionsv1.KubeAPIApprovedAnnotation], reason))
		}
	}
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(cs.group, old.group, fld.Child("group"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(cs.scope, old.scope, fld.Child("scope"))...)
	}
	return errs
}

// crdResources returns the resources a stored CRD serves: one per served version.
func crdResources(u *unstructured.Unstructured) map[schema.GroupVersionResource]resourceInfo {
	cs := readCRD(u)
	listKind := cs.listKind
	if listKind == "" { // a seeded CRD may lack the defaults
		listKind = cs.kind + "List"
	}
	out := map[schema.GroupVersionResource]resourceInfo{}
	for _, v := range cs.versions {
		if !v.served {
			continue
		}
		out[schema.GroupVersionResource{Group: cs.group, Version: v.name, Resource: cs.plural}] = resourceInfo{
			kind:       cs.kind,
			listKind:   listKind,
			namespaced: cs.scope == string(apiextensionsv1.NamespaceScoped),
			status:     v.status,
			verbs:      allVerbs(),
			crd:        cs.name,
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
					w.end()
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
		for _, k := range slices.SortedFunc(maps.Keys(c.objects[gvr]), compareKeys) {
			c.deleteObjectLocked(gvr, c.objects[gvr][k])
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
