package sync

import (
	"context"
	gosync "sync"
)

// Member writes run on goroutines of their own, Options.ClusterConcurrency at a time for one
// object. A goroutine started for one write begins with a small stack, and a write's call path
// (client, encoding, and in a fake cluster the API server's own conversion and validation) is
// deep enough to make it grow, by copying, two or three times: a real cost when the write
// itself is cheap, as against an in-memory fleet. While Run runs, its passes hand their writes
// to a pool of goroutines that live as long as Run (see withWriters), whose stacks stay grown.

// writers is a pool of goroutines that run the member writes of Run's passes.
type writers struct {
	tasks chan func()
	done  gosync.WaitGroup
}

// startWriters starts n writers. Stop them with stop, once no pass can hand them work.
func startWriters(n int) *writers {
	w := &writers{tasks: make(chan func())}
	for range n {
		w.done.Go(func() {
			for task := range w.tasks {
				task()
			}
		})
	}
	return w
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
			w.tasks <- task
		} else {
			go task()
		}
	}
	wg.Wait()
}
