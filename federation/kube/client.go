package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/fedkit/fedkit/federation"
)

// Client is a federation.ClusterClient on client-go's dynamic client. It also implements
// federation.HealthChecker and federation.VersionGetter, and maps kinds to resources with
// RESTMapping. It is safe for concurrent use and holds no goroutines: connections are opened
// by the first request, not by the constructor.
//
// Every error it returns starts with "kube: " and the operation, and keeps the API server's
// error in its chain, so apierrors.IsNotFound, IsConflict and IsAlreadyExists work on it.
// Failures of the network rather than the API also wrap federation.ErrUnreachable. Its messages
// never contain the Client's bearer token or password, even when a server quotes them: they
// are cut out ("[redacted]"); the errors in the chain are the server's, as it answered.
type Client struct {
	dyn dynamic.Interface

	// disc and mapper are nil for a Client built on Options.Dynamic.
	disc   discovery.DiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper

	// secrets are the credentials the Client sends (bearer token, basic-auth password): cut
	// out of every error it returns.
	secrets []string
	// expiry is when those credentials expire (zero: unknown); see CredentialsExpiry.
	expiry time.Time
}

// String and GoString describe a Client without its fields, so a Client printed by a panic, a
// debugging log or a test failure shows no credential (it keeps them to cut them out of
// errors).
func (c *Client) String() string { return "kube.Client" }

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// wrapErr is the package's wrapErr, with the Client's credentials cut out of the message.
func (c *Client) wrapErr(op string, err error) error {
	return redact(wrapErr(op, err), c.secrets)
}

// Compile-time checks of the interfaces Client implements.
var (
	_ federation.ClusterClient = (*Client)(nil)
	_ federation.HealthChecker = (*Client)(nil)
	_ federation.VersionGetter = (*Client)(nil)

	_ federation.ResourceDiscoverer = (*Client)(nil)
)

// clientConfig is a copy of cfg with opts applied: the rate limit (none unless one of them
// sets it: see Options.QPS) and the user agent.
func clientConfig(cfg *rest.Config, opts Options) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if opts.QPS != 0 {
		cfg.QPS = opts.QPS
	}
	if opts.Burst != 0 {
		cfg.Burst = opts.Burst
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1 // client-go would apply its kubectl default of 5 QPS
	}
	if opts.UserAgent != "" {
		cfg.UserAgent = opts.UserAgent
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	return cfg
}

// New returns a Client for the API server that cfg describes. cfg is copied, never modified.
// New validates the configuration (TLS material, proxy) but does not contact the server.
//
// Options override cfg's rate limit and user agent; see Options for the defaults. Leave
// cfg.Timeout at zero and bound requests with contexts instead: client-go applies cfg.Timeout
// to every request, watches included, so a non-zero value ends every watch after that long.
//
// With Options.Dynamic set, cfg must be nil and the Client sends every request through that
// dynamic client instead (client-go's dynamic fake, in tests); it has no discovery:
//
//	c, err := kube.New(nil, kube.Options{Dynamic: dynamicfake.NewSimpleDynamicClient(scheme)})
func New(cfg *rest.Config, opts Options) (*Client, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	switch {
	case opts.Dynamic != nil && cfg != nil:
		return nil, fmt.Errorf("%w: both a rest.Config and Options.Dynamic; pass one", ErrInvalidConfig)
	case opts.Dynamic != nil:
		return &Client{dyn: opts.Dynamic}, nil
	case cfg == nil:
		return nil, fmt.Errorf("%w: nil rest.Config", ErrInvalidConfig)
	}
	cfg = clientConfig(cfg, opts)
	expiry := credentialsExpiry(cfg)
	redactCredentials(cfg) // a member quoting our credentials back must not get them into errors

	// One HTTP client, and so one connection pool, serves both the dynamic client and
	// discovery. Discovery gets a shallow copy with a timeout because client-go's discovery
	// calls take no context; the transport underneath is shared.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	dhc := &http.Client{Transport: hc.Transport, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: opts.DiscoveryTimeout}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, dhc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	cached := memory.NewMemCacheClient(disc)
	var secrets []string
	for _, s := range []string{cfg.BearerToken, cfg.Password} {
		if strings.TrimSpace(s) != "" {
			secrets = append(secrets, s)
		}
	}
	return &Client{dyn: dyn, disc: disc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached), secrets: secrets, expiry: expiry}, nil
}

