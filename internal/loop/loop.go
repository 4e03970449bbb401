package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// DefaultCacheSyncTimeout is how long Run waits for its informers' first lists by default, as
// controller-runtime's CacheSyncTimeout: long enough for a large host, short enough that a
// resource the host does not serve fails the loop instead of stalling it.
const DefaultCacheSyncTimeout = 2 * time.Minute

// ErrCacheNotSynced is wrapped by the error Run returns when an informer's first list did not
// succeed within Options.CacheSyncTimeout. The message names the resource and its last list
// error (often "the server could not find the requested resource": a CRD is not installed).
var ErrCacheNotSynced = errors.New("loop: cache did not sync")

// Reconciler is what a loop type implements.
type Reconciler interface {
	Reconcile(ctx context.Context, key federation.Key) (federation.Result, error)
}

// ReconcilerFunc adapts a function to Reconciler.
type ReconcilerFunc func(ctx context.Context, key federation.Key) (federation.Result, error)

// Reconcile calls f(ctx, key).
func (f ReconcilerFunc) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return f(ctx, key)
}

// Source is a resource on the host that the loop caches and whose changes enqueue keys.
//
// A change maps to keys by the first rule that applies: Referrers, then Broadcast, then Keys,
// else the object's own namespace and name.
type Source struct {
	// GVR and Namespace ("" = all namespaces) name what to watch.
	GVR       schema.GroupVersionResource
	Namespace string
	// LabelSelector restricts the watch ("" = everything).
	LabelSelector string

	// Keys maps a changed (added, updated or deleted) object to the keys to reconcile.
	Keys func(obj *unstructured.Unstructured) []federation.Key
	// Broadcast makes any change enqueue every object of the first source instead (a Cluster
	// that changes concerns every federated object).
	Broadcast bool
	// Referrers makes a change enqueue the objects of another source that refer to the
	// changed one (a Secret concerns the Clusters whose spec.secretRef names it).
	Referrers *Referrers

	// Changed reports whether an update matters to the loop; nil means every update does.
	// Additions and deletions always do. A Cluster's heartbeat, for instance, changes nothing
	// a scheduler reads, and broadcasting it would reconcile every object on every beat (see
	// ClusterChanged).
	Changed func(old, new *unstructured.Unstructured) bool

	// IndexLabels names label keys the source's cache indexes, so a List through the loop's
	// Reader whose selector requires one of them to equal a value reads only the matching
	// objects instead of scanning the cache (a federated object's revision history among
	// every ControllerRevision of a namespace).
	IndexLabels []string

	// Transform edits every object before the informer stores it, so what the loop does not
	// need is never kept in memory (a Secret's data). A transformed cache is incomplete, so
	// the loop's Reader never serves this source: reads of its resource go to the host.
	Transform func(obj *unstructured.Unstructured)
	// TransformName names Transform in a Cache: sources of one resource, namespace and
	// LabelSelector share an informer only when their TransformNames are equal, and those of
	// one name must transform alike. A Transform without a name gets an informer of its own,
	// so a trimmed cache is never shared with a source that wants whole objects, nor the
	// other way round.
	TransformName string

	// Deleted, when set, is called with the last known state of every object of the source
	// that is deleted, before its keys are queued: a loop forgets what it keeps per object
	// outside its passes (the metrics series of a Cluster that left the federation).
	Deleted func(obj *unstructured.Unstructured)
}

// Referrers maps a changed object to the objects of another source that refer to it. They
// are looked up in that source's cache, not in the reconciler's state: a Reconcile that has
// read "no such Secret" but not yet recorded it must not miss the Secret's creation.
type Referrers struct {
	// GVR names the source of the referring objects; it must be one of the loop's sources.
	GVR schema.GroupVersionResource
	// RefersTo reports whether referrer refers to obj.
	RefersTo func(referrer, obj *unstructured.Unstructured) bool
}

