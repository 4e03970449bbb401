package fake

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/fedkit/fedkit/federation"
)

// This file is the storage half of the API server: the functions ending in Locked run with
// c.mu held, see and change only stored state, and never record actions or inject faults.

// maxGenerateNameAttempts matches the real API server, which retries a generated name that is
// taken a few times before giving up with AlreadyExists.
const maxGenerateNameAttempts = 8

// getLocked returns a copy of the stored object.
func (c *Cluster) getLocked(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	ri, err := c.servedLocked(gvr, "get")
	if err != nil {
		return nil, err
	}
	ns, err := objectNamespace(ri, gvr, namespace)
	if err != nil {
		return nil, err
	}
	obj, ok := c.objects[gvr][objectKey{ns, name}]
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return obj.DeepCopy(), nil
}

// listLocked returns copies of the matching objects, sorted by namespace and name as etcd
// returns them, and the cluster's resourceVersion as the list's.
func (c *Cluster) listLocked(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	ri, err := c.servedLocked(gvr, "list")
	if err != nil {
		return nil, err
	}
	f, err := newFilter(ri, namespace, opts)
	if err != nil {
		return nil, err
	}
	return listOf(c.objects[gvr], gvr, ri, f, c.rv), nil
}

// listOf returns copies of the objects of stored that f matches, sorted by namespace and name
// as etcd returns them, as a list at resourceVersion rv.
func listOf(stored map[objectKey]*unstructured.Unstructured, gvr schema.GroupVersionResource, ri resourceInfo, f filter, rv int64) *unstructured.UnstructuredList {
	keys := make([]objectKey, 0, len(stored))
	for k, obj := range stored {
		if f.matches(obj) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	list := &unstructured.UnstructuredList{Object: map[string]any{}}
	list.SetAPIVersion(gvr.GroupVersion().String())
	list.SetKind(ri.listKind)
	list.SetResourceVersion(strconv.FormatInt(rv, 10))
	list.Items = make([]unstructured.Unstructured, 0, len(keys))
	for _, k := range keys {
		list.Items = append(list.Items, *stored[k].DeepCopy())
	}
	return list
}

// createLocked stores a new object. A seed (from Seed, not a client) keeps the uid,
// creationTimestamp, generation, deletionTimestamp and status it is given, as fixtures need,
// and skips admission and the metadata validation, as storage does.
func (c *Cluster) createLocked(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, seed bool) (*unstructured.Unstructured, error) {
	in, err := normalize(obj)
	if err != nil {
		return nil, err
	}
	return c.insertLocked(gvr, in, seed)
}

// insertLocked is createLocked for an object that is already a private, normalised copy.
func (c *Cluster) insertLocked(gvr schema.GroupVersionResource, in *unstructured.Unstructured, seed bool) (*unstructured.Unstructured, error) {
	return c.insertCheckedLocked(gvr, in, seed, checkCreate(gvr, in))
}

// createChecks are the checks of a create that depend on the object alone. storage.Create
// makes them before it takes the cluster's lock (decoding into the Go type is the dearest
// part of a create, and writers of a cluster wait for each other's lock);
// insertCheckedLocked reports their errors where the real server's order puts them.
type createChecks struct {
	typeMeta, decodes error
	// dropped are the paths of the fields the Go type does not have, dropped (checkDecodes).
	dropped []string
}

// checkCreate makes the createChecks of in, whose apiVersion it fills in when empty.
func checkCreate(gvr schema.GroupVersionResource, in *unstructured.Unstructured) createChecks {
	var cc createChecks
	if cc.typeMeta = checkTypeMeta(gvr, in, ""); cc.typeMeta == nil {
		cc.dropped, cc.decodes = checkDecodes(in)
	}
	return cc
}

// insertCheckedLocked is insertLocked with the checks cc already made.
func (c *Cluster) insertCheckedLocked(gvr schema.GroupVersionResource, in *unstructured.Unstructured, seed bool, cc createChecks) (*unstructured.Unstructured, error) {
	gr := gvr.GroupResource()
	ri, err := c.servedLocked(gvr, "create")
	if err != nil {
		return nil, err
	}
	if cc.typeMeta != nil {
		return nil, cc.typeMeta
	}
	if cc.decodes != nil {
		return nil, cc.decodes
	}
	if !seed && in.GetResourceVersion() != "" {
		// The real server fails this in storage, which surfaces as a 500.
		return nil, apierrors.NewInternalError(errors.New("resourceVersion should not be set on objects to be created"))
	}
	ns, err := objectNamespace(ri, gvr, in.GetNamespace())
	if err != nil {
		return nil, err
	}
	in.SetNamespace(ns)
	in.SetResourceVersion("")
	if !seed {
		// Admission comes before the strategy: a terminating CRD refuses new objects, and
		// NamespaceLifecycle a missing or terminating namespace.
		if err := c.admitCustomResourceLocked(gvr, ri, in.GetName()); err != nil {
			return nil, err
		}
		if err := c.admitNamespaceLocked(gvr, in); err != nil {
			return nil, err
		}
	}
	stored := c.objects[gvr]
	if in.GetName() == "" {
		if in.GetGenerateName() == "" {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: in.GetKind()}, "", field.ErrorList{
				field.Required(field.NewPath("metadata", "name"), "name or generateName is required"),
			})
		}
		for range maxGenerateNameAttempts {
			in.SetName(in.GetGenerateName() + c.randomSuffixLocked())
			if _, taken := stored[objectKey{ns, in.GetName()}]; !taken {
				break
			}
		}
	}
	if !seed {
		// The real server validates before storage can answer AlreadyExists.
		if err := validateCreate(gvr, ri.namespaced, in); err != nil {
			return nil, err
		}
	}
	if _, taken := stored[objectKey{ns, in.GetName()}]; taken {
		return nil, apierrors.NewAlreadyExists(gr, in.GetName())
	}
	if isDaemonSet(gr) {
		if err := prepareDaemonSetCreate(in); err != nil {
			return nil, err
		}
	}

	now := metav1.NewTime(c.nowLocked())
	if !seed || in.GetUID() == "" {
		in.SetUID(c.newUIDLocked())
	}
	if !seed || in.GetCreationTimestamp().Time.IsZero() {
		in.SetCreationTimestamp(now)
	}
	if !seed {
		in.SetDeletionTimestamp(nil)
		in.SetDeletionGracePeriodSeconds(nil)
	}
	switch {
	case ri.crd == "" && !tracksGeneration(gr):
		unstructured.RemoveNestedField(in.Object, "metadata", "generation")
	case !seed || in.GetGeneration() == 0:
		in.SetGeneration(1)
	}
	if !seed && ri.status && !keepsStatusOnCreate(gr) {
		delete(in.Object, "status")
	}
	if !seed {
		if gvr == nodesGVR() {
			taintNewNode(in)
		}
		if err := prepareKind(gvr, in, nil); err != nil {
			return nil, err
		}
	}
	return c.commitLocked(gvr, watch.Added, in, nil), nil
}

