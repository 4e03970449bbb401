package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/intern"
)

// CacheOptions configure a Cache. The zero value is usable.
type CacheOptions struct {
	// Logger receives the list and watch failures of informers that no loop uses at that
	// moment; the loops using an informer receive its failures in their own loggers
	// (default: logr.Discard()).
	Logger logr.Logger
}

// Cache holds the host informers of the loops of one process: one informer per resource,
// namespace, label selector and transform, whichever loops and shards use it. A loop's Run
// adds its event handlers to the Cache's informers and removes them when it returns; an
// informer no loop uses any more is stopped and dropped, so a resource whose CRD was missing
// is listed afresh when a loop asks for it again. Run runs the informers; the Cache's owner
// stops them by ending Run's context, after the loops that use it have returned.
//
// Every informer of a Cache drops metadata.managedFields from what it stores: no loop reads
// them, and an update without them keeps the server's. Equal flat maps of stored objects
// (labels, per-cluster status entries) are one map in memory: stored objects are never
// changed, and readers get copies.
type Cache struct {
	host federation.ClusterClient
	opts CacheOptions

	mu        sync.Mutex
	informers map[informerKey]*sharedInformer
	ctx       context.Context // nil unless Run runs
	wg        sync.WaitGroup  // the informers Run started
	unnamed   int             // numbers unnamed transforms, which are never shared

	clusters clusterDecoder
	intern   intern.Table // shared by every informer's stored objects
}

// informerKey says which sources share an informer.
type informerKey struct {
	gvr                            schema.GroupVersionResource
	namespace, selector, transform string
}

func (k informerKey) String() string {
	what := k.gvr.GroupResource().String()
	if k.namespace != "" {
		what += " in " + k.namespace
	}
	if k.selector != "" {
		what += " (" + k.selector + ")"
	}
	return what
}

// sharedInformer is one informer of a Cache, with the loops using it and the last error its
// reflector reported, so a cache that does not sync can say why.
type sharedInformer struct {
	cache.SharedIndexInformer
	key informerKey
	// handlers hands the informer's notifications to the loops' handlers: add and remove
	// them there, not on the informer.
	handlers *fanout

	mu      sync.Mutex
	users   map[*user]logr.Logger
	lastErr error
	cancel  context.CancelFunc // nil until started
}

// user is one Run of one Loop. It is not empty: pointers to distinct zero-size values may
// be equal.
type user struct{ _ byte }

// NewCache returns a Cache of host. It starts nothing.
func NewCache(host federation.ClusterClient, opts CacheOptions) (*Cache, error) {
	if host == nil {
		return nil, errors.New("loop: NewCache: nil host")
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &Cache{host: host, opts: opts, informers: map[informerKey]*sharedInformer{}}, nil
}

// Run runs the Cache's informers, those loops add while it runs included, until ctx is done,
// then stops them and returns nil once they have exited. Loops using the Cache should return
// first: their caches no longer change once Run returns. Run returns an error if it is
// already running.
func (c *Cache) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	if c.ctx != nil {
		c.mu.Unlock()
		return errors.New("loop: Cache.Run: already running")
	}
	c.ctx = ctx
	for _, si := range c.informers {
		c.startLocked(si)
	}
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.ctx = nil
	// A stopped informer cannot run again: the next Run builds new ones.
	clear(c.informers)
	c.clusters.reset()
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// startLocked starts si under the Cache's Run.
func (c *Cache) startLocked(si *sharedInformer) {
	ctx, cancel := context.WithCancel(c.ctx)
	si.mu.Lock()
	si.cancel = cancel
	si.mu.Unlock()
	c.wg.Go(func() { si.RunWithContext(ctx) })
}

// running reports whether Run runs.
func (c *Cache) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctx != nil
}

