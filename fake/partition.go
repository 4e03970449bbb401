package fake

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/fedkit/fedkit/federation"
)

// Partition cuts the cluster off: every call fails as a refused connection would (see
// [Cluster.Healthy] and the package documentation for the error), and open watches end, their
// result channels closed, as a broken connection ends them. State is kept; writes by the test
// (Seed, Drift) and the simulated controllers still work, as the cluster itself keeps running.
// The member caches of [Fleet.CachedReader] keep the state they had.
func (c *Cluster) Partition() {
	c.lock()
	defer c.mu.Unlock()
	if c.partitioned {
		return
	}
	c.partitioned = true
	c.readySince = c.clock.Now()
	c.closeWatchesLocked()
	c.freezeCachesLocked()
}

// Heal reconnects a partitioned cluster. The member caches of [Fleet.CachedReader] catch up,
// and the handlers of [Fleet.OnMemberChange] get what changed meanwhile before Heal returns.
func (c *Cluster) Heal() {
	c.lock()
	defer c.unlock()
	if !c.partitioned {
		return
	}
	c.partitioned = false
	c.readySince = c.clock.Now()
	c.thawCachesLocked()
}

// Partitioned reports whether the cluster is partitioned.
func (c *Cluster) Partitioned() bool {
	c.lock()
	defer c.mu.Unlock()
	return c.partitioned
}

// unreachable is the error of a call to a partitioned cluster. It is what client-go returns
// when the API server refuses connections, a *url.Error around a *net.OpError around
// ECONNREFUSED, and it also wraps federation.ErrUnreachable, as fedkit's real client does for
// network failures. So errors.Is(err, federation.ErrUnreachable),
// errors.As(err, new(*url.Error)), errors.As(err, new(net.Error)) and
// k8s.io/apimachinery/pkg/util/net.IsConnectionRefused(err) all hold, while the apierrors
// predicates are false, as for any network error.
func unreachable(cluster string, a Action) error {
	uerr := &url.Error{
		Op:  a.method(),
		URL: "https://" + cluster + ".fake.invalid" + a.path(),
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
	}
	return fmt.Errorf("fake: cluster %q: %w: %w", cluster, federation.ErrUnreachable, uerr)
}

// method is the HTTP method of the request behind the action.
func (a Action) method() string {
	switch a.Verb {
	case VerbCreate:
		return "Post"
	case VerbUpdate, VerbUpdateStatus:
		return "Put"
	case VerbPatch:
		return "Patch"
	case VerbDelete:
		return "Delete"
	}
	return "Get"
}

// path is the URL path of the request behind the action, as client-go builds it.
func (a Action) path() string {
	switch a.Verb {
	case VerbHealth:
		return "/readyz"
	case VerbVersion:
		return "/version"
	case VerbDiscovery:
		return "/apis"
	}
	var b strings.Builder
	if a.Resource.Group == "" {
		b.WriteString("/api/" + a.Resource.Version)
	} else {
		b.WriteString("/apis/" + a.Resource.Group + "/" + a.Resource.Version)
	}
	if a.Namespace != "" {
		b.WriteString("/namespaces/" + a.Namespace)
	}
	b.WriteString("/" + a.Resource.Resource)
	if a.Name != "" && a.Verb != VerbCreate {
		b.WriteString("/" + a.Name)
	}
	if a.Subresource != "" {
		b.WriteString("/" + a.Subresource)
	}
	if a.Verb == VerbWatch {
		b.WriteString("?watch=true")
	}
	return b.String()
}
