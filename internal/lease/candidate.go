package lease

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/clock"
)

// candidate runs terms on one Lock: a term campaigns until it holds the Lease, runs the work
// while it leads, and ends when leadership does, after the work has returned.
//
// client-go's LeaderElector does the campaigning and renewing. What the candidate adds is
// the guarantee that the work has stopped before a peer can start it: the elector starts
// OnStartedLeading in a goroutine and does not wait for it, and its ReleaseOnCancel gives the
// Lease up as soon as the context ends, while the work may still be writing. So the
// candidate releases the Lease itself, after the work returned; and it cancels the work
// RenewDeadline after the start of the last successful renewal (a watchdog on the Lock's
// writes), without waiting for the elector to notice, so the work has LeaseDuration -
// RenewDeadline to stop.
type candidate struct {
	lock  *Lock
	opts  Options
	clock clock.WithTicker
	log   logr.Logger
}

// termResult is how a term ended.
type termResult struct {
	// led says the term held the Lease and started the work.
	led bool
	// returned says the work returned by itself (not cancelled); err is its result.
	returned bool
	err      error
}

// term campaigns for the Lease until it is acquired or ctx (or resign) is done; then runs
// work while the Lease is held. It returns after the work has returned. The Lease is
// released afterwards when the work returned by itself, when resign was closed, or when ctx
// is done and Options.ReleaseOnCancel is set; a lost Lease is not touched.
func (c *candidate) term(ctx context.Context, resign <-chan struct{}, work func(context.Context) error) (termResult, error) {
	electCtx, stopElecting := context.WithCancel(ctx)
	defer stopElecting()
	var (
		mu       sync.Mutex
		res      termResult
		over     bool
		resigned bool
		running  sync.WaitGroup // the work
		watching sync.WaitGroup // the resign watcher
	)
	if resign != nil {
		watching.Go(func() {
			select {
			case <-resign:
				mu.Lock()
				resigned = true
				mu.Unlock()
				stopElecting()
			case <-electCtx.Done():
			}
		})
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          c.lock,
		LeaseDuration: c.opts.LeaseDuration,
		RenewDeadline: c.opts.RenewDeadline,
		RetryPeriod:   c.opts.RetryPeriod,
		Name:          c.lock.Describe(),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				if over {
					// The elector already stopped: leadCtx is done, and the term is over.
					mu.Unlock()
					return
				}
				running.Add(1)
				res.led = true
				mu.Unlock()
				defer running.Done()
				ok, err := c.lead(leadCtx, work)
				mu.Lock()
				res.returned, res.err = ok, err
				mu.Unlock()
				stopElecting() // leadership ends with the work: step down
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return termResult{}, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	le.Run(logr.NewContext(electCtx, electorLogger(c.log)))
	mu.Lock()
	over = true
	mu.Unlock()
	stopElecting()
	running.Wait()
	watching.Wait()
	c.lock.forget()

	mu.Lock()
	defer mu.Unlock()
	if res.led && (res.returned || resigned || (ctx.Err() != nil && c.opts.ReleaseOnCancel)) {
		// The work has returned: giving the Lease up now cannot let a peer overlap it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.RenewDeadline)
		defer cancel()
		if err := c.lock.release(rctx); err != nil {
			c.log.Error(err, "Releasing the lease failed; it expires on its own", "lease", c.lock.Describe())
		} else {
			c.log.Info("Released the lease", "lease", c.lock.Describe())
		}
	}
	return res, nil
}

// lead runs work until it returns, leadCtx is done (the elector stopped renewing) or the
// watchdog fires. It reports whether work returned by itself, and its error then.
func (c *candidate) lead(leadCtx context.Context, work func(context.Context) error) (bool, error) {
	workCtx, cancel := context.WithCancelCause(leadCtx)
	defer cancel(nil)
	c.log.Info("Acquired the lease; starting", "lease", c.lock.Describe())
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.watchdog(workCtx, cancel) })
	cancelledAt := make(chan time.Time, 1)
	stop := context.AfterFunc(workCtx, func() { cancelledAt <- c.clock.Now() })
	err := work(workCtx)
	returnedAt := c.clock.Now()
	notified := !stop() // false: the cancellation's callback never ran, and never will
	if workCtx.Err() == nil {
		// Not cancelled: the work returned by itself. (Whether stop found the callback
		// started cannot tell: a work that returns on Done may call stop before the
		// cancellation got to the callback.)
		cancel(nil)
		return true, err
	}
	cancelled := returnedAt
	if notified {
		cancelled = <-cancelledAt
	}
	took := returnedAt.Sub(cancelled)
	stoppedBy := context.Cause(workCtx)
	if took > c.overrun() {
		// A peer may have taken the Lease while the work still ran: the work ignores its
		// context for too long (a Run that does not return promptly).
		c.log.Error(fmt.Errorf("lease: work took %s to return after it was stopped, more than LeaseDuration - RenewDeadline = %s", took, c.overrun()),
			"A peer may have worked at the same time", "lease", c.lock.Describe())
	}
	c.log.Info("Stopped working", "lease", c.lock.Describe(), "reason", stoppedBy.Error(), "stoppedIn", took.String())
	return false, err
}

// errRenewOverdue is the cause of a work's cancellation by the watchdog.
var errRenewOverdue = fmt.Errorf("lease: not renewed within RenewDeadline")

// watchdog cancels the work once RenewDeadline has passed since the start of the last write
// that held the Lease: from then on a peer may take the Lease LeaseDuration - RenewDeadline
// later, and the work must be gone by then. It also reports a work that takes longer than
// that to stop.
func (c *candidate) watchdog(ctx context.Context, cancel context.CancelCauseFunc) {
	for {
		held := c.lock.heldSince()
		wait := held.Add(c.opts.RenewDeadline).Sub(c.clock.Now())
		if held.IsZero() || wait <= 0 {
			c.log.Info("Lease not renewed in time; stopping", "lease", c.lock.Describe(), "renewDeadline", c.opts.RenewDeadline.String())
			cancel(errRenewOverdue)
			return
		}
		t := c.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// overrun is how long a work may take to stop after its cancellation before a peer may
// have taken the Lease.
func (c *candidate) overrun() time.Duration { return c.opts.LeaseDuration - c.opts.RenewDeadline }
