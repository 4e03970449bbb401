package controlplane

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkTimeout bounds the List that checks a resource is served (on Options.Clock): a host
// that does not answer is the loops' business, which report it after their CacheSyncTimeout.
const checkTimeout = 30 * time.Second

// Run runs every loop until ctx is done, then returns nil after every loop's goroutines have
// exited and the event broadcaster has shut down (client-go's broadcaster does not join its
// last goroutine, which ends right after).
//
//  1. Unless the embedder gave Options.Events (or Disable.Events), it starts a client-go
//     record.EventBroadcaster that writes the loops' events to the host as core/v1 Events.
//  2. It checks that the host serves what each loop lists, with one List (limit 1) per
//     resource: a federated type's CRD, ReplicaSchedulingPreference's, the DNS records'.
//     A loop whose resource is not served is not started: it is Failed, with an error
//     wrapping ErrNotServed that names the resource, and logged. Other check errors (RBAC,
//     the network) do not hold a loop back; the loop reports them itself.
//  3. It runs the host cache the loops share (one informer per resource, unless the
//     embedder gave Options.Cache, which it runs itself) and every other loop's Run, and the ClusterSet's own Run when it has one
//     (kube.ClusterSet: watching Clusters and Secrets and hosting the member caches; the
//     fake fleet: its simulated controllers).
//  4. A loop whose Run returns an error (its caches did not sync within its
//     CacheSyncTimeout, wrapping ErrCacheNotSynced) is Failed and logged; the others keep
//     running. Every Options.RetryPeriod a failed loop is checked again and restarted, so a
//     CRD installed later is picked up without a restart of the process.
//
// With Options.LeaderElection, steps 2 to 4 happen while this replica leads, and stop (every
// loop returned) when it loses the Lease; Run keeps campaigning until ctx is done. With
// Options.Sharding they happen once per shard held, for the loops of that shard. The event
// broadcaster and the ClusterSet's Run run all along either way (see the package
// documentation, "Running several replicas").
//
// Status reports each loop's state and error meanwhile. When every loop of a set (the
// ClusterSet's Run aside, which only serves them) has failed at once (a host without fedkit's
// CRDs, a host that cannot be reached at all), nothing is left to run: Run stops and returns
// an error wrapping ErrAllFailed that joins each loop's error, so
// the process exits and its supervisor (a Deployment) restarts it, as with a
// controller-runtime manager.
//
// Run returns ErrRunning when the control plane is running already. It has the
// func(context.Context) error shape, so a controller-runtime manager can run it as
// manager.RunnableFunc(cp.Run).
func (cp *ControlPlane) Run(ctx context.Context) error {
	cp.mu.Lock()
	if cp.running {
		cp.mu.Unlock()
		return ErrRunning
	}
	cp.running = true
	cp.mu.Unlock()
	defer cp.stopped()

	log := cp.opts.Logger
	ctx = logr.NewContext(ctx, log)
	if cp.events != nil {
		stop := cp.startEvents(ctx)
		defer stop()
	}
	if cp.status != nil && cp.opts.LeaderElection == nil {
		// The shared status writer runs all along, and writes what the loops left pending
		// once they have returned. A leader runs it for its term only (work).
		defer cp.runStatusWriter(ctx)(true)
	}
	log.Info("Starting the control plane", "loops", len(cp.specs), "types", len(cp.opts.Types), "replicas", cp.mode())
	if cp.opts.LeaderElection != nil {
		cp.setUnitState(cp.units[0], StateStandby)
	}

	g, ctx := errgroup.WithContext(ctx)
	if cp.cache != nil {
		// The loops' shared informers; they stop with the loops.
		g.Go(func() error { return cp.cache.Run(ctx) })
	}
	for _, p := range cp.shared {
		g.Go(func() error { return cp.supervise(ctx, nil, p, nil) })
	}
	g.Go(func() error { return cp.work(ctx) })
	err := g.Wait()
	log.Info("The control plane stopped")
	return err
}

// runStatusWriter runs the shared status writer until the returned func is called, which
// returns once the writer has stopped: with flush, after writing what the loops left
// pending; without, after dropping it (a leader that lost its Lease writes nothing more of
// what its loops decided: its successor decides again from the objects).
func (cp *ControlPlane) runStatusWriter(ctx context.Context) (stop func(flush bool)) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cp.status.Run(wctx)
	}()
	return func(flush bool) {
		if !flush {
			cp.status.Drop()
		}
		cancel()
		<-done
	}
}

// mode says, for the log, how this replica shares the work.
func (cp *ControlPlane) mode() string {
	switch o := cp.opts; {
	case o.Sharding != nil:
		return fmt.Sprintf("sharded through Leases (%d shards)", o.Sharding.Count)
	case o.LeaderElection != nil && o.Shard.Sharded():
		return "shard " + o.Shard.String() + ", with leader election"
	case o.LeaderElection != nil:
		return "leader election"
	case o.Shard.Sharded():
		return "shard " + o.Shard.String()
	default:
		return "single"
	}
}