// acquire returns the informer of s, built (and started, when Run runs) if no loop uses one
// yet, with the indexes s asks for. log receives its failures until release.
func (c *Cache) acquire(s Source, u *user, log logr.Logger) (*sharedInformer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := informerKey{gvr: s.GVR, namespace: s.Namespace, selector: s.LabelSelector}
	switch {
	case s.Transform == nil:
	case s.TransformName != "":
		key.transform = s.TransformName
	default:
		c.unnamed++
		key.transform = "unnamed-" + strconv.Itoa(c.unnamed)
	}
	si := c.informers[key]
	if si == nil {
		var err error
		if si, err = c.newShared(key, s.Transform); err != nil {
			return nil, err
		}
		c.informers[key] = si
		if c.ctx != nil {
			c.startLocked(si)
		}
	}
	if len(s.IndexLabels) > 0 {
		have := si.GetIndexer().GetIndexers()
		idx := cache.Indexers{}
		for _, l := range s.IndexLabels {
			if _, ok := have[labelIndex(l)]; !ok {
				idx[labelIndex(l)] = labelIndexFunc(l)
			}
		}
		if len(idx) > 0 {
			if err := si.AddIndexers(idx); err != nil {
				return nil, fmt.Errorf("index %s: %w", key, err)
			}
		}
	}
	si.mu.Lock()
	si.users[u] = log
	si.mu.Unlock()
	return si, nil
}

// release forgets the user u of si, and stops si when no loop uses it any more.
func (c *Cache) release(si *sharedInformer, u *user) {
	c.mu.Lock()
	defer c.mu.Unlock()
	si.mu.Lock()
	delete(si.users, u)
	unused, cancel := len(si.users) == 0, si.cancel
	si.mu.Unlock()
	if !unused || c.informers[si.key] != si {
		return
	}
	delete(c.informers, si.key)
	if si.key.gvr == federation.ClusterGVR {
		c.clusters.reset()
	}
	if cancel != nil {
		cancel()
	}
}

// newShared builds the informer of key. Its transform drops managedFields, then applies
// transform.
func (c *Cache) newShared(key informerKey, transform func(*unstructured.Unstructured)) (*sharedInformer, error) {
	si := &sharedInformer{
		SharedIndexInformer: NewInformer(c.host, key.gvr, key.namespace, key.selector),
		key:                 key,
		users:               map[*user]logr.Logger{},
	}
	err := si.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		si.mu.Lock()
		si.lastErr = err
		logs := make([]logr.Logger, 0, len(si.users))
		for _, l := range si.users {
			logs = append(logs, l)
		}
		si.mu.Unlock()
		if len(logs) == 0 {
			logs = append(logs, c.opts.Logger.WithValues("resource", key.gvr.GroupResource().String()))
		}
		for _, log := range logs {
			switch {
			case errors.Is(err, io.EOF):
				// The watch ended normally; the reflector resumes it.
			case errors.Is(err, io.ErrUnexpectedEOF), apierrors.IsResourceExpired(err), apierrors.IsGone(err):
				log.V(1).Info("Watch ended; resuming", "error", err.Error())
			default:
				log.Error(err, "Listing or watching failed; retrying with backoff")
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if err := si.SetTransform(c.transform(transform)); err != nil {
		return nil, err
	}
	if si.handlers, err = newFanout(si.SharedIndexInformer); err != nil {
		return nil, err
	}
	if key.gvr == federation.ClusterGVR {
		// Decoded Clusters are dropped with their objects.
		_, err := si.handlers.add(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
			if u, ok := objectOf(obj); ok {
				c.clusters.forget(u.GetUID())
			}
		}})
		if err != nil {
			return nil, err
		}
	}
	return si, nil
}

// transform is what an informer of the Cache applies to every object before it stores it:
// managedFields dropped, the source's transform, then its flat maps interned (see
// internal/intern) with every other object of the Cache.
func (c *Cache) transform(transform func(*unstructured.Unstructured)) cache.TransformFunc {
	return func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			// The object is freshly decoded and not shared yet: changing it in place is
			// allowed. No loop reads managedFields, and an update without them keeps the
			// server's.
			u.SetManagedFields(nil)
			if transform != nil {
				transform(u)
			}
			// Stored objects are never changed (readers get copies, handlers only read),
			// so equal flat maps can be one: at fleet scale most of a federated object is
			// its per-cluster status entries, equal across objects.
			c.intern.Intern(u)
		}
		return obj, nil
	}
}

