package status

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// withTimeout returns a context that is cancelled with cause after d on clk. Timeouts run on
// the injected clock, like everything else in the package, so a test with a fake clock
// decides when a slow member times out (fake.Cluster.SetLatency waits on the same clock).
// The returned func releases the timer; call it when the call is done.
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
		<-exited // joined: the caller's call leaves no goroutine behind
		t.Stop()
		cancel(context.Canceled)
	}
}
