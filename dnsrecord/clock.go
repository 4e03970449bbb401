package dnsrecord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// errReadTimeout is the cause of a member read's context when Options.ReadTimeout ran out.
var errReadTimeout = errors.New("dnsrecord: member read timed out")

// withTimeout returns a context cancelled with cause after d on clk, so a test's fake clock
// decides when a member that does not answer times out. Call the returned func when the
// call is done: it releases the timer and leaves no goroutine behind.
func withTimeout(ctx context.Context, clk clock.Clock, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	if dc, ok := clk.(clock.WithDelayedExecution); ok { // the real and the fake clock
		t := dc.AfterFunc(d, func() { cancel(cause) })
		return ctx, func() {
			t.Stop()
			cancel(context.Canceled)
		}
	}
	t := clk.NewTimer(d)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-t.C():
			cancel(cause)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-exited
		t.Stop()
		cancel(context.Canceled)
	}
}

// bounded runs one member read under Options.ReadTimeout; a read cut short by it says so.
func bounded[T any](ctx context.Context, c *Controller, read func(ctx context.Context) (T, error)) (T, error) {
	rctx, cancel := withTimeout(ctx, c.opts.Clock, c.opts.ReadTimeout, errReadTimeout)
	defer cancel()
	v, err := read(rctx)
	if err != nil && errors.Is(context.Cause(rctx), errReadTimeout) && ctx.Err() == nil {
		err = fmt.Errorf("%w after %s: %w", errReadTimeout, c.opts.ReadTimeout, err)
	}
	return v, err
}
