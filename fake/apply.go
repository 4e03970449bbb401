package fake

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/manifest"
)

// Apply creates or replaces the objects of a YAML stream (documents separated by "---"; JSON
// is YAML too), in order, as a user running `kubectl apply -f` against the cluster would, and
// stops at the first error. It is how a test writes its fixtures in the shape users write
// them:
//
//	host := fake.NewHost("host")
//	err := host.Apply(`
//	apiVersion: v1
//	kind: Namespace
//	metadata: {name: shop}
//	---
//	apiVersion: types.federation.k8s.io/v1alpha1
//	kind: FederatedDeployment
//	metadata: {name: web, namespace: shop}
//	spec: {...}
//	`)
//
// Each object goes to the resource the cluster serves for its apiVersion and kind (see
// [Cluster.RESTMapping]): the built-in ones, fedkit's on a [NewHost], and those of the
// CustomResourceDefinitions created earlier, in the same stream too. A kind nothing serves is
// an error satisfying apierrors.IsNotFound that names the document. An object of a namespaced
// kind without a namespace goes to "default", as with kubectl. A document with a list of
// items (kind: List) applies its items.
//
// The stream is read strictly, as `kubectl apply` reads it by default: a field the kind does
// not have (for built-in kinds and fedkit's) and a key twice in one mapping (two documents
// without "---" between them) are errors naming the document, the line and the field, and
// nothing of the stream is written.
//
// A new object is created with the rules of [Cluster.Create]: admission (its namespace must
// exist: put the Namespace first), metadata validation, uid, generation. An existing object
// is replaced by the document, as `kubectl replace` does (the fake has no server-side apply
// and keeps no last-applied configuration): fields the document leaves out are removed,
// except what the server owns (uid, creationTimestamp, generation, resourceVersion) and, for
// a resource with a status subresource, the status.
//
// A document that carries a status has it written too, through the status subresource
// where the resource has one, as the controller owning that status would (the cluster
// monitor for a Cluster's Ready condition, the loops for a federated object's status): so a
// fixture can say `status: {conditions: [{type: Ready, status: "True"}]}` for a Cluster.
//
// Like [Cluster.Seed] and [Cluster.Drift], Apply is the test's own hand, not the code under
// test's: it records no Action, and bypasses partitions, injected faults, latency and hooks.
// Its writes bump resourceVersions and reach watches and member caches like any other.
// Errors name the document (its position among the non-empty documents, kind, namespace and
// name) and wrap the API error, so apierrors predicates (IsAlreadyExists, IsInvalid,
// IsNotFound...) work on them.
func (c *Cluster) Apply(manifests string) error {
	objs, err := decodeManifests(manifests)
	if err != nil {
		return err
	}
	for _, d := range objs {
		if err := c.applyOne(d.obj); err != nil {
			return fmt.Errorf("fake: apply document %d (%s %s): %w", d.index, d.obj.GetKind(), objectRef(d.obj.GetNamespace(), d.obj.GetName()), err)
		}
	}
	return nil
}

// document is one object of a stream, with the position of the document it came from
// (1-based, among the documents that are not empty; the items of a List share their List's).
type document struct {
	index int
	obj   *unstructured.Unstructured
}

// decodeManifests splits a YAML stream into objects. Empty documents (comments only, a
// trailing "---") are skipped, as kubectl skips them. Like `kubectl apply`, whose field
// validation is strict by default, it refuses a key twice in one mapping and a field the
// kind does not have, for the built-in kinds and fedkit's (the fake has no schema for other
// custom resources), naming the document, the line and the field.
func decodeManifests(manifests string) ([]document, error) {
	docs, err := manifest.Split([]byte(manifests))
	if err != nil {
		return nil, fmt.Errorf("fake: apply: %w", err)
	}
	var out []document
	for _, d := range docs {
		items := []manifest.Document{d}
		if d.Object.IsList() {
			if items, err = d.Items(); err != nil {
				return nil, fmt.Errorf("fake: apply: %w", err)
			}
		}
		for _, item := range items {
			if typed := strictTypeFor(item.Object.GroupVersionKind()); typed != nil {
				if err := item.Decode(typed); err != nil {
					return nil, fmt.Errorf("fake: apply: %w", err)
				}
			}
			u, err := decodeObject(item.JSON)
			if err != nil {
				return nil, fmt.Errorf("fake: apply: %s: %w", item, err)
			}
			out = append(out, document{index: d.Index, obj: u})
		}
	}
	return out, nil
}

// strictTypeFor returns an empty Go value of the kind, for the strict field check, or nil for
// a kind the fake knows no Go type of.
func strictTypeFor(gvk schema.GroupVersionKind) any {
	switch {
	case gvk.Group == federation.TypesGroup:
		return &federation.FederatedObject{}
	case gvk.GroupKind() == federation.ClusterGVK.GroupKind():
		return &federation.Cluster{}
	case gvk.GroupKind() == federation.ReplicaSchedulingPreferenceGVK.GroupKind():
		return &federation.ReplicaSchedulingPreference{}
	}
	if typed, err := scheme.Scheme.New(gvk); err == nil {
		return typed
	}
	return nil
}

// applyOne creates or replaces obj, then writes its status if it carries one.
func (c *Cluster) applyOne(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return apierrors.NewBadRequest("apiVersion and kind are required")
	}
	c.lock()
	defer c.unlock()
	gvr, ok := c.resourceForLocked(gvk)
	if !ok {
		return fmt.Errorf("no resource serves %s (create its CustomResourceDefinition first): %w", gvk, notServed())
	}
	ri, err := c.servedLocked(gvr, "")
	if err != nil {
		return err
	}
	if ri.namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace("default")
	}
	status, hasStatus := obj.Object["status"]

	var stored *unstructured.Unstructured
	cur, err := c.getLocked(gvr, obj.GetNamespace(), obj.GetName())
	switch {
	case obj.GetName() == "" || apierrors.IsNotFound(err):
		stored, err = c.createLocked(gvr, obj, false)
	case err != nil:
		return err
	default:
		obj.SetResourceVersion(cur.GetResourceVersion())
		stored, err = c.updateLocked(gvr, obj, writeMain)
	}
	if err != nil || !hasStatus || !ri.status {
		return err
	}
	stored.Object["status"] = status
	_, err = c.updateLocked(gvr, stored, writeStatus)
	return err
}
