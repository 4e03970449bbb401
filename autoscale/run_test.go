package autoscale_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestRun: Run watches the preferences and passes over each autoscaled one every
// ResyncPeriod on its clock: a load that rises between passes is followed at the next one;
// Run returns once ctx is done.
func TestRun(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{CacheSyncTimeout: time.Hour})
	run, err := autoscale.New(e.Host, e.Fleet, autoscale.Options{Clock: e.Clock, Events: e.events, CacheSyncTimeout: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- run.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	fedtest.Eventually(t, "the first pass writes status.autoscale", func() bool { return e.rsp(t).Status.Autoscale != nil })

	for _, m := range members {
		e.load[m] = 1800
	}
	e.setLoad(t)
	fedtest.StepUntil(t, e.Clock.Step, autoscale.DefaultResyncPeriod, 4,
		func() string { return fmt.Sprintf("total %d", e.total(t)) },
		func() bool { return e.total(t) == 9 })
}
