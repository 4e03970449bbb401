package main

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates or updates fedkit's CRDs on the host, those of config/crd (what
// `kubectl apply -f config/crd` installs): Cluster, ReplicaSchedulingPreference, the federated
// built-in types and DNS; and the namespace fedkit-system, where the members' credentials and
// the replicas' Leases live. It returns once the API server serves them all.
func installCRDs(ctx context.Context, host federation.ClusterClient) error {
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": kube.DefaultNamespace},
	}}
	if _, err := host.Create(ctx, federation.NamespaceType.TargetGVR(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", kube.DefaultNamespace, err)
	}
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	if err != nil {
		return err
	}
	dns, err := dnsrecord.CRDs()
	if err != nil {
		return err
	}
	crds = append(crds, dns...)
	for _, crd := range crds {
		if err := apply(ctx, host, crd); err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, host, crd.Name); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, host federation.ClusterClient, crd *apiextensionsv1.CustomResourceDefinition) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	_, err = host.Create(ctx, crdGVR, u)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := host.Get(ctx, crdGVR, "", crd.Name)
	if err != nil {
		return err
	}
	u.SetResourceVersion(existing.GetResourceVersion())
	_, err = host.Update(ctx, crdGVR, u)
	return err
}

// waitEstablished polls the CRD until its Established condition is True.
func waitEstablished(ctx context.Context, host federation.ClusterClient, name string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		u, err := host.Get(ctx, crdGVR, "", name)
		if err == nil && established(u) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not established: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" {
			return m["status"] == "True"
		}
	}
	return false
}
