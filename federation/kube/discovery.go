package kube

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
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