// Options configure a Loop. The zero value is usable.
type Options struct {
	// Name appears in logs and errors.
	Name string
	// Workers is how many keys are reconciled in parallel at most (default 2). Workers start
	// when keys wait and exit when none does: an idle Loop holds none.
	Workers int
	// Clock drives requeues, backoff and CacheSyncTimeout (default: the real clock).
	Clock clock.WithTicker
	// Logger receives errors, terminal failures and list or watch failures (default:
	// logr.Discard()).
	Logger logr.Logger
	// BaseDelay and MaxDelay bound the exponential retry backoff (default 100ms and 5m).
	BaseDelay, MaxDelay time.Duration
	// CacheSyncTimeout bounds the wait for every source's first list (default
	// DefaultCacheSyncTimeout); Run returns an error wrapping ErrCacheNotSynced after it.
	CacheSyncTimeout time.Duration
	// Shard restricts Run to the keys the shard owns (federation.Shard.Owns); the zero
	// Shard owns every key. Keys it does not own are dropped before they are queued, whatever
	// produced them (events, broadcasts, Enqueue, requeues); the Reconciler is not filtered
	// when called directly. See shard.go.
	Shard federation.Shard
	// Registerer receives the work queue's metrics (controller-runtime's workqueue_*, labelled
	// name and controller with the queue's name, through client-go's workqueue metrics
	// provider set on this queue only, never the process-wide one) and what Run's workers do
	// with its keys (controller_runtime_reconcile_* and the workers). nil: no metrics. Two
	// loops of one Name on one registerer share their series, and the gauges among them are
	// then wrong: give loops that run at once different names.
	Registerer prometheus.Registerer
	// Cache holds the host informers, shared with the other loops given the same Cache (one
	// informer per resource, namespace, selector and transform); it must be of the same host,
	// and its owner runs it (Cache.Run). nil: Run keeps a Cache of its own, run and stopped
	// with it.
	Cache *Cache
}

// prefix starts the loop's errors.
func (o *Options) prefix() string {
	if o.Name == "" {
		return "loop"
	}
	return "loop " + o.Name
}

// queueName names the work queue in its metrics and logs. A sharded loop's name carries its
// shard ("sync/FederatedDeployment/shard-1-of-4"), so the loops of two shards held by one
// process keep separate series, and one shard stopping forgets only its own gauges.
func (o *Options) queueName() string {
	name := o.Name
	if name == "" {
		name = "loop"
	}
	if o.Shard.Sharded() {
		name += fmt.Sprintf("/shard-%d-of-%d", o.Shard.Index, o.Shard.Count)
	}
	return name
}

func (o *Options) complete() {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 100 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 5 * time.Minute
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
}

// Loop watches sources on a host and reconciles the keys their changes produce. Its Reader
// serves reads of the sources from the loop's own caches while Run runs, so a reconcile
// started by Run costs no API reads. A Loop is safe for concurrent use; Run may run once at a
// time.
type Loop struct {
	host    federation.ClusterClient
	sources []Source
	opts    Options

	mu  sync.Mutex
	run *running // nil unless Run runs
}

// running is the state of one Run.
type running struct {
	cache     *Cache
	user      *user
	informers []*informer
	queue     workqueue.TypedRateLimitingInterface[federation.Key]
}

// New returns a Loop of sources on host. It starts nothing. It returns an error when there is
// no source, host is nil, or a Referrers names a resource that is not a source.
func New(host federation.ClusterClient, sources []Source, opts Options) (*Loop, error) {
	opts.complete()
	if host == nil {
		return nil, fmt.Errorf("%s: nil host", opts.prefix())
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("%s: no sources to watch", opts.prefix())
	}
	if err := opts.Shard.Validate(); err != nil {
		return nil, fmt.Errorf("%s: Shard: %w", opts.prefix(), err)
	}
	for _, s := range sources {
		if s.Referrers != nil && indexOf(sources, s.Referrers.GVR) < 0 {
			return nil, fmt.Errorf("%s: source %s refers to %s, which is not a source", opts.prefix(), s.GVR, s.Referrers.GVR)
		}
	}
	return &Loop{host: host, sources: sources, opts: opts}, nil
}

