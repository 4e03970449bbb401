package sync

import (
	"context"
	gosync "sync"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// limiters hold one token bucket per member cluster, so a burst of changes to many objects
// cannot flood one member's API server, whatever the member client's own limits. Waiting
// happens on the injected clock: tests with a fake clock see no real delay while the bucket
// has tokens, and step the clock when it has none.
type limiters struct {
	clock clock.WithTicker
	limit rate.Limit
	burst int

	mu      gosync.Mutex
	buckets map[string]*rate.Limiter
}

func newLimiters(clk clock.WithTicker, qps float64, burst int) *limiters {
	l := &limiters{clock: clk, limit: rate.Limit(qps), burst: burst, buckets: map[string]*rate.Limiter{}}
	if qps <= 0 {
		l.limit = rate.Inf
	}
	return l
}

// wait blocks until cluster may take one more write, or ctx is done.
func (l *limiters) wait(ctx context.Context, cluster string) error {
	if l.limit == rate.Inf {
		return ctx.Err()
	}
	l.mu.Lock()
	b, ok := l.buckets[cluster]
	if !ok {
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[cluster] = b
	}
	l.mu.Unlock()
	now := l.clock.Now()
	r := b.ReserveN(now, 1)
	if !r.OK() {
		return ctx.Err()
	}
	d := r.DelayFrom(now)
	if d <= 0 {
		return ctx.Err()
	}
	t := l.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		r.CancelAt(l.clock.Now())
		return ctx.Err()
	}
}

// forget drops a cluster's bucket (the cluster left the federation).
func (l *limiters) forget(cluster string) {
	l.mu.Lock()
	delete(l.buckets, cluster)
	l.mu.Unlock()
}
