package conformance

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// CRDGVR addresses CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates the CRDs through c (replacing the spec of any that exist) and waits
// until the API server reports every one of them Established, or ctx is done. It is what a
// test needs before it can use fedkit's types on a real API server.
func InstallCRDs(ctx context.Context, c federation.ClusterClient, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return fmt.Errorf("conformance: convert CRD %s: %w", crd.Name, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		_, err = c.Create(ctx, CRDGVR, u)
		if apierrors.IsAlreadyExists(err) {
			var existing *unstructured.Unstructured
			if existing, err = c.Get(ctx, CRDGVR, "", crd.Name); err == nil {
				u.SetResourceVersion(existing.GetResourceVersion())
				_, err = c.Update(ctx, CRDGVR, u)
			}
		}
		if err != nil {
			return fmt.Errorf("conformance: install CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, c federation.ClusterClient, name string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		u, err := c.Get(ctx, CRDGVR, "", name)
		if err == nil && condition(u, "Established") == "True" && condition(u, "NamesAccepted") == "True" {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("not Established")
			}
			return fmt.Errorf("conformance: CRD %s: %w (%w)", name, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// condition returns the status of the condition of that type in status.conditions, or "".
func condition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