// Run is New followed by Loop.Run, for loops that read through the host themselves.
func Run(ctx context.Context, host federation.ClusterClient, r Reconciler, sources []Source, opts Options) error {
	l, err := New(host, sources, opts)
	if err != nil {
		return err
	}
	return l.Run(ctx, r)
}

// Run watches the sources and reconciles the keys they produce with r until ctx is done:
//
//  1. it adds a handler per source to the informers of Options.Cache (or of a Cache of its
//     own, run with it), which start when no loop used them yet; their list and watch
//     failures go to Options.Logger;
//  2. it waits for every informer's first list, at most Options.CacheSyncTimeout (on
//     Options.Clock), and returns an error wrapping ErrCacheNotSynced, naming the resources
//     and their last errors, if one did not succeed;
//  3. it takes keys from a rate-limited queue until ctx is done and hands them to workers,
//     started on demand up to Options.Workers and gone when no key waits. A key is never
//     reconciled after ctx is done: keys still queued are dropped.
//
// Run returns nil when ctx is done, after every goroutine it started has exited, or an error
// if it could not start or its caches did not sync. It returns an error if the Loop is
// already running.
func (l *Loop) Run(ctx context.Context, r Reconciler) error {
	ctx = logr.NewContext(ctx, l.opts.Logger) // client-go's informers log through ctx
	config := workqueue.TypedRateLimitingQueueConfig[federation.Key]{Clock: l.opts.Clock}
	var metrics *fedmetrics.Controller // nil: no reconcile metrics
	if l.opts.Registerer != nil {
		// A queue without a name keeps no metrics (and starts no goroutine for them).
		provider, err := fedmetrics.NewWorkqueue(l.opts.Registerer)
		if err != nil {
			return fmt.Errorf("%s: work queue metrics: %w", l.opts.prefix(), err)
		}
		controllers, err := fedmetrics.NewControllers(l.opts.Registerer)
		if err != nil {
			return fmt.Errorf("%s: reconcile metrics: %w", l.opts.prefix(), err)
		}
		config.Name, config.MetricsProvider = l.opts.queueName(), provider
		metrics = controllers.Start(config.Name, l.opts.Workers)
		// These run last, after the queue shut down and every worker returned.
		defer provider.ForgetGauges(config.Name)
		defer metrics.Stop()
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[federation.Key](l.opts.BaseDelay, l.opts.MaxDelay),
		config,
	)
	queue = ownedOnly(queue, l.opts.Shard)
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()         // stops the informers when Run returns early
	defer queue.ShutDown() // runs first: workers return

	shared := l.opts.Cache
	if shared == nil {
		own, err := NewCache(l.host, CacheOptions{Logger: l.opts.Logger})
		if err != nil {
			return fmt.Errorf("%s: %w", l.opts.prefix(), err)
		}
		shared = own
		wg.Go(func() { _ = own.Run(ctx) })
	}
	run, err := l.start(shared, queue)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped before it started: an informer that ctx stopped refuses handlers.
			return nil
		}
		return err
	}
	defer func() {
		// A pass still running when ctx is done reads from the caches to its end: Reader
		// turns to the host only once every worker has returned.
		queue.ShutDown()
		cancel()
		wg.Wait()
		l.stop(run)
	}()
	if err := l.waitForSync(ctx, run); err != nil {
		return err
	}
	// Run's own goroutine feeds the workers until ctx is done: the queue then shuts down,
	// which ends feed.
	stopFeeding := context.AfterFunc(ctx, queue.ShutDown)
	defer stopFeeding()
	l.feed(ctx, queue, r, metrics)
	return nil
}

