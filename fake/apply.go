package fake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
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
// trailing "---") are skipped, as kubectl skips them.
func decodeManifests(manifests string) ([]document, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifests)))
	var out []document
	for i := 1; ; {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("fake: apply: reading document %d: %w", i, err)
		}
		data, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("fake: apply: document %d is not valid YAML: %w", i, err)
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 || bytes.Equal(data, []byte("null")) {
			continue // not counted: users count the documents they see
		}
		if data[0] != '{' {
			return nil, fmt.Errorf("fake: apply: document %d is not an object: %s", i, abbreviate(string(data), 80))
		}
		u, err := decodeObject(data)
		if err != nil {
			return nil, fmt.Errorf("fake: apply: document %d: %w", i, err)
		}
		if !u.IsList() {
			out = append(out, document{index: i, obj: u})
		} else if err := u.EachListItem(func(item runtime.Object) error {
			out = append(out, document{index: i, obj: item.(*unstructured.Unstructured)})
			return nil
		}); err != nil {
			return nil, fmt.Errorf("fake: apply: document %d: %w", i, err)
		}
		i++
	}
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

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
