package loop

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// WithTimeout returns a context that is cancelled with cause after d on clk. A loop bounds
// every member read with it, on its injected clock, so a test's fake clock decides when a
// member that does not answer times out (fake.Cluster.SetLatency waits on the same clock).
// Call the returned func when the call is done: it releases the timer and leaves no
// goroutine behind.
func WithTimeout(ctx context.Context, clk clock.Clock, d time.Duration, cause error) (context.Context, context.CancelFunc) {
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
		<-exited // joined: the caller's call leaves no goroutine behind
		t.Stop()
		cancel(context.Canceled)
	}
}
