package sync

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// Member namespaces. A real API server refuses an object whose namespace does not exist, and
// a federated object's namespace need not exist in every member. Sync creates it, labelled
// as the federation's and annotated as created by sync, unless a FederatedNamespace governs
// it (then the FederatedNamespace's own sync creates it, with its template and overrides,
// and this object waits). A namespace sync created is deleted again when the last object sync
// put there is removed and nothing else lives in it.

// CreatedNamespaceAnnotation marks a member Namespace that sync created for the objects it
// propagates (and may delete again).
const CreatedNamespaceAnnotation = "federation.k8s.io/created-by-sync"

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// ensureNamespace creates namespace ns in a member. It returns a propagation reason (and
// message) instead when the namespace is governed by a FederatedNamespace or terminating.
func (s *Syncer) ensureNamespace(ctx context.Context, c federation.ClusterClient, cluster, ns string) (string, string, error) {
	governed, err := s.governedNamespace(ctx, ns)
	if err != nil {
		return "", "", err
	}
	if governed {
		return ReasonWaitingForNamespace, fmt.Sprintf("cluster %q: namespace %q does not exist yet; its FederatedNamespace creates it", cluster, ns), nil
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        ns,
			"labels":      map[string]any{federation.ManagedByLabel: s.opts.Identity},
			"annotations": map[string]any{CreatedNamespaceAnnotation: "true"},
		},
	}}
	if err := s.limits.wait(ctx, cluster); err != nil {
		return "", "", err
	}
	_, err = c.Create(ctx, namespaceGVR, obj)
	switch {
	case err == nil:
		logr.FromContextOrDiscard(ctx).V(1).Info("Created a member namespace", "cluster", cluster, "namespace", ns)
		return "", "", nil
	case apierrors.IsAlreadyExists(err):
		return "", "", nil // created meanwhile, by anyone
	}
	return "", "", fmt.Errorf("create namespace %q: %w", ns, err)
}

// governedNamespace reports whether a FederatedNamespace for ns exists on the host (a host
// that does not serve FederatedNamespaces governs nothing).
func (s *Syncer) governedNamespace(ctx context.Context, ns string) (bool, error) {
	if s.typ.Target.Group == "" && s.typ.Target.Kind == "Namespace" {
		return false, nil
	}
	_, err := s.host.Get(ctx, federation.NamespaceType.FederatedGVR(), ns, ns)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("read FederatedNamespace %s: %w", ns, err)
}

// contentGVRs are the resources looked at before a namespace sync created is deleted. The
// ClusterClient has no discovery, so "nothing else lives in it" means none of these, besides
// what the API server and its controllers put in every namespace.
var contentResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
}

// everyNamespace holds what the API server and its controllers create in each namespace.
func everyNamespace(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) bool {
	switch {
	case gvr.Resource == "configmaps" && obj.GetName() == "kube-root-ca.crt":
		return true
	case gvr.Resource == "serviceaccounts" && obj.GetName() == "default":
		return true
	case gvr.Resource == "secrets":
		t, _, _ := unstructured.NestedString(obj.Object, "type")
		return t == string(corev1.SecretTypeServiceAccountToken)
	}
	return false
}

// releaseNamespace deletes namespace ns in a member when sync created it and nothing else
// lives in it any more. Failures are logged, not returned: the namespace is a courtesy, the
// object's deletion is done.
func (s *Syncer) releaseNamespace(ctx context.Context, c federation.ClusterClient, cluster, ns string) {
	if ns == "" {
		return
	}
	obj, err := c.Get(ctx, namespaceGVR, "", ns)
	if err != nil || obj.GetAnnotations()[CreatedNamespaceAnnotation] != "true" ||
		obj.GetLabels()[federation.ManagedByLabel] != s.opts.Identity || obj.GetDeletionTimestamp() != nil {
		return
	}
	if governed, err := s.governedNamespace(ctx, ns); err != nil || governed {
		return
	}
	extra := []schema.GroupVersionResource{s.typ.TargetGVR()}
	for _, gvr := range append(extra, contentResources...) {
		list, err := c.List(ctx, gvr, ns, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return // cannot tell: keep it
		}
		if list == nil {
			continue
		}
		for i := range list.Items {
			if !everyNamespace(gvr, &list.Items[i]) {
				return
			}
		}
	}
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err = c.Delete(ctx, namespaceGVR, "", ns, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if err == nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("Deleted a member namespace sync had created", "cluster", cluster, "namespace", ns)
	}
}
