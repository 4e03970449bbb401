package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// notServedMessage is what a real server answers for a path no resource serves.
const notServedMessage = "the server could not find the requested resource"

// servedBehaviours: what an API serves (built-ins and the resources of CRDs), and the 404 for
// anything else, which a loop must tell from a missing object only by the message.
func servedBehaviours() []behaviour {
	return []behaviour{
		{"served/unserved-resource-is-not-found-on-every-verb", func(t *testing.T, e *env) {
			for _, gvr := range []schema.GroupVersionResource{
				{Group: "absent-" + e.run + ".conformance.fedkit.io", Version: "v1", Resource: "things"}, // no such group
				{Version: "v1", Resource: "things"},                          // a served group version without the resource
				{Group: "apps", Version: "v1beta1", Resource: "deployments"}, // a version not served by default
			} {
				for verb, err := range everyVerb(e, gvr) {
					require.True(t, apierrors.IsNotFound(err), "%s %s: want NotFound, got %v", verb, gvr, err)
					require.True(t, strings.HasSuffix(err.Error(), notServedMessage), "%s %s: %v", verb, gvr, err)
				}
			}
		}},
		{"served/discovery-lists-resources-with-scope-and-verbs", func(t *testing.T, e *env) {
			// What sync reads before it deletes a member namespace: every namespaced, listable
			// resource, the resources of CRDs included, without subresources.
			d, ok := e.c.(federation.ResourceDiscoverer)
			require.True(t, ok, "the client implements federation.ResourceDiscoverer")
			gvr := e.installCRD(t, "trinkets", true)
			var got map[schema.GroupVersionResource]metav1.APIResource
			e.eventually(t, "discovery lists the CRD's resource", func() bool {
				list, err := d.ServedResources(e.ctx)
				require.NoError(t, err)
				got = map[schema.GroupVersionResource]metav1.APIResource{}
				for _, r := range list {
					require.NotContains(t, r.Name, "/", "a subresource: %v", r)
					require.NotEmpty(t, r.Version, "%s without its version", r.Name)
					got[schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Name}] = r
				}
				_, ok := got[gvr]
				return ok
			})
			for want, namespaced := range map[schema.GroupVersionResource]bool{
				ConfigMapGVR: true, DeploymentGVR: true, LeaseGVR: true, EndpointSliceGVR: true, gvr: true,
				NamespaceGVR: false, PriorityClassGVR: false, ClusterGVR: false,
			} {
				r, ok := got[want]
				require.True(t, ok, "%s is not listed", want)
				require.Equal(t, namespaced, r.Namespaced, "%s namespaced", want)
				require.Contains(t, r.Verbs, "list", want.String())
			}
			rbac := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
			require.True(t, got[rbac].Namespaced, "rolebindings are listed, namespaced")
			review := schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews"}
			require.NotContains(t, got[review].Verbs, "list", "a review cannot be listed")
			require.NoError(t, e.c.Delete(e.ctx, CRDGVR, "", gvr.Resource+"."+gvr.Group, metav1.DeleteOptions{}))
		}},
		{"crd/resource-is-served-with-scope-and-status", func(t *testing.T, e *env) {
			gvr := e.installCRD(t, "gadgets", true)
			g := e.create(t, gvr, gadget(gvr, e.ns, "g"))
			require.EqualValues(t, 1, g.GetGeneration())
			set(t, g, "ok", "status", "phase")
			_, err := e.c.UpdateStatus(e.ctx, gvr, g)
			require.NoError(t, err, "the version declares the status subresource")
			l, err := e.c.List(e.ctx, gvr, "", metav1.ListOptions{})
			require.NoError(t, err)
			require.Equal(t, []string{"g"}, itemNames(l))
			_, err = e.c.List(e.ctx, gvr.GroupResource().WithVersion("v2"), "", metav1.ListOptions{})
			require.True(t, apierrors.IsNotFound(err), "a version with served: false is not served: %v", err)

			cgvr := e.installCRD(t, "gizmos", false)
			c := gadget(cgvr, "", "c")
			c.Object["status"] = map[string]any{"phase": "kept"}
			c = e.create(t, cgvr, c)
			require.Equal(t, "kept", str(c, "status", "phase"), "without a status subresource Create keeps status")
			_, err = e.c.UpdateStatus(e.ctx, cgvr, c)
			require.True(t, apierrors.IsNotFound(err), "nor is there /status: %v", err)
			require.NoError(t, e.c.Delete(e.ctx, CRDGVR, "", cgvr.Resource+"."+cgvr.Group, metav1.DeleteOptions{}))
		}},
		{"crd/deletion-deletes-objects-and-stops-serving", func(t *testing.T, e *env) {
			gvr := e.installCRD(t, "doomed", true)
			e.create(t, gvr, gadget(gvr, e.ns, "free"))
			held := gadget(gvr, e.ns, "held")
			held.SetFinalizers([]string{holdFinalizer})
			e.create(t, gvr, held)
			crdName := gvr.Resource + "." + gvr.Group
			require.NoError(t, e.c.Delete(e.ctx, CRDGVR, "", crdName, metav1.DeleteOptions{}))

			crd := e.get(t, CRDGVR, "", crdName)
			require.NotNil(t, crd.GetDeletionTimestamp(), "the CRD waits for its objects")
			_, err := e.c.Create(e.ctx, gvr, gadget(gvr, e.ns, "late"))
			require.True(t, apierrors.IsForbidden(err), "Create while the CRD terminates: want Forbidden, got %v", err)
			require.Contains(t, err.Error(), "create not allowed while custom resource definition is terminating")
			e.eventually(t, "the free object is deleted", func() bool {
				_, err := e.c.Get(e.ctx, gvr, e.ns, "free")
				return apierrors.IsNotFound(err)
			})
			e.eventually(t, "the held object is marked deleting", func() bool {
				u, err := e.c.Get(e.ctx, gvr, e.ns, "held")
				return err == nil && u.GetDeletionTimestamp() != nil
			})

			u := e.get(t, gvr, e.ns, "held")
			u.SetFinalizers(nil)
			_, err = e.c.Update(e.ctx, gvr, u)
			require.NoError(t, err)
			e.eventually(t, "the CRD is gone", func() bool {
				_, err := e.c.Get(e.ctx, CRDGVR, "", crdName)
				return apierrors.IsNotFound(err)
			})
			e.eventually(t, "its resource is no longer served", func() bool {
				_, err := e.c.List(e.ctx, gvr, "", metav1.ListOptions{})
				return apierrors.IsNotFound(err) && strings.HasSuffix(err.Error(), notServedMessage)
			})
		}},
	}
}

