package controlplane

import (
	"slices"
	"time"

	"github.com/fedkit/fedkit/federation"
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
	// StateStandby: Run is running but this replica does not lead (Options.LeaderElection):
	// the loop starts when the replica acquires the Lease, and is back in standby when it
	// loses it.
	StateStandby State = "Standby"
)

// LoopStatus is what [ControlPlane.Status] reports about one loop.
type LoopStatus struct {
	// Name is the loop's name: "cluster-set", "cluster-monitor", "dnsrecord", or
	// "scheduler/<FederatedKind>", "sync/<FederatedKind>", "status/<FederatedKind>". It is the
	// name the loop logs under.
	Name string
	// Shard is the shard the loop runs for: Options.Shard, or with Options.Sharding the shard
	// this replica holds; the zero Shard (every key) otherwise, and for the cluster set.
	Shard federation.Shard
	// State is the loop's state.
	State State
	// Err is why the loop failed: it wraps ErrNotServed when the host does not serve a
	// resource the loop needs (its CRD is missing) and ErrCacheNotSynced when the loop could
	// not list it in time. It is nil unless State is StateFailed.
	Err error
	// Partial is what a running loop runs without: it wraps ErrNotServed and names the
	// federated types whose CRD the host lacks (the dependencies loop follows the workload
	// types the host serves). They are checked every Options.RetryPeriod and picked up once
	// served. It is nil otherwise.
	Partial error
	// Since is when the loop entered State, on Options.Clock (zero before the first Run).
	Since time.Time
	// Failures counts the loop's failures since Run started, failed checks included.
	Failures int
}

// Status returns the state of every loop, in a fixed order: the cluster set, then for each
// set of loops (one, or one per shard held, by shard index) the cluster monitor, the
// scheduler, sync and collector of each type in Options.Types order, then the propagation
// loop of each namespaced type, then DNS. Disabled loops are not listed, nor (with Options.Sharding) the loops of shards this
// replica does not hold: a replica holding no shard lists the cluster set only. It is how an embedder learns,
// without reading the log, that a type is not running because its CRD is missing (a health
// endpoint, a status page), or which shards this replica runs:
//
//	for _, l := range cp.Status() {
//		if errors.Is(l.Err, controlplane.ErrNotServed) { ... }
//	}
func (cp *ControlPlane) Status() []LoopStatus {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	parts := cp.partsLocked()
	out := make([]LoopStatus, len(parts))
	for i, p := range parts {
		out[i] = p.status
	}
	return out
}

// partsLocked returns every loop Status lists, in its order. cp.mu must be held.
func (cp *ControlPlane) partsLocked() []*part {
	out := slices.Clone(cp.shared)
	for _, u := range cp.units {
		out = append(out, u.loops...)
	}
	return append(out, cp.dynamic...)
}

// setState records p's new state; err is nil unless state is StateFailed. It returns whether
// every loop of u (a set of per-shard loops; nil for the shared ones) has failed now.
func (cp *ControlPlane) setState(u *unit, p *part, state State, err error) (allFailed bool) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if p.status.State != state {
		p.status.Since = cp.opts.Clock.Now()
	}
	p.status.State, p.status.Err = state, err
	if state != StateRunning {
		p.status.Partial = nil
	}
	if state != StateFailed {
		return false
	}
	p.status.Failures++
	if u == nil {
		return false
	}
	for _, q := range u.loops {
		if q.status.State != StateFailed {
			return false
		}
	}
	return true
}

// setUnitState puts every loop of u in state, with no error (StateStandby when leadership
// starts or ends).
func (cp *ControlPlane) setUnitState(u *unit, state State) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	now := cp.opts.Clock.Now()
	for _, p := range u.loops {
		if p.status.State != state {
			p.status.Since = now
		}
		p.status.State, p.status.Err, p.status.Partial = state, nil, nil
	}
}

// addUnit lists the loops of a shard claimed; removeUnit removes them once they returned.
func (cp *ControlPlane) addUnit(u *unit) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	i, _ := slices.BinarySearchFunc(cp.units, u.shard.Index, func(v *unit, index int) int { return v.shard.Index - index })
	cp.units = slices.Insert(cp.units, i, u)
}

func (cp *ControlPlane) removeUnit(u *unit) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.units = slices.DeleteFunc(cp.units, func(v *unit) bool { return v == u })
}
