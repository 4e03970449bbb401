package fake

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Namespaces, as a real cluster has them: the NamespaceLifecycle admission plugin, the
// namespace REST strategy, and a namespace controller that acts at once.

// namespacesGVR is core/v1 Namespaces.
func namespacesGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
}

// initialNamespaces are the namespaces every cluster starts with, as kube-apiserver creates
// them. The first three are immortal: deleting them is Forbidden.
func initialNamespaces() []string {
	return []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}
}

// admitNamespaceDelete refuses to delete an immortal namespace, as NamespaceLifecycle does.
func admitNamespaceDelete(name string) error {
	if name == metav1.NamespaceDefault || name == metav1.NamespaceSystem || name == metav1.NamespacePublic {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name, errors.New("this namespace may not be deleted"))
	}
	return nil
}

// seedNamespacesLocked stores the initial namespaces (resourceVersions 1 to 4).
func (c *Cluster) seedNamespacesLocked() {
	for _, name := range initialNamespaces() {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
		ns.SetName(name)
		// Cannot fail: the resource is served and the name valid.
		_, _ = c.createLocked(namespacesGVR(), ns, false)
	}
}

// admitNamespaceLocked is the NamespaceLifecycle admission plugin for a Create of obj: an
// object of a namespaced resource (other than a Namespace) needs its namespace to exist (else
// NotFound for the namespace, as the plugin's own lookup answers) and not to be terminating
// (else Forbidden with the NamespaceTerminating cause). Updates and deletes are not checked,
// as the plugin does not check them.
func (c *Cluster) admitNamespaceLocked(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	ns := obj.GetNamespace()
	if ns == "" || gvr == namespacesGVR() {
		return nil
	}
	stored, ok := c.objects[namespacesGVR()][objectKey{"", ns}]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
	}
	if stored.GetDeletionTimestamp() == nil {
		return nil
	}
	err := apierrors.NewForbidden(gvr.GroupResource(), obj.GetName(),
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", ns),
		Field:   "metadata.namespace",
	})
	return err
}

// prepareNamespace is the namespace strategy: on create the phase is Active and the
// "kubernetes" finalizer is in spec.finalizers (the namespace controller removes it when the
// namespace is empty); updates keep the stored spec.finalizers; and every write sets the label
// kubernetes.io/metadata.name to the name. old is nil on create.
func prepareNamespace(next, old *unstructured.Unstructured) {
	if old == nil {
		next.Object["status"] = map[string]any{"phase": string(corev1.NamespaceActive)}
		fin, _, _ := unstructured.NestedStringSlice(next.Object, "spec", "finalizers")
		if !slices.Contains(fin, string(corev1.FinalizerKubernetes)) {
			_ = unstructured.SetNestedStringSlice(next.Object, append(fin, string(corev1.FinalizerKubernetes)), "spec", "finalizers")
		}
	} else {
		fin, ok, _ := unstructured.NestedFieldCopy(old.Object, "spec", "finalizers")
		if ok {
			_ = unstructured.SetNestedField(next.Object, fin, "spec", "finalizers")
		} else {
			unstructured.RemoveNestedField(next.Object, "spec", "finalizers")
		}
	}
	labels := next.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[corev1.LabelMetadataName] = next.GetName()
	next.SetLabels(labels)
}

// deleteNamespaceLocked deletes a Namespace as a real cluster does: the namespace becomes
// Terminating (deletionTimestamp, status.phase), then the namespace controller deletes
// everything in it, finalizers honoured, and removes the namespace once it is empty. Deleting
// default, kube-system or kube-public is Forbidden.
func (c *Cluster) deleteNamespaceLocked(old *unstructured.Unstructured) {
	name := old.GetName()
	if old.GetDeletionTimestamp() == nil {
		next := old.DeepCopy()
		now := metav1.NewTime(c.nowLocked())
		next.SetDeletionTimestamp(&now)
		_ = unstructured.SetNestedField(next.Object, string(corev1.NamespaceTerminating), "status", "phase")
		c.commitLocked(namespacesGVR(), watch.Modified, next, old)
	}
	for _, gvr := range c.storedResourcesLocked() {
		for _, k := range slices.SortedFunc(maps.Keys(c.objects[gvr]), compareKeys) {
			if obj, ok := c.objects[gvr][k]; ok && k.namespace == name {
				c.deleteObjectLocked(gvr, obj)
			}
		}
	}
	c.finalizeNamespaceLocked(name)
}

// finalizeNamespaceLocked is the namespace controller's last step: once a terminating
// namespace holds nothing, it removes the "kubernetes" finalizer, and the namespace is deleted
// when no metadata.finalizers remain either.
func (c *Cluster) finalizeNamespaceLocked(name string) {
	old, ok := c.objects[namespacesGVR()][objectKey{"", name}]
	if !ok || old.GetDeletionTimestamp() == nil {
		return
	}
	for _, objs := range c.objects {
		for k := range objs {
			if k.namespace == name {
				return
			}
		}
	}
	next := old.DeepCopy()
	unstructured.RemoveNestedField(next.Object, "spec", "finalizers")
	if len(next.GetFinalizers()) == 0 {
		c.commitLocked(namespacesGVR(), watch.Deleted, old.DeepCopy(), old)
		return
	}
	if _, had, _ := unstructured.NestedFieldNoCopy(old.Object, "spec", "finalizers"); had {
		c.commitLocked(namespacesGVR(), watch.Modified, next, old)
	}
}

// namespaceDeletable reports whether a namespace whose last metadata finalizer an update
// removes may go: only when the namespace controller has removed its spec.finalizers too, as
// the real namespace storage decides.
func namespaceDeletable(ns *unstructured.Unstructured) bool {
	fin, _, _ := unstructured.NestedStringSlice(ns.Object, "spec", "finalizers")
	return len(fin) == 0
}
