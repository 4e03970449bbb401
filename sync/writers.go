package sync

import (
	"context"
	gosync "sync"
	"time"

	"k8s.io/utils/clock"
)

// Member writes run on goroutines of their own, Options.ClusterConcurrency at a time for one
// object. A goroutine started for one write begins with a small stack, and a write's call path
// (client, encoding, and in a fake cluster the API server's own conversion and validation) is
// deep enough to make it grow, by copying, two or three times: a real cost when the write
// itself is cheap, as against an in-memory fleet. While Run runs, its passes hand their writes
// to a pool of goroutines (see withWriters) whose stacks stay grown while there is work. The
// pool grows with the work, up to Workers × ClusterConcurrency writers, and a writer that has
// had nothing to do for writerIdle (on Options.Clock) exits: an idle Syncer holds none.

// writerIdle is how long a writer waits for work before it exits.
const writerIdle = 30 * time.Second

// writers is a pool of goroutines that run the member writes of Run's passes.
type writers struct {
	tasks chan func() // unbuffered: a send succeeds only when a writer takes the task
	clock clock.Clock
	max   int
	done  gosync.WaitGroup

	mu      gosync.Mutex
	running int // writers started and not exited
	waiting int // senders blocked until a writer is free; no writer exits while there are any
}

// startWriters returns a pool of at most n writers on clk, none started yet. Stop it with
// stop, once no pass can hand it work.
func startWriters(n int, clk clock.Clock) *writers {
	return &writers{tasks: make(chan func()), clock: clk, max: max(n, 1)}
}

// run hands task to an idle writer, or to a new one while there are fewer than max, or else
// waits for a writer to be free.
func (w *writers) run(task func()) {
	select {
	case w.tasks <- task:
		return
	default:
	}
	w.mu.Lock()
	if w.running < w.max {
		w.running++
		w.mu.Unlock()
		w.done.Go(func() { w.work(task) })
		return
	}
	w.waiting++
	w.mu.Unlock()
	w.tasks <- task
	w.mu.Lock()
	w.waiting--
	w.mu.Unlock()
}

// work runs first and then the tasks handed to it, until the pool stops or no task came
// for writerIdle while no sender waited.
func (w *writers) work(first func()) {
	first()
	t := w.clock.NewTimer(writerIdle)
	defer t.Stop()
	for {
		select {
		case task, ok := <-w.tasks:
			if !ok {
				return
			}
			t.Stop()
			task()
			t.Reset(writerIdle)
		case <-t.C():
			w.mu.Lock()
			if w.waiting == 0 {
				w.running--
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			t.Reset(writerIdle) // a sender is about to hand this writer a task
		}
	}
}

// size returns how many writers are running.
func (w *writers) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// stop ends the writers once the tasks handed to them are done.
func (w *writers) stop() {
	close(w.tasks)
	w.done.Wait()
}

type writersKey struct{}

// withWriters returns ctx carrying w: the passes run with it hand their writes to w.
func withWriters(ctx context.Context, w *writers) context.Context {
	return context.WithValue(ctx, writersKey{}, w)
}

// forEach calls fn(i) for each i in idx, at most limit at once, on the writers ctx carries or
// on new goroutines, and returns once every call has.
func forEach(ctx context.Context, limit int, idx []int, fn func(int)) {
	w, _ := ctx.Value(writersKey{}).(*writers)
	sem := make(chan struct{}, max(limit, 1))
	var wg gosync.WaitGroup
	for _, i := range idx {
		sem <- struct{}{}
		wg.Add(1)
		task := func() {
			defer func() {
				<-sem
				wg.Done()
			}()
			fn(i)
		}
		if w != nil {
			w.run(task)
		} else {
			go task()
		}
	}
	wg.Wait()
}
