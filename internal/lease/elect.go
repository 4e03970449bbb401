package lease

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
)

// Elect runs run only while this process holds the Lease opts.Namespace/opts.Name on host,
// so that of several processes calling Elect with the same Lease one works and the others
// wait, ready to take over.
//
// It campaigns until it acquires the Lease, then calls run with a context that is cancelled
// when the Lease is lost: when a renewal has not succeeded for RenewDeadline (the API server
// is unreachable, a peer took the Lease). It waits for run to return, then campaigns again.
// run must return promptly once its context is done: within LeaseDuration - RenewDeadline
// (5s with the defaults), the earliest a peer can take the Lease; a longer stop is logged as
// an error, since a peer may then have worked at the same time. Every fedkit loop's Run
// returns within one reconcile.
//
// Elect returns nil when ctx is done, after run has returned, releasing the Lease if
// opts.ReleaseOnCancel is set (otherwise the Lease expires LeaseDuration later, as after a
// crash). If run returns by itself while leading, Elect releases the Lease and returns run's
// error (nil included): the work is over. It returns an error wrapping ErrInvalidOptions for
// Options it cannot use, without touching the host.
//
// The Lease is a coordination.k8s.io/v1 Lease, written as client-go's LeaseLock writes it;
// the host must serve Leases in opts.Namespace and let this process get, create and update
// them.
//
// Timing runs on the real clock: client-go's LeaderElector, which Elect drives, has no clock
// to inject. Tests of code that runs under Elect therefore use short real durations
// (LeaseDuration 2s, RenewDeadline 1s, RetryPeriod 250ms hand over in about 2 seconds), and
// wait for the outcome instead of stepping a fake clock; the work itself can still run on
// a fake clock of its own.
func Elect(ctx context.Context, host federation.ClusterClient, opts Options, run func(ctx context.Context) error) error {
	if host == nil {
		return fmt.Errorf("%w: nil host", ErrInvalidOptions)
	}
	if err := opts.complete(false); err != nil {
		return err
	}
	lock := NewLock(host, opts.Namespace, opts.Name, opts.Identity)
	lock.annotations = maps.Clone(opts.Annotations)
	c := &candidate{
		lock:  lock,
		opts:  opts,
		clock: clock.RealClock{},
		log:   opts.Logger.WithValues("identity", opts.Identity),
	}
	for ctx.Err() == nil {
		res, err := c.term(ctx, nil, run)
		switch {
		case err != nil:
			return err
		case res.returned:
			return res.err
		case res.led && res.err != nil && !errors.Is(res.err, context.Canceled):
			c.log.Error(res.err, "The work failed while stopping", "lease", c.lock.Describe())
		}
	}
	return nil
}