// Dynamic returns the dynamic client underneath, for requests the ClusterClient interface does
// not cover (server-side apply, subresources other than status). Its errors are client-go's,
// not wrapped.
func (c *Client) Dynamic() dynamic.Interface { return c.dyn }

func (c *Client) resource(gvr schema.GroupVersionResource, namespace string) dynamic.ResourceInterface {
	if namespace == "" {
		return c.dyn.Resource(gvr)
	}
	return c.dyn.Resource(gvr).Namespace(namespace)
}

// describe names a request in errors: "get deployments.apps production/web", "list
// deployments.apps in production".
func describe(verb string, gvr schema.GroupVersionResource, namespace, name string) string {
	s := verb + " " + gvr.GroupResource().String()
	switch {
	case name != "":
		s += " " + federation.Key{Namespace: namespace, Name: name}.String()
	case namespace != "":
		s += " in " + namespace
	}
	return s
}

func checkObject(verb string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	if obj == nil {
		return fmt.Errorf("kube: %s %s: %w: nil object", verb, gvr.GroupResource(), federation.ErrInvalidObject)
	}
	return nil
}

// Get returns the object. A missing object is an error satisfying apierrors.IsNotFound.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	u, err := c.resource(gvr, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.wrapErr(describe("get", gvr, namespace, name), err)
	}
	return u, nil
}

// List returns the objects in namespace ("" = all namespaces, or a cluster-scoped resource)
// that match opts.
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := c.resource(gvr, namespace).List(ctx, opts)
	if err != nil {
		return nil, c.wrapErr(describe("list", gvr, namespace, ""), err)
	}
	return l, nil
}

// Create stores obj in its namespace. An existing object is an error satisfying
// apierrors.IsAlreadyExists.
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := checkObject("create", gvr, obj); err != nil {
		return nil, err
	}
	u, err := c.resource(gvr, obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return nil, c.wrapErr(describe("create", gvr, obj.GetNamespace(), obj.GetName()), err)
	}
	return u, nil
}

// Update replaces the object. A stale resourceVersion is an error satisfying
// apierrors.IsConflict.
func (c *Client) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := checkObject("update", gvr, obj); err != nil {
		return nil, err
	}
	u, err := c.resource(gvr, obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		return nil, c.wrapErr(describe("update", gvr, obj.GetNamespace(), obj.GetName()), err)
	}
	return u, nil
}

// UpdateStatus replaces the object's status subresource.
func (c *Client) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := checkObject("update status of", gvr, obj); err != nil {
		return nil, err
	}
	u, err := c.resource(gvr, obj.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		return nil, c.wrapErr(describe("update status of", gvr, obj.GetNamespace(), obj.GetName()), err)
	}
	return u, nil
}

// Patch applies a JSON patch, merge patch or strategic merge patch to the object.
func (c *Client) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	u, err := c.resource(gvr, namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
	if err != nil {
		return nil, c.wrapErr(describe("patch", gvr, namespace, name), err)
	}
	return u, nil
}

// Delete deletes the object, honouring opts (preconditions, propagation policy).
func (c *Client) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	return c.wrapErr(describe("delete", gvr, namespace, name), c.resource(gvr, namespace).Delete(ctx, name, opts))
}

// Watch streams changes of the objects in namespace that match opts. The watch ends when ctx
// is done or the caller calls Stop.
func (c *Client) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.resource(gvr, namespace).Watch(ctx, opts)
	if err != nil {
		return nil, c.wrapErr(describe("watch", gvr, namespace, ""), err)
	}
	return w, nil
}