// start takes the informers of one Run from the Cache, publishes them to Reader, and adds
// the sources' handlers. A handler added to an informer that has listed is handed its store
// in this goroutine, and may read through Reader (a source's Keys): the Loop's lock is not
// held meanwhile, and Reader serves a source from its cache once its handler is added.
func (l *Loop) start(c *Cache, queue workqueue.TypedRateLimitingInterface[federation.Key]) (*running, error) {
	run := &running{cache: c, user: &user{}, informers: make([]*informer, len(l.sources)), queue: queue}
	l.mu.Lock()
	if l.run != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("%s: already running", l.opts.prefix())
	}
	for i, s := range l.sources {
		log := l.opts.Logger.WithValues("queue", l.opts.queueName(), "resource", s.GVR.GroupResource().String())
		si, err := c.acquire(s, run.user, log)
		if err != nil {
			l.mu.Unlock()
			run.release()
			return nil, fmt.Errorf("%s: %w", l.opts.prefix(), err)
		}
		run.informers[i] = &informer{sharedInformer: si, source: s}
	}
	l.run = run
	l.mu.Unlock()
	// The Loop's lock is not held from here: a handler may read through Reader while it is
	// added, and release waits for the handlers that run.
	if err := run.addHandlers(l.sources); err != nil {
		l.mu.Lock()
		l.run = nil
		l.mu.Unlock()
		run.release()
		return nil, fmt.Errorf("%s: %w", l.opts.prefix(), err)
	}
	return run, nil
}

// addHandlers adds the handler of each source to its informer.
func (run *running) addHandlers(sources []Source) error {
	for i, s := range sources {
		reg, err := run.informers[i].handlers.add(handler(s, run, sources, run.queue))
		if err != nil {
			return err
		}
		run.informers[i].reg.Store(reg)
	}
	return nil
}

// release removes the Run's handlers and gives its informers back to the Cache.
func (run *running) release() {
	for _, inf := range run.informers {
		if inf == nil {
			continue
		}
		inf.handlers.remove(inf.reg.Load())
		run.cache.release(inf.sharedInformer, run.user)
	}
}

// Enqueue asks Run to reconcile keys, for changes the Loop does not watch itself (a member
// cluster's object, through federation.MemberCache). It does nothing when Run is not running.
func (l *Loop) Enqueue(keys ...federation.Key) {
	l.mu.Lock()
	run := l.run
	l.mu.Unlock()
	if run == nil {
		return
	}
	for _, k := range keys {
		run.queue.Add(k)
	}
}

func (l *Loop) stop(run *running) {
	l.mu.Lock()
	l.run = nil
	l.mu.Unlock()
	run.release()
}

// waitForSync waits until every informer has synced (nil), ctx is done (nil) or
// CacheSyncTimeout has passed on the loop's clock (an error naming what did not sync).
func (l *Loop) waitForSync(ctx context.Context, run *running) error {
	timer := l.opts.Clock.NewTimer(l.opts.CacheSyncTimeout)
	defer timer.Stop()
	for _, inf := range run.informers {
		select {
		case <-inf.reg.Load().HasSyncedChecker().Done():
		case <-ctx.Done():
			return nil
		case <-timer.C():
			var errs []error
			for _, inf := range run.informers {
				if !inf.synced() {
					errs = append(errs, run.cache.notSynced(inf.sharedInformer))
				}
			}
			return fmt.Errorf("%s: %w within %s: %w", l.opts.prefix(), ErrCacheNotSynced, l.opts.CacheSyncTimeout, errors.Join(errs...))
		}
	}
	return nil
}

