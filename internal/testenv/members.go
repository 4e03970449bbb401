package testenv

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// Client returns a federation/kube client of the cluster name, failing the test when it
// cannot be built.
func (e *Env) Client(t testing.TB, name string) *kube.Client {
	t.Helper()
	c, err := kube.New(e.Config(name), kube.Options{})
	if err != nil {
		t.Fatalf("testenv: client of %s: %v", name, err)
	}
	return c
}

// Register makes the API server of e's cluster server a member of the federation on host,
// as `kubectl fed join` would: its admin token in a Secret named cluster in namespace
// (labelled federation.k8s.io/cluster), and a Cluster named cluster with the server's
// endpoint, CA and that Secret. Objects that exist already are left as they are, so tests
// sharing the servers may register the same member again.
func (e *Env) Register(t testing.TB, host federation.ClusterClient, cluster, server, namespace string) {
	t.Helper()
	cfg := e.Config(server)
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": cluster, "namespace": namespace, "labels": map[string]any{federation.SecretClusterLabel: cluster}},
		"data":     map[string]any{"token": base64.StdEncoding.EncodeToString([]byte(cfg.BearerToken))},
	}}
	createIfAbsent(t, host, federation.SecretGVR, secret)
	c := &federation.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: federation.ClusterSpec{APIEndpoint: cfg.Host, CABundle: cfg.CAData,
			SecretRef: &federation.LocalSecretReference{Name: cluster}},
	}
	c.APIVersion, c.Kind = federation.ClusterGVK.ToAPIVersionAndKind()
	u, err := federation.ToUnstructured(c)
	if err != nil {
		t.Fatalf("testenv: Cluster %s: %v", cluster, err)
	}
	createIfAbsent(t, host, federation.ClusterGVR, u)
}

// MarkReady writes the Ready condition of the Cluster name on host, as the cluster monitor
// would, for tests that run no monitor.
func MarkReady(t testing.TB, host federation.ClusterClient, name string) {
	t.Helper()
	ctx := context.Background()
	u, err := host.Get(ctx, federation.ClusterGVR, "", name)
	if err != nil {
		t.Fatalf("testenv: Cluster %s: %v", name, err)
	}
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "test",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := host.UpdateStatus(ctx, federation.ClusterGVR, u); err != nil {
		t.Fatalf("testenv: Cluster %s status: %v", name, err)
	}
}

// ClusterReady reports whether the Cluster name on host says Ready=True.
func ClusterReady(t testing.TB, host federation.ClusterClient, name string) bool {
	t.Helper()
	u, err := host.Get(context.Background(), federation.ClusterGVR, "", name)
	if err != nil {
		t.Fatalf("testenv: Cluster %s: %v", name, err)
	}
	c, err := federation.ClusterFromUnstructured(u)
	if err != nil {
		t.Fatalf("testenv: Cluster %s: %v", name, err)
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == federation.ConditionReady {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return false
}

func createIfAbsent(t testing.TB, c federation.ClusterClient, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	t.Helper()
	if _, err := c.Create(context.Background(), gvr, u); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("testenv: creating %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
}
