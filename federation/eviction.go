package federation

import "strconv"

// EvictionState is where an [Eviction] stands. The scheduler moves each eviction from state
// to state, one function per transition (package scheduler, "Graceful eviction"). Sync,
// dependencies and preview read [Eviction.State], never the fields that encode it.
type EvictionState uint8

const (
	// EvictionWaiting: the cluster keeps Keep replicas until the clusters that take its
	// replicas report them available with fresh data, or until Deadline.
	EvictionWaiting EvictionState = iota
	// EvictionHeld: the grace period ended while the cluster was out of reach. The cluster
	// keeps Keep replicas, with no deadline, until it is back; a new grace period then begins.
	EvictionHeld
	// EvictionReleased: the eviction ended under purge mode Never and the cluster left the
	// schedule. Sync releases the copy there instead of deleting it.
	EvictionReleased
	// EvictionEnded: the eviction is over and gone from the schedule; the cluster runs
	// Replicas. State never returns it: the scheduler's transitions do.
	EvictionEnded
)

var evictionStates = [...]string{"Waiting", "Held", "Released", "Ended"}

// String returns the state's name, such as "Waiting".
func (s EvictionState) String() string {
	if int(s) < len(evictionStates) {
		return evictionStates[s]
	}
	return "EvictionState(" + strconv.Itoa(int(s)) + ")"
}

// Keeps reports whether the evicted cluster keeps its Keep replicas in this state: it is
// Waiting or Held. The schedule then lists the cluster with them.
func (s EvictionState) Keeps() bool {
	return s == EvictionWaiting || s == EvictionHeld
}

// State returns e's state: Released when Release is set, Held without a Deadline, else
// Waiting.
func (e Eviction) State() EvictionState {
	switch {
	case e.Release:
		return EvictionReleased
	case e.Deadline == nil:
		return EvictionHeld
	default:
		return EvictionWaiting
	}
}
