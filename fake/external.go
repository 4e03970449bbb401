package fake

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The methods in this file are the test's own hands on a cluster, or those of an actor other
// than the code under test (a user with kubectl, an HPA, another controller). They bypass
// partitions, faults and hooks, and record no Action. Their writes bump the resourceVersion
// and reach watches like any other.

// Seed stores objs as they are, in order, stopping at the first error. Unlike Create it keeps
// the status, uid, creationTimestamp, generation and deletionTimestamp an object carries
// (filling in those missing) and ignores its resourceVersion, so fixtures can describe any
// state. The resource is the one the cluster serves for the object's kind (see
// [Cluster.RESTMapping]): a kind no resource serves is an error satisfying
// apierrors.IsNotFound, so seed a CustomResourceDefinition before its objects. Seed skips
// admission (the namespace need not exist) and the metadata validation of Create (names,
// labels, annotations), as the storage of a real server holds objects admitted under older
// rules. An object that exists already is an error satisfying apierrors.IsAlreadyExists.
func (c *Cluster) Seed(objs ...*unstructured.Unstructured) error {
	c.lock()
	defer c.unlock()
	for _, obj := range objs {
		if obj == nil {
			return fmt.Errorf("fake: seed: %w", apierrors.NewBadRequest("object is nil"))
		}
		gvk := obj.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return fmt.Errorf("fake: seed %q: %w", obj.GetName(), apierrors.NewBadRequest("apiVersion and kind are required"))
		}
		gvr, ok := c.resourceForLocked(gvk)
		if !ok {
			return fmt.Errorf("fake: seed %s %s: no resource serves %s: %w", gvk.Kind, objectRef(obj.GetNamespace(), obj.GetName()), gvk, notServed())
		}
		if _, err := c.createLocked(gvr, obj, true); err != nil {
			return fmt.Errorf("fake: seed %s %s: %w", gvk.Kind, objectRef(obj.GetNamespace(), obj.GetName()), err)
		}
	}
	return nil
}

// Peek returns a copy of a stored object like Get, but as the test: no Action is recorded and
// no fault applies. A missing object is an error satisfying apierrors.IsNotFound.
func (c *Cluster) Peek(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	c.lock()
	defer c.mu.Unlock()
	return c.getLocked(gvr, namespace, name)
}

// Objects returns copies of every stored object of gvr, sorted by namespace and name, without
// recording an Action.
func (c *Cluster) Objects(gvr schema.GroupVersionResource) []*unstructured.Unstructured {
	c.lock()
	defer c.mu.Unlock()
	list, err := c.listLocked(gvr, "", metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// Drift changes an object behind the controllers' back, as another actor would: mutate gets a
// copy of the stored object and may change anything but system metadata (name, namespace, uid,
// creationTimestamp and resourceVersion are kept), spec and status alike. The write goes
// through the metadata validation of an Update (invalid labels, or a deletionTimestamp set on
// an object that has none, are an error satisfying apierrors.IsInvalid). It bumps the
// resourceVersion, bumps the generation by the usual rules, and emits a Modified event (or
// Deleted, when mutate removes the last finalizer of an object being deleted); a write that
// changes nothing stores nothing. mutate runs without the cluster's lock, so it may call the
// cluster; if the object changes meanwhile, Drift runs mutate again on the new state. A missing
// object is an error satisfying apierrors.IsNotFound.
func (c *Cluster) Drift(gvr schema.GroupVersionResource, namespace, name string, mutate func(obj *unstructured.Unstructured)) error {
	for {
		c.lock()
		cur, err := c.getLocked(gvr, namespace, name)
		c.mu.Unlock()
		if err != nil {
			return err
		}
		rv, uid := cur.GetResourceVersion(), cur.GetUID()
		mutate(cur)
		cur.SetResourceVersion(rv)
		cur.SetUID(uid)
		cur.SetNamespace(namespace)
		cur.SetName(name)

		c.lock()
		_, err = c.updateLocked(gvr, cur, writeAll)
		c.unlock()
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// DriftDelete deletes an object as another actor would (as kubectl delete does, with
// propagationPolicy Background), finalizers honoured. A missing object is an error satisfying
// apierrors.IsNotFound.
func (c *Cluster) DriftDelete(gvr schema.GroupVersionResource, namespace, name string) error {
	c.lock()
	defer c.unlock()
	background := metav1.DeletePropagationBackground
	return c.deleteLocked(gvr, namespace, name, metav1.DeleteOptions{PropagationPolicy: &background})
}
