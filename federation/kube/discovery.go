package kube

import (
	"context"
	"encoding/json"
	"fmt"

	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Healthy asks the API server whether it is ready (GET /readyz) and returns nil when it
// answers 200. A server that answers "not ready" yields an error with its answer; a server that
// cannot be reached, or does not answer before ctx is done, yields an error wrapping
// federation.ErrUnreachable. A Client built on Options.Dynamic returns ErrNoDiscovery.
//
// Healthy implements federation.HealthChecker. It is cheap: no object is read, and the API
// server answers from memory.
func (c *Client) Healthy(ctx context.Context) error {
	if c.disc == nil {
		return fmt.Errorf("kube: check health: %w", ErrNoDiscovery)
	}
	return c.wrapErr("check health", c.disc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error())
}

// ServerVersion returns the API server's version (GET /version). Errors follow the rules of
// Healthy. It implements federation.VersionGetter; unlike client-go's discovery method of the
// same name it honours ctx.
func (c *Client) ServerVersion(ctx context.Context) (*version.Info, error) {
	if c.disc == nil {
		return nil, fmt.Errorf("kube: get server version: %w", ErrNoDiscovery)
	}
	body, err := c.disc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, c.wrapErr("get server version", err)
	}
	info := &version.Info{}
	if err := json.Unmarshal(body, info); err != nil {
		return nil, fmt.Errorf("kube: get server version: decode the answer: %w", err)
	}
	return info, nil
}

// ServedResources returns the resources the API server serves, in each group's preferred
// version (GET /api/v1, /apis and /apis/<group>/<version>), with Group and Version set and
// subresources left out. It honours ctx; errors follow the rules of Healthy, and a group whose
// discovery fails (an aggregated API server that is down) fails the whole call. It implements
// federation.ResourceDiscoverer.
func (c *Client) ServedResources(ctx context.Context) ([]metav1.APIResource, error) {
	const op = "discover served resources"
	if c.disc == nil {
		return nil, fmt.Errorf("kube: %s: %w", op, ErrNoDiscovery)
	}
	get := func(path string, into any) error {
		body, err := c.disc.RESTClient().Get().AbsPath(path).Do(ctx).Raw()
		if err != nil {
			return c.wrapErr(op+": "+path, err)
		}
		if err := json.Unmarshal(body, into); err != nil {
			return fmt.Errorf("kube: %s: %s: decode the answer: %w", op, path, err)
		}
		return nil
	}
	groups := &metav1.APIGroupList{}
	if err := get("/apis", groups); err != nil {
		return nil, err
	}
	paths := map[string]string{"v1": "/api/v1"}
	order := []string{"v1"}
	for _, g := range groups.Groups {
		gv := g.PreferredVersion.GroupVersion
		if gv == "" && len(g.Versions) > 0 {
			gv = g.Versions[0].GroupVersion
		}
		if gv == "" {
			continue
		}
		paths[gv] = "/apis/" + gv
		order = append(order, gv)
	}
	var out []metav1.APIResource
	for _, gvs := range order {
		gv, err := schema.ParseGroupVersion(gvs)
		if err != nil {
			return nil, fmt.Errorf("kube: %s: group version %q: %w", op, gvs, err)
		}
		list := &metav1.APIResourceList{}
		if err := get(paths[gvs], list); err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			r.Group, r.Version = gv.Group, gv.Version
			out = append(out, r)
		}
	}
	return out, nil
}

// RESTMapping maps a kind to its resource and scope using the API server's discovery, which
// is cached for the Client's lifetime. A kind the cache does not know refreshes it once, so
// CRDs installed after the first call are found. An unknown kind is an error satisfying
// meta.IsNoMatchError.
func (c *Client) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	op := "map kind " + gvk.String()
	if c.mapper == nil {
		return nil, fmt.Errorf("kube: %s: %w", op, ErrNoDiscovery)
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, c.wrapErr(op, err)
	}
	return m, nil
}