// Synced reports whether the Cache holds an informer of gvr that some loop uses, and every
// informer of gvr it holds (any namespace, label selector or transform) has listed: the
// loops reading gvr through the Cache see every object of their first list. It is false
// while the Cache is not running, and before a loop asks for gvr. A control plane asks it
// for each resource its running loops watch before it calls itself ready.
func (c *Cache) Synced(gvr schema.GroupVersionResource) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return false
	}
	found := false
	for key, si := range c.informers {
		if key.gvr != gvr {
			continue
		}
		if !si.HasSynced() {
			return false
		}
		found = true
	}
	return found
}

// notSynced describes why the informer has not synced.
func (c *Cache) notSynced(si *sharedInformer) error {
	if !c.running() {
		return fmt.Errorf("%s: the shared cache is not running", si.key)
	}
	si.mu.Lock()
	defer si.mu.Unlock()
	if si.lastErr == nil {
		return fmt.Errorf("%s: not listed yet", si.key)
	}
	return fmt.Errorf("%s: %w", si.key, si.lastErr)
}

// DecodeCluster returns the Cluster u decoded, once per uid and resourceVersion for every
// loop of the Cache: callers share the result and must not change it (DeepCopy it first).
func (c *Cache) DecodeCluster(u *unstructured.Unstructured) (*federation.Cluster, error) {
	return c.clusters.decode(u)
}

// clusterDecoder keeps decoded Clusters by uid and resourceVersion.
type clusterDecoder struct {
	mu      sync.Mutex
	decoded map[types.UID]*federation.Cluster
}

func (d *clusterDecoder) decode(u *unstructured.Unstructured) (*federation.Cluster, error) {
	uid, rv := u.GetUID(), u.GetResourceVersion()
	if uid == "" || rv == "" {
		return federation.ClusterFromUnstructured(u)
	}
	d.mu.Lock()
	c, ok := d.decoded[uid]
	d.mu.Unlock()
	if ok && c.ResourceVersion == rv {
		return c, nil
	}
	c, err := federation.ClusterFromUnstructured(u)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.decoded == nil {
		d.decoded = map[types.UID]*federation.Cluster{}
	}
	d.decoded[uid] = c
	d.mu.Unlock()
	return c, nil
}

func (d *clusterDecoder) forget(uid types.UID) {
	d.mu.Lock()
	delete(d.decoded, uid)
	d.mu.Unlock()
}

// keep forgets the Clusters whose uid is not in uids.
func (d *clusterDecoder) keep(uids map[types.UID]bool) {
	d.mu.Lock()
	for uid := range d.decoded {
		if !uids[uid] {
			delete(d.decoded, uid)
		}
	}
	d.mu.Unlock()
}

func (d *clusterDecoder) reset() {
	d.mu.Lock()
	d.decoded = nil
	d.mu.Unlock()
}

// ClusterDecoder is what Loop.Reader offers for Clusters: DecodeCluster decodes a Cluster
// once per resourceVersion for every loop sharing the Loop's Cache.
type ClusterDecoder interface {
	DecodeCluster(u *unstructured.Unstructured) (*federation.Cluster, error)
}

// DecodeCluster decodes u through r when r is a ClusterDecoder (a Loop's Reader), else
// afresh. The result may be shared: callers must not change it.
func DecodeCluster(r federation.Reader, u *unstructured.Unstructured) (*federation.Cluster, error) {
	if d, ok := r.(ClusterDecoder); ok {
		return d.DecodeCluster(u)
	}
	return federation.ClusterFromUnstructured(u)
}