// prepareKind runs the strategy of the kinds whose server-side rules the fake models beyond
// metadata: Namespaces and CustomResourceDefinitions. old is nil on create.
func prepareKind(gvr schema.GroupVersionResource, next, old *unstructured.Unstructured) error {
	switch gvr {
	case namespacesGVR():
		prepareNamespace(next, old)
	case crdGVR():
		return prepareCRD(next, old)
	}
	return nil
}

// deleteLocked deletes an object, or marks it deleting when it has finalizers.
func (c *Cluster) deleteLocked(gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	ri, err := c.servedLocked(gvr, "delete")
	if err != nil {
		return err
	}
	ns, err := objectNamespace(ri, gvr, namespace)
	if err != nil {
		return err
	}
	gr := gvr.GroupResource()
	old, ok := c.objects[gvr][objectKey{ns, name}]
	if !ok {
		return apierrors.NewNotFound(gr, name)
	}
	if gvr == namespacesGVR() {
		if err := admitNamespaceDelete(name); err != nil {
			return err
		}
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != old.GetUID() {
			return apierrors.NewConflict(gr, name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, old.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != old.GetResourceVersion() {
			return apierrors.NewConflict(gr, name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, old.GetResourceVersion()))
		}
	}
	if slices.Contains(opts.DryRun, metav1.DryRunAll) {
		return nil
	}
	if gvr == namespacesGVR() || gvr == crdGVR() {
		c.deleteObjectLocked(gvr, old)
		return nil
	}
	if fins, changed := gcFinalizers(gr, opts, old.GetFinalizers()); changed {
		// As the real server's updateForGracefulDeletionAndFinalizers: the garbage collector's
		// finalizer goes on (or comes off) in the write that marks the object deleting, also
		// when it is deleting already. No garbage collector runs here: the object stays until
		// its finalizers are removed.
		next := old.DeepCopy()
		next.SetFinalizers(fins)
		if len(fins) == 0 {
			c.commitLocked(gvr, watch.Deleted, next, old)
			return nil
		}
		if old.GetDeletionTimestamp() == nil {
			markDeleting(next, c.nowLocked())
		}
		c.commitLocked(gvr, watch.Modified, next, old)
		return nil
	}
	c.deleteObjectLocked(gvr, old)
	return nil
}

// orphansByDefault are the resources whose deletion orphans their dependents unless the delete
// says otherwise: the versions that kept the old default for compatibility.
var orphansByDefault = map[schema.GroupResource]bool{
	{Group: "batch", Resource: "jobs"}:              true, // batch/v1
	{Group: "", Resource: "replicationcontrollers"}: true, // v1
}

// gcFinalizers returns the finalizers a delete with opts leaves on an object of gr that has
// fins, as the real server's deletionFinalizersForGarbageCollection does: the orphan finalizer
// for propagationPolicy Orphan (or orphanDependents, or the kind's default), foregroundDeletion
// for Foreground, neither for Background; an explicit option replaces the one a previous
// delete put on. changed reports whether they differ from fins.
func gcFinalizers(gr schema.GroupResource, opts metav1.DeleteOptions, fins []string) (out []string, changed bool) {
	orphan, foreground := orphansByDefault[gr], false
	for _, f := range fins {
		switch f {
		case metav1.FinalizerOrphanDependents:
			orphan, foreground = true, false
		case metav1.FinalizerDeleteDependents:
			orphan, foreground = false, true
		}
	}
	//lint:ignore SA1019 kube-apiserver still honours the deprecated field, so the fake does
	orphanDependents := opts.OrphanDependents
	switch {
	case orphanDependents != nil:
		orphan, foreground = *orphanDependents, false
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	}
	out = make([]string, 0, len(fins)+1)
	for _, f := range fins {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	return out, !slices.Equal(slices.Sorted(slices.Values(fins)), slices.Sorted(slices.Values(out)))
}

// markDeleting sets what the real server's markAsDeleting sets on obj.
func markDeleting(obj *unstructured.Unstructured, now time.Time) {
	t := metav1.NewTime(now)
	obj.SetDeletionTimestamp(&t)
	zero := int64(0)
	obj.SetDeletionGracePeriodSeconds(&zero)
	if g := obj.GetGeneration(); g > 0 {
		obj.SetGeneration(g + 1)
	}
}

// deleteObjectLocked deletes the stored object old: at once without finalizers, else by
// setting its deletionTimestamp (once). Namespaces and CRDs are deleted with their contents.
func (c *Cluster) deleteObjectLocked(gvr schema.GroupVersionResource, old *unstructured.Unstructured) {
	switch gvr {
	case namespacesGVR():
		c.deleteNamespaceLocked(old)
		return
	case crdGVR():
		c.deleteCRDLocked(old)
		return
	}
	next := old.DeepCopy()
	if len(old.GetFinalizers()) == 0 {
		c.commitLocked(gvr, watch.Deleted, next, old)
		return
	}
	if old.GetDeletionTimestamp() != nil {
		return // already deleting: nothing changes until the finalizers are gone
	}
	markDeleting(next, c.nowLocked())
	c.commitLocked(gvr, watch.Modified, next, old)
}

// commitLocked stores obj (a fresh object nobody else holds, though its parts may be shared
// with stored objects) at the next resourceVersion, its flat maps interned (see internal/intern), or
// removes it for Deleted, and publishes the event. It returns obj, now shared with the store:
// what reaches a client is a copy made outside the lock (see ownCopy).
func (c *Cluster) commitLocked(gvr schema.GroupVersionResource, typ watch.EventType, obj, old *unstructured.Unstructured) *unstructured.Unstructured {
	c.rv++
	obj.SetResourceVersion(strconv.FormatInt(c.rv, 10))
	if typ != watch.Deleted && c.interning {
		c.intern.Intern(obj)
	}
	stored := c.objects[gvr]
	if stored == nil {
		stored = map[objectKey]*unstructured.Unstructured{}
		c.objects[gvr] = stored
	}
	key := objectKey{obj.GetNamespace(), obj.GetName()}
	if typ == watch.Deleted {
		delete(stored, key)
	} else {
		stored[key] = obj
	}
	e := event{rv: c.rv, gvr: gvr, typ: typ, obj: obj, old: old}
	c.publishLocked(e)
	c.afterCommitLocked(e)
	return obj
}

// ownCopy is what a write returns to its client: its own copy of the object the storage
// returned, which may be shared with the store (stored objects are never mutated, so the copy
// can be made after the lock is released).
func ownCopy(obj *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
	if err != nil || obj == nil {
		return obj, err
	}
	return obj.DeepCopy(), nil
}

// afterCommitLocked is what follows a write: member-cache notifications, and the controllers
// that act at once on it (serving and establishing CRDs, finalizing a terminating namespace
// or CRD whose last object went). Their writes follow this one's in resourceVersion order.
func (c *Cluster) afterCommitLocked(e event) {
	c.notifyLocked(e)
	name := e.obj.GetName()
	if e.gvr == crdGVR() {
		if e.typ == watch.Deleted {
			c.syncCRDLocked(name, nil)
			return
		}
		c.syncCRDLocked(name, e.obj)
		c.establishLocked(name)
		return
	}
	if e.typ != watch.Deleted {
		return
	}
	if ns := e.obj.GetNamespace(); ns != "" {
		c.finalizeNamespaceLocked(ns)
	}
	if e.gvr.Group != "" {
		c.finalizeCRDLocked(e.gvr.Resource + "." + e.gvr.Group) // a CRD's name is <plural>.<group>
	}
}

// storedResourcesLocked returns the resources with stored objects, in a stable order.
func (c *Cluster) storedResourcesLocked() []schema.GroupVersionResource {
	return slices.SortedFunc(maps.Keys(c.objects), compareGVRs)
}

// objectNamespace returns the namespace an object of gvr is stored under: "" for
// cluster-scoped resources (a namespace given for them is ignored), and namespace for
// namespaced ones, where it is required.
func objectNamespace(ri resourceInfo, gvr schema.GroupVersionResource, namespace string) (string, error) {
	if !ri.namespaced {
		return "", nil
	}
	if namespace == "" {
		return "", apierrors.NewBadRequest(fmt.Sprintf("fake: a namespace is required for the namespaced resource %s", gvr.GroupResource()))
	}
	return namespace, nil
}

// randomSuffixLocked returns five characters from the alphabet the real server uses for
// generateName (no vowels, no confusable digits).
func (c *Cluster) randomSuffixLocked() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[c.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// newUIDLocked returns a version 4 UUID from the cluster's seeded source.
func (c *Cluster) newUIDLocked() types.UID {
	var b [16]byte
	for i := range b {
		b[i] = byte(c.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// normalize returns a deep copy of obj that went through JSON, as every object sent to a real
// server does: numbers become int64 or float64, and values JSON cannot hold are a BadRequest
// instead of a panic in DeepCopy. The copy is walked rather than encoded and decoded where
// that gives the same result (see canonicalObject).
func normalize(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil || obj.Object == nil {
		return nil, apierrors.NewBadRequest("fake: object is nil")
	}
	if m, ok := canonicalObject(obj.Object); ok {
		return &unstructured.Unstructured{Object: m}, nil
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fake: object cannot be encoded as JSON: %v", err))
	}
	return decodeObject(data)
}

// decodeObject decodes a JSON object into an Unstructured.
func decodeObject(data []byte) (*unstructured.Unstructured, error) {
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fake: decoding object: %v", err))
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// checkDecodes fails, like the real server, when an object of a built-in kind does not decode
// into its Go type (a string where a number belongs, a list where an object belongs). Custom
// resources are not checked: the fake has no schema for them. An object that decodes is then
// made what the real server stores, which encodes the Go value again (see storedForm), without
// the fields the type does not have: their paths are returned, for the write's warnings.
func checkDecodes(obj *unstructured.Unstructured) ([]string, error) {
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return nil, nil // not a kind client-go knows
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			obj.GetKind(), obj.GroupVersionKind().Version, obj.GetKind(), err))
	}
	if s, ok := typed.(*corev1.Secret); ok && s.StringData != nil {
		mergeStringData(obj.Object, s)
	}
	encoded, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, nil // stored as sent
	}
	if !storedForm(obj.Object, encoded) {
		return nil, nil
	}
	// A value the encoding lacks: a field the type does not have, which the strict decoding
	// finds by its path (dearer, so only then).
	dropped := federation.UnknownFields(obj)
	dropFields(obj.Object, dropped)
	return dropped, nil
}

// mergeStringData does to a Secret what the real server's conversion does: each key of its
// write-only stringData replaces the same key of data (base64-encoded), and stringData is
// never stored. obj is the Secret as sent, s the same decoded; both are changed.
func mergeStringData(obj map[string]any, s *corev1.Secret) {
	if s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	data := make(map[string]any, len(s.Data))
	for k, v := range s.Data {
		data[k] = base64.StdEncoding.EncodeToString(v)
	}
	obj["data"] = data
	delete(obj, "stringData")
}

// checkTypeMeta requires a kind (falling back to fallbackKind) and an apiVersion matching gvr;
// an empty apiVersion is filled in.
func checkTypeMeta(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fallbackKind string) error {
	if obj.GetKind() == "" {
		if fallbackKind == "" {
			return apierrors.NewBadRequest(fmt.Sprintf("Object 'Kind' is missing in %s %q", gvr.GroupResource(), obj.GetName()))
		}
		obj.SetKind(fallbackKind)
	}
	want := gvr.GroupVersion().String()
	switch got := obj.GetAPIVersion(); got {
	case "":
		obj.SetAPIVersion(want)
	case want:
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", got, want))
	}
	return nil
}

func compareKeys(a, b objectKey) int {
	if n := cmp.Compare(a.namespace, b.namespace); n != 0 {
		return n
	}
	return cmp.Compare(a.name, b.name)
}
