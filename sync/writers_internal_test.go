package sync

import (
	gosync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

// The writer pool starts no goroutine until it has work, grows with the work up to its
// bound, and its writers exit once they have been idle for writerIdle on the clock.
func TestWritersGrowWithWorkAndExitWhenIdle(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	const bound, tasks = 4, 10
	w := startWriters(bound, clk)
	defer w.stop()
	require.Equal(t, 0, w.size(), "writers before any work")

	var mu gosync.Mutex
	started, most, running := 0, 0, 0
	release := make(chan struct{})
	var handed gosync.WaitGroup
	for range tasks {
		handed.Go(func() {
			w.run(func() {
				mu.Lock()
				started++
				running++
				most = max(most, running)
				mu.Unlock()
				<-release
				mu.Lock()
				running--
				mu.Unlock()
			})
		})
	}
	runningNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return running
	}
	require.Eventually(t, func() bool { return runningNow() == bound }, time.Minute, time.Millisecond, "tasks running at once")
	require.Equal(t, bound, w.size(), "writers while %d tasks wait", tasks)
	close(release)
	handed.Wait() // every task handed to a writer
	require.Eventually(t, func() bool { return clk.Waiters() == bound && runningNow() == 0 }, time.Minute, time.Millisecond,
		"every writer idle, waiting on the clock")
	mu.Lock()
	require.Equal(t, tasks, started)
	require.Equal(t, bound, most, "most tasks running at once")
	mu.Unlock()

	clk.Step(writerIdle - time.Nanosecond)
	require.Equal(t, bound, w.size(), "writers before their idle period has passed")
	clk.Step(time.Nanosecond)
	require.Eventually(t, func() bool { return w.size() == 0 }, time.Minute, time.Millisecond, "writers after their idle period")

	// Work after that starts writers again.
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	require.Equal(t, 1, w.size(), "writers after one task")
}