// everyVerb calls every verb of the client on gvr and returns the errors by verb.
func everyVerb(e *env, gvr schema.GroupVersionResource) map[string]error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": "Thing"}}
	obj.SetNamespace(e.ns)
	obj.SetName("x")
	errs := map[string]error{}
	_, errs["get"] = e.c.Get(e.ctx, gvr, e.ns, "x")
	_, errs["list"] = e.c.List(e.ctx, gvr, e.ns, metav1.ListOptions{})
	_, errs["create"] = e.c.Create(e.ctx, gvr, obj.DeepCopy())
	_, errs["update"] = e.c.Update(e.ctx, gvr, obj.DeepCopy())
	_, errs["update-status"] = e.c.UpdateStatus(e.ctx, gvr, obj.DeepCopy())
	_, errs["patch"] = e.c.Patch(e.ctx, gvr, e.ns, "x", types.MergePatchType, []byte(`{}`))
	errs["delete"] = e.c.Delete(e.ctx, gvr, e.ns, "x", metav1.DeleteOptions{})
	w, err := e.c.Watch(e.ctx, gvr, e.ns, metav1.ListOptions{})
	if w != nil {
		w.Stop()
	}
	errs["watch"] = err
	return errs
}

// installCRD creates a CRD of this run, <plural><run>.conformance.fedkit.io: v1 served (with a
// status subresource when namespaced) and v2 not served. It waits until v1 is served and
// returns its resource.
func (e *env) installCRD(t *testing.T, plural string, namespaced bool) schema.GroupVersionResource {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "conformance.fedkit.io", Version: "v1", Resource: plural + e.run}
	scope := "Cluster"
	var sub any
	if namespaced {
		scope, sub = "Namespaced", map[string]any{"status": map[string]any{}}
	}
	schemaOf := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	v1 := map[string]any{"name": "v1", "served": true, "storage": true, "schema": schemaOf}
	if sub != nil {
		v1["subresources"] = sub
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group":    gvr.Group,
			"scope":    scope,
			"names":    map[string]any{"plural": gvr.Resource, "kind": kindOf(gvr)},
			"versions": []any{v1, map[string]any{"name": "v2", "served": false, "storage": false, "schema": schemaOf}},
		},
	}}
	e.create(t, CRDGVR, crd)
	e.eventually(t, "the CRD's resource is served", func() bool {
		_, err := e.c.List(e.ctx, gvr, "", metav1.ListOptions{})
		return err == nil
	})
	return gvr
}

// kindOf is the kind of installCRD's resources: the plural, capitalised.
func kindOf(gvr schema.GroupVersionResource) string {
	return strings.ToUpper(gvr.Resource[:1]) + gvr.Resource[1:]
}

// gadget returns an object of a resource installCRD made.
func gadget(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       kindOf(gvr),
		"spec":       map[string]any{"size": int64(1)},
	}}
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// eventually polls cond until it holds, and fails the test after the watch timeout: a real
// server's controllers (establishing or finalizing a CRD) take a moment.
func (e *env) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(e.watchTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-timeout.C:
			t.Fatalf("not within %s: %s", e.watchTimeout, what)
		}
	}
}