// runUnit runs the loops of u until ctx is done: it checks what they need from the host once
// for them all, then supervises each. It returns nil when ctx is done, and an error wrapping
// ErrAllFailed when every loop of u has failed.
func (cp *ControlPlane) runUnit(ctx context.Context, u *unit) error {
	checked := cp.check(ctx, u.loops)
	g, ctx := errgroup.WithContext(ctx)
	for _, p := range u.loops {
		g.Go(func() error { return cp.supervise(ctx, u, p, checked[p]) })
	}
	return g.Wait()
}

// stopped marks every loop stopped once Run returns.
func (cp *ControlPlane) stopped() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	now := cp.opts.Clock.Now()
	for _, p := range cp.partsLocked() {
		p.status = LoopStatus{Name: p.name, Shard: p.shard, State: StateStopped, Since: now, Failures: p.status.Failures}
	}
	cp.running = false
}

// supervise runs p, a loop of u (nil for the shared parts), until ctx is done: it starts it
// unless its check failed (notServed), and retries it every RetryPeriod after a failure. It
// returns an error only when p's failure left every loop of u failed.
func (cp *ControlPlane) supervise(ctx context.Context, u *unit, p *part, notServed error) error {
	log := cp.opts.Logger.WithValues("loop", p.name)
	if p.shard.Sharded() {
		log = log.WithValues("shard", p.shard.String())
	}
	err := notServed
	var last string
	for {
		if err == nil {
			cp.setState(u, p, StateRunning, nil)
			if last != "" {
				log.Info("Loop restarted")
			}
			err = p.run(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("its Run returned before the control plane stopped")
			}
		}
		err = fmt.Errorf("%s: %w", p.name, err)
		if cp.setState(u, p, StateFailed, err) {
			log.Error(err, "Every loop has failed; stopping the control plane")
			return cp.allFailed(u)
		}
		if msg := err.Error(); msg != last {
			// Once per distinct failure: a loop whose CRD stays missing is not logged every
			// RetryPeriod.
			log.Error(err, "Loop failed; the other loops keep running", "retryAfter", cp.opts.RetryPeriod)
			last = msg
		} else {
			log.V(1).Info("Loop still failing", "error", msg)
		}
		if cp.opts.RetryPeriod < 0 || !cp.sleep(ctx, cp.opts.RetryPeriod) {
			return nil
		}
		err = cp.check(ctx, []*part{p})[p]
	}
}

// allFailed joins the error of every loop of u under ErrAllFailed.
func (cp *ControlPlane) allFailed(u *unit) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	errs := []error{ErrAllFailed}
	if u.shard.Sharded() {
		errs = append(errs, fmt.Errorf("shard %s", u.shard))
	}
	for _, p := range u.loops {
		errs = append(errs, p.status.Err)
	}
	return errors.Join(errs...)
}

// sleep waits d on the clock; it reports false when ctx is done first.
func (cp *ControlPlane) sleep(ctx context.Context, d time.Duration) bool {
	t := cp.opts.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// check lists each resource the loops need once (limit 1) and returns, per loop, an error
// wrapping ErrNotServed for its first resource the host does not serve. It lists a loop's
// optional resources too, and records those not served in part.missing. Only a 404 for the
// List means "not served"; other errors are left for the loop to report.
func (cp *ControlPlane) check(ctx context.Context, loops []*part) map[*part]error {
	verdict := map[resource]error{}
	out := map[*part]error{}
	for _, p := range loops {
		for _, r := range p.needs {
			err, done := verdict[r]
			if !done {
				err = cp.served(ctx, r)
				verdict[r] = err
			}
			if err != nil {
				out[p] = err
				break
			}
		}
		var missing []resource
		for _, r := range p.optional {
			err, done := verdict[r]
			if !done {
				err = cp.served(ctx, r)
				verdict[r] = err
			}
			if err != nil {
				missing = append(missing, r)
			}
		}
		cp.mu.Lock()
		p.missing = missing
		cp.mu.Unlock()
	}
	return out
}

// served lists r with limit 1 and returns an error wrapping ErrNotServed when the host answers
// 404 for the List.
func (cp *ControlPlane) served(ctx context.Context, r resource) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := cp.opts.Clock.NewTimer(checkTimeout)
	defer t.Stop()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		select {
		case <-t.C():
			cancel()
		case <-done:
		}
	})
	defer wg.Wait()
	defer close(done) // first: the timeout's goroutine returns, then Wait joins it
	_, err := cp.host.List(ctx, r.gvr, r.namespace, metav1.ListOptions{Limit: 1})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: %s (is its CustomResourceDefinition installed? fedkit's CRDs are in config/crd: kubectl apply -f config/crd/, or install federation.CRDs)", ErrNotServed, r.gvr.GroupResource())
	default:
		cp.opts.Logger.V(1).Info("Could not check that the host serves a resource; starting its loops anyway",
			"resource", r.gvr.GroupResource().String(), "error", err.Error())
		return nil
	}
}
