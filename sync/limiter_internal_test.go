package sync

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestLimiters: by default (ClusterQPS zero or negative) writes to a member never wait; a
// positive ClusterQPS is a token bucket per member on the injected clock.
func TestLimiters(t *testing.T) {
	ctx := context.Background()
	_, s, _ := settingsIn(t)
	require.Equal(t, rate.Inf, s.limits.limit, "a Syncer's default: no client-side limit")
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	for _, qps := range []float64{0, -1} {
		l := newLimiters(clk, qps, 0)
		for range 1000 {
			require.NoError(t, l.wait(ctx, "eu"), "qps %v: no limit", qps)
		}
	}

	l := newLimiters(clk, 1, 2)
	require.NoError(t, l.wait(ctx, "eu"))
	require.NoError(t, l.wait(ctx, "eu"))
	require.NoError(t, l.wait(ctx, "us"), "each member has its own bucket")
	done := make(chan error, 1)
	go func() { done <- l.wait(ctx, "eu") }()
	select {
	case err := <-done:
		t.Fatalf("the third write to eu did not wait for a token: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.Eventually(t, clk.HasWaiters, 10*time.Second, time.Millisecond)
	clk.Step(time.Second)
	require.NoError(t, <-done)
}
