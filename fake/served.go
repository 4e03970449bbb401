package fake

import (
	"cmp"
	"context"
	_ "embed" // the table of built-in resources
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinResources is what a real kube-apiserver v1.37 serves with its default configuration
// (GA versions only, apiextensions and apiregistration included), one resource a line, as its
// discovery reports it. test/conformance compares it with a real server's discovery and
// regenerates it with -update.
//
//go:embed builtin_resources.txt
var builtinResources string

// resourceInfo is what a real API server's discovery says about one served resource, and
// where it comes from.
type resourceInfo struct {
	kind       string
	listKind   string
	namespaced bool
	status     bool     // has a /status subresource
	verbs      []string // sorted
	// crd is the name of the CustomResourceDefinition serving the resource; "" for built-ins.
	crd string
}

func (ri resourceInfo) allows(v string) bool {
	_, ok := slices.BinarySearch(ri.verbs, v)
	return ok
}

// allVerbs are the verbs of a custom resource, as the real server serves them.
func allVerbs() []string {
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// builtinServed parses builtinResources, once per cluster: about seventy lines. A malformed
// line is skipped; a test checks that none is.
func builtinServed() map[schema.GroupVersionResource]resourceInfo {
	out := map[schema.GroupVersionResource]resourceInfo{}
	for _, line := range strings.Split(builtinResources, "\n") {
		f := strings.Fields(line)
		if len(f) != 6 || strings.HasPrefix(line, "#") {
			continue
		}
		gv, err := schema.ParseGroupVersion(f[0])
		if err != nil {
			continue
		}
		verbs := strings.Split(f[5], ",")
		slices.Sort(verbs)
		out[gv.WithResource(f[1])] = resourceInfo{
			kind:       f[2],
			listKind:   f[2] + "List",
			namespaced: f[3] == "namespaced",
			status:     slices.Contains(strings.Split(f[4], ","), "status"),
			verbs:      verbs,
		}
	}
	return out
}

// servedLocked returns what the cluster serves for gvr, with the per-cluster overrides of
// SetNamespaced and SetStatusSubresource applied, or the error a real server answers for a
// resource it does not serve: 404 NotFound, "the server could not find the requested
// resource", whatever the verb. verb is the discovery verb of the call ("get", "update"...);
// a verb the resource does not have is 405 MethodNotAllowed where the real server has a route
// for the URL with another method, and 404 where it has none (a Get of a TokenReview).
func (c *Cluster) servedLocked(gvr schema.GroupVersionResource, verb string) (resourceInfo, error) {
	ri, ok := c.served[gvr]
	if !ok {
		return resourceInfo{}, notServed()
	}
	gr := gvr.GroupResource()
	if v, ok := c.res.namespaced[gr]; ok {
		ri.namespaced = v
	}
	if v, ok := c.res.status[gr]; ok {
		ri.status = v
	}
	if verb != "" && !ri.allows(verb) {
		itemVerb := verb == "get" || verb == "update" || verb == "patch" || verb == "delete"
		hasRoute := ri.allows("get") || ri.allows("update") || ri.allows("patch") || ri.allows("delete")
		if !itemVerb {
			hasRoute = ri.allows("list") || ri.allows("watch") || ri.allows("create") || ri.allows("deletecollection")
		}
		if !hasRoute {
			return resourceInfo{}, notServed()
		}
		return resourceInfo{}, apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, verb, gr, "", "the server does not allow this method on the requested resource", 0, false)
	}
	return ri, nil
}

// ServedResources implements [federation.ResourceDiscoverer]: every resource the cluster
// serves (the built-ins and the resources of its CustomResourceDefinitions, every served
// version), with the overrides of SetNamespaced, in group, version and name order. It fails
// like Healthy when the cluster is partitioned or a fault is injected for [VerbDiscovery].
func (c *Cluster) ServedResources(ctx context.Context) ([]metav1.APIResource, error) {
	if _, err := c.begin(ctx, Action{Verb: VerbDiscovery}); err != nil {
		return nil, err
	}
	c.lock()
	defer c.mu.Unlock()
	out := make([]metav1.APIResource, 0, len(c.served))
	for gvr := range c.served {
		ri, err := c.servedLocked(gvr, "")
		if err != nil {
			continue
		}
		out = append(out, metav1.APIResource{
			Name: gvr.Resource, Group: gvr.Group, Version: gvr.Version,
			Namespaced: ri.namespaced, Kind: ri.kind, Verbs: slices.Clone(ri.verbs),
		})
	}
	out = append(out, c.servedMetricsLocked()...)
	slices.SortFunc(out, func(a, b metav1.APIResource) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Version, b.Version), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// notServed is the real server's answer for a path no resource serves: a 404 with no details,
// which apierrors.IsNotFound recognises like a missing object's.
func notServed() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

// RESTMapping maps a kind to the resource that serves it in this cluster, and its scope, as a
// discovery-backed mapper does: the built-in resources and those of the cluster's
// CustomResourceDefinitions. A kind the cluster does not serve is an error satisfying
// meta.IsNoMatchError. It records no Action.
func (c *Cluster) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	c.lock()
	defer c.mu.Unlock()
	gvr, ok := c.resourceForLocked(gvk)
	if !ok {
		return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	ri, _ := c.servedLocked(gvr, "")
	scope := meta.RESTScopeRoot
	if ri.namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvk, Scope: scope}, nil
}

// resourceForLocked returns the served resource of kind gvk. Several resources can serve one
// kind (v1 Events are also events.k8s.io's, in another group); within a group version the
// first in name order wins, as in discovery.
func (c *Cluster) resourceForLocked(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	var found []schema.GroupVersionResource
	for gvr, ri := range c.served {
		if gvr.GroupVersion() == gvk.GroupVersion() && ri.kind == gvk.Kind {
			found = append(found, gvr)
		}
	}
	if len(found) == 0 {
		return schema.GroupVersionResource{}, false
	}
	slices.SortFunc(found, func(a, b schema.GroupVersionResource) int { return strings.Compare(a.Resource, b.Resource) })
	return found[0], true
}
