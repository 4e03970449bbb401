package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fedkit/fedkit/federation"
)

// servedTypes returns a loop that reads several types of which only some need to be served:
// the dependencies loop, which follows the workload types the host serves, and the policy
// monitor. fixed are always given to build; optional only when the host serves their
// federated resource (listed in namespace). The missing ones are reported in the loop's
// LoopStatus.Partial and logged once. While some are missing, every Options.RetryPeriod they
// are checked again; when one is served, the loop is stopped and built again with it.
//
// It builds the loop with every type, so that every option is checked now, and with fixed
// alone: what that one watches is what the loop needs whatever the host serves (its
// Watches); what an optional type adds is waited for only while it is served.
//
// configured, when not nil, picks the types FederatedTypeConfigs configure that the loop
// runs over too, as optional ones: when they change, the loop is built again.
func (cp *ControlPlane) servedTypes(name string, shard federation.Shard, namespace string, fixed, optional []federation.TypeConfig,
	configured func(federation.TypeConfig) bool, build func(types []federation.TypeConfig) (watcher, error)) (watcher, error) {
	if _, err := build(append(slices.Clone(fixed), optional...)); err != nil {
		return nil, err
	}
	base, err := build(fixed)
	if err != nil {
		return nil, err
	}
	return composed{watches: base.Watches(), run: func(ctx context.Context) error {
		log := cp.opts.Logger.WithValues("loop", name)
		if shard.Sharded() {
			log = log.WithValues("shard", shard.String())
		}
		var last string
		// The first start uses the control plane's check; a restart checks again.
		served, missing := cp.checked(name, shard, namespace, optional)
		dynamic, changed := cp.configuredTypes(configured)
		more, notYet := cp.split(ctx, namespace, dynamic)
		served, missing = append(served, more...), append(missing, notYet...)
		for {
			partial := notServedTypes(missing, namespace)
			cp.setPartial(name, shard, partial)
			if partial != nil && partial.Error() != last {
				log.Info("Running without the types the host does not serve; they are picked up once served", "missing", partial.Error(), "retryPeriod", cp.opts.RetryPeriod)
				last = partial.Error()
			}
			w, err := build(append(slices.Clone(fixed), served...))
			if err != nil {
				return err
			}
			if changed == nil && (len(missing) == 0 || cp.opts.RetryPeriod < 0) {
				return w.Run(ctx)
			}
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- w.Run(rctx) }()
			restart, err := cp.awaitServed(ctx, namespace, missing, changed, done)
			cancel()
			if !restart {
				return err
			}
			<-done
			log.Info("A type the loop runs without is served now, or the configured types changed; restarting the loop")
			dynamic, changed = cp.configuredTypes(configured)
			served, missing = cp.split(ctx, namespace, append(slices.Clone(optional), dynamic...))
		}
	}}, nil
}

// composed is a watcher made of a run and the watches it stands for: a loop servedTypes runs
// over the types the host serves.
type composed struct {
	run     func(context.Context) error
	watches []federation.Watch
}

func (c composed) Run(ctx context.Context) error { return c.run(ctx) }
func (c composed) Watches() []federation.Watch   { return c.watches }

// awaitServed checks missing every RetryPeriod until one is served, or waits until changed
// is closed (restart), the loop's run returns (its error) or ctx is done (nil, after the run
// returned). A nil changed is never closed.
func (cp *ControlPlane) awaitServed(ctx context.Context, namespace string, missing []federation.TypeConfig, changed <-chan struct{}, done <-chan error) (restart bool, err error) {
	for {
		restart, err, again := cp.awaitOnce(ctx, len(missing) > 0, changed, done)
		if !again {
			return restart, err
		}
		if served, _ := cp.split(ctx, namespace, missing); len(served) > 0 {
			return true, nil
		}
	}
}

// awaitOnce waits for one of awaitServed's events; again when RetryPeriod passed (only
// when retry: some type is missing and RetryPeriod is not negative).
func (cp *ControlPlane) awaitOnce(ctx context.Context, retry bool, changed <-chan struct{}, done <-chan error) (restart bool, err error, again bool) {
	var tick <-chan time.Time
	if retry && cp.opts.RetryPeriod >= 0 {
		t := cp.opts.Clock.NewTimer(cp.opts.RetryPeriod)
		defer t.Stop()
		tick = t.C()
	}
	select {
	case err := <-done:
		return false, err, false
	case <-ctx.Done():
		return false, <-done, false
	case <-changed:
		return true, nil, false
	case <-tick:
		return false, nil, true
	}
}

// split divides types into those whose federated resource the host serves and the others.
func (cp *ControlPlane) split(ctx context.Context, namespace string, types []federation.TypeConfig) (served, missing []federation.TypeConfig) {
	for _, t := range types {
		if err := cp.served(ctx, federatedOf(t, namespace)); errors.Is(err, ErrNotServed) {
			missing = append(missing, t)
		} else {
			served = append(served, t)
		}
	}
	return served, missing
}

// notServedTypes is the error naming the federated resources of missing, or nil.
func notServedTypes(missing []federation.TypeConfig, namespace string) error {
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, len(missing))
	for i, t := range missing {
		names[i] = federatedOf(t, namespace).gvr.GroupResource().String()
	}
	return fmt.Errorf("%w: %s (running without them until their CustomResourceDefinitions are installed)", ErrNotServed, strings.Join(names, ", "))
}

// checked divides types as the last check of the named loop of shard found them.
func (cp *ControlPlane) checked(name string, shard federation.Shard, namespace string, types []federation.TypeConfig) (served, missing []federation.TypeConfig) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var not []resource
	for _, p := range cp.partsLocked() {
		if p.name == name && p.shard == shard {
			not = p.missing
		}
	}
	for _, t := range types {
		if slices.Contains(not, federatedOf(t, namespace)) {
			missing = append(missing, t)
		} else {
			served = append(served, t)
		}
	}
	return served, missing
}

// setPartial records what the named loop of shard runs without.
func (cp *ControlPlane) setPartial(name string, shard federation.Shard, err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.partsLocked() {
		if p.name == name && p.shard == shard {
			p.status.Partial = err
		}
	}
}
