package controlplane

import (
	"time"
)

// State is where a loop of the control plane stands.
type State string

const (
	// StateStopped: Run is not running (before it starts, and after it returns).
	StateStopped State = "Stopped"
	// StateRunning: the loop's Run is running. Its caches may still be syncing: a loop that
	// cannot list what it watches fails after its CacheSyncTimeout.
	StateRunning State = "Running"
	// StateFailed: the host does not serve what the loop needs, or its Run returned an error.
	// LoopStatus.Err says which; the loop is checked and started again after
	// Options.RetryPeriod.
	StateFailed State = "Failed"
)

// LoopStatus is what [ControlPlane.Status] reports about one loop.
type LoopStatus struct {
	// Name is the loop's name: "cluster-set", "cluster-monitor", "dnsrecord", or
	// "scheduler/<FederatedKind>", "sync/<FederatedKind>", "status/<FederatedKind>". It is the
	// name the loop logs under.
	Name string
	// State is the loop's state.
	State State
	// Err is why the loop failed: it wraps ErrNotServed when the host does not serve a
	// resource the loop needs (its CRD is missing) and ErrCacheNotSynced when the loop could
	// not list it in time. It is nil unless State is StateFailed.
	Err error
	// Since is when the loop entered State, on Options.Clock (zero before the first Run).
	Since time.Time
	// Failures counts the loop's failures since Run started, failed checks included.
	Failures int
}

// Status returns the state of every loop, in a fixed order: the cluster set, the cluster
// monitor, then the scheduler, sync and collector of each type in Options.Types order, then
// DNS. Disabled loops are not listed. It is how an embedder learns, without reading the log,
// that a type is not running because its CRD is missing (a health endpoint, a status page):
//
//	for _, l := range cp.Status() {
//		if errors.Is(l.Err, controlplane.ErrNotServed) { ... }
//	}
func (cp *ControlPlane) Status() []LoopStatus {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	out := make([]LoopStatus, len(cp.loops))
	for i, p := range cp.loops {
		out[i] = p.status
	}
	return out
}

// setState records p's new state; err is nil unless state is StateFailed. It returns whether
// every loop has failed now.
func (cp *ControlPlane) setState(p *part, state State, err error) (allFailed bool) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if p.status.State != state {
		p.status.Since = cp.opts.Clock.Now()
	}
	p.status.State, p.status.Err = state, err
	if state != StateFailed {
		return false
	}
	p.status.Failures++
	for _, q := range cp.loops {
		if q.status.State != StateFailed {
			return false
		}
	}
	return true
}