// feed takes keys from the queue and hands each to a worker until the queue shuts down or
// ctx is done, then waits for the workers. Workers start on demand, up to Options.Workers:
// a key goes to a new worker while fewer than Workers run, else into a one-key hand-over
// that the first worker to finish takes. A worker that finds the hand-over empty when it
// finishes exits, so an idle Loop holds no goroutine but Run's own, which feeds. No worker
// ever waits for a key: a worker parked on a key another had taken stayed parked until the
// next one.
func (l *Loop) feed(ctx context.Context, queue workqueue.TypedRateLimitingInterface[federation.Key], r Reconciler, metrics *fedmetrics.Controller) {
	// A pass logs through the logger in ctx (see Pass.Run): it names the queue.
	ctx = logr.NewContext(ctx, l.opts.Logger.WithValues("queue", l.opts.queueName()))
	p := &workers{}
	p.taken = sync.NewCond(&p.mu)
	defer p.done.Wait()
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		if ctx.Err() != nil {
			// Stopping: the keys still queued are dropped, not reconciled with a dead context.
			queue.Done(key)
			return
		}
		p.mu.Lock()
		for p.handing {
			p.taken.Wait() // every worker is busy and one key already waits for the first to finish
		}
		if p.running < l.opts.Workers {
			p.running++
			p.done.Go(func() { l.work(ctx, queue, r, metrics, p, key) })
		} else {
			p.next, p.handing = key, true
		}
		p.mu.Unlock()
	}
}

// workers are the goroutines that reconcile the keys feed hands them.
type workers struct {
	done sync.WaitGroup

	mu      sync.Mutex
	taken   *sync.Cond // signalled when a worker takes next
	running int        // workers started and not exited
	handing bool       // next holds a key for the first worker to finish
	next    federation.Key
}

// work reconciles first, then each key it finds handed over as it finishes one, and returns
// when it finds none. While handing is set every worker is running (feed sets it only then)
// and each checks it before it exits, so a handed key is always taken.
func (l *Loop) work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[federation.Key], r Reconciler, metrics *fedmetrics.Controller, p *workers, first federation.Key) {
	for key := first; ; {
		l.reconcile(ctx, queue, r, metrics, key)
		p.mu.Lock()
		if !p.handing {
			p.running--
			p.mu.Unlock()
			return
		}
		key, p.handing = p.next, false
		p.taken.Signal()
		p.mu.Unlock()
	}
}

// reconcile reconciles one key taken from the queue and tells the queue what came of it, and
// metrics, as controller-runtime's reconcileHandler does; a pass cut short by the loop
// stopping is not counted.
func (l *Loop) reconcile(ctx context.Context, queue workqueue.TypedRateLimitingInterface[federation.Key], r Reconciler, metrics *fedmetrics.Controller, key federation.Key) {
	defer queue.Done(key)
	if ctx.Err() != nil {
		return // stopping
	}
	start := l.opts.Clock.Now()
	metrics.Begin()
	res, err := r.Reconcile(ctx, key)
	if ctx.Err() != nil {
		metrics.Abandon() // shutting down; the result does not matter any more
		return
	}
	metrics.End(res, err, l.opts.Clock.Since(start))
	switch {
	case err == nil:
		queue.Forget(key)
		if res.RequeueAfter > 0 {
			queue.AddAfter(key, res.RequeueAfter)
		}
	case federation.IsTerminal(err):
		l.opts.Logger.Error(err, "Reconcile failed; waiting for a change", "queue", l.opts.queueName(), "object", key.String())
		queue.Forget(key)
	case apierrors.IsConflict(err):
		// Another writer was first, or the cache had not caught up with a write yet: an
		// ordinary retry, not worth an error in the log.
		l.opts.Logger.V(1).Info("Reconcile conflicted; will retry", "queue", l.opts.queueName(), "object", key.String(), "error", err.Error())
		queue.AddRateLimited(key)
	default:
		l.opts.Logger.Error(err, "Reconcile failed; will retry", "queue", l.opts.queueName(), "object", key.String())
		queue.AddRateLimited(key)
	}
}

func indexOf(sources []Source, gvr schema.GroupVersionResource) int {
	for i, s := range sources {
		if s.GVR == gvr {
			return i
		}
	}
	return -1
}

// Watches returns what sources watch, each resource and namespace once, in the order of
// their first source: what a loop's Watches method states.
func Watches(sources []Source) []federation.Watch {
	out := make([]federation.Watch, 0, len(sources))
	for _, s := range sources {
		w := federation.Watch{GVR: s.GVR, Namespace: s.Namespace}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
