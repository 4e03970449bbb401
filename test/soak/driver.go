package soak

import (
	"context"
	"time"
)

// driver lets the control plane work: by rounds (deterministic mode) or by running it and
// stepping the clock (Run mode).
type driver interface {
	start(ctx context.Context) error
	// advance moves the clock by d and lets the control plane catch up.
	advance(ctx context.Context, d time.Duration) error
	stop() error
}

func newDriver(w *World, cp ControlPlane) driver {
	if w.Config.Run {
		return &runDriver{w: w, cp: cp}
	}
	return &roundDriver{w: w, cp: cp}
}

// roundDriver: the clock steps, then one Round, then the members' simulated controllers tick.
type roundDriver struct {
	w  *World
	cp ControlPlane
}

func (d *roundDriver) start(context.Context) error { return nil }
func (d *roundDriver) stop() error                 { return nil }

func (d *roundDriver) advance(ctx context.Context, step time.Duration) error {
	d.w.Clock.Step(step)
	if err := d.cp.Round(ctx); err != nil {
		return err
	}
	d.w.Fleet.Tick()
	return d.w.housekeep(ctx)
}

// runDriver runs the control plane's Run and the members' simulated controllers, and steps
// the clock.
type runDriver struct {
	w      *World
	cp     ControlPlane
	cancel context.CancelFunc
	done   chan error
}

func (d *runDriver) start(ctx context.Context) error {
	ctx, d.cancel = context.WithCancel(ctx)
	d.done = make(chan error, 2)
	go func() { d.done <- d.cp.Run(ctx) }()
	go func() { d.done <- d.w.Fleet.Run(ctx) }()
	d.idle()
	return nil
}

func (d *runDriver) stop() error {
	if d.cancel == nil {
		return nil
	}
	d.cancel()
	err := <-d.done
	if err2 := <-d.done; err == nil {
		err = err2
	}
	return err
}

// Settling in Run mode: the goroutines are idle when no call reaches a cluster for
// idleWindow and, for a control plane that can tell ([Busy]), no key waits in a queue and no
// reconcile runs all that time (a pass over member caches makes no call at all). The harness
// waits at most maxIdleWait for that (real time: the loops run on real goroutines, only their
// clock is fake).
const (
	idlePoll    = 2 * time.Millisecond
	idleWindow  = 30 * idlePoll
	maxIdleWait = 30 * time.Second
)

func (d *runDriver) advance(ctx context.Context, step time.Duration) error {
	// One step, then the goroutines catch up. Steps in quick succession would let timers the
	// loops start on the way (a probe's timeout) expire before the work they bound has had
	// a chance to run: failures no real clock would cause.
	d.w.Clock.Step(step)
	d.idle()
	if err := d.w.housekeep(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// Busy is what a [ControlPlane] may also offer: how much work its loops hold now (keys
// ready in their queues and reconciles running; zero when idle). Run mode then steps the clock
// only once it has stayed zero for a while.
type Busy interface {
	Busy() (int, error)
}

// idle waits until no call has reached any cluster, and the control plane was not busy, for
// idleWindow.
func (d *runDriver) idle() {
	last, still := d.w.callCount(), 0
	deadline := time.Now().Add(maxIdleWait)
	for time.Now().Before(deadline) {
		time.Sleep(idlePoll)
		if n := d.w.callCount(); n != last || d.busy() {
			last, still = n, 0
			continue
		}
		if still++; still*int(idlePoll) >= int(idleWindow) {
			return
		}
	}
}

// busy reports whether the control plane says it holds work. One that cannot tell is never
// busy; one whose answer fails is (the wait then ends at maxIdleWait, logged).
func (d *runDriver) busy() bool {
	b, ok := d.cp.(Busy)
	if !ok {
		return false
	}
	n, err := b.Busy()
	if err != nil {
		d.w.Config.Logf("run mode: %v", err)
		return true
	}
	return n > 0
}
