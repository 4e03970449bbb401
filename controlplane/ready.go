package controlplane

import (
	"fmt"
	"slices"
	"strings"
)

// Ready returns nil when this replica does its share of the work, and an error wrapping
// [ErrNotReady] that names what it waits for otherwise. It is the readiness check of a
// process that runs the control plane (a /readyz endpoint, a Deployment's readiness probe):
//
//	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
//		if err := cp.Ready(); err != nil {
//			http.Error(w, err.Error(), http.StatusServiceUnavailable)
//		}
//	})
//
// A replica is ready while Run runs and each loop it runs has synced its caches: the host
// cache ([Options].Cache, or the one New made) has listed every resource the loop needs
// (every resource its Watches names: its federated type, the Clusters, the preferences, sync's
// revision history...). So:
//
//   - without LeaderElection or Sharding, it is ready once every loop's caches synced;
//   - with LeaderElection, a standby (no Lease) is ready at once, and the leader once its
//     loops' caches synced;
//   - with Sharding, a replica that holds no shard is a standby and ready, and one that
//     holds shards is ready once the loops of every shard it holds have synced.
//
// A loop that failed (its CRD is missing, its caches did not sync in its CacheSyncTimeout)
// does not hold readiness back: it is reported in Status and retried, as the package
// documentation says, while the others run; when every loop of a set fails Run returns. A
// loop given a Cache of its own in its options counts as synced once it runs: the control
// plane cannot see that Cache's informers. The ClusterSet's own Run is not waited for.
//
// Ready is safe to call at any time, from any goroutine, and does no I/O.
func (cp *ControlPlane) Ready() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if !cp.running {
		return fmt.Errorf("%w: Run is not running", ErrNotReady)
	}
	var waiting []string
	for _, u := range cp.units {
		for _, p := range u.loops {
			if w := cp.waitingLocked(p); w != "" {
				waiting = append(waiting, w)
			}
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("%w: %s", ErrNotReady, strings.Join(waiting, "; "))
	}
	return nil
}

// waitingLocked says what p waits for before it does its work ("" when nothing: it runs
// with its caches synced, stands by, or failed). cp.mu must be held.
func (cp *ControlPlane) waitingLocked(p *part) string {
	name := p.name
	if p.shard.Sharded() {
		name += " (shard " + p.shard.String() + ")"
	}
	switch p.status.State {
	case StateStandby, StateFailed:
		return ""
	case StateStopped:
		return name + ": not started yet"
	}
	if p.ownCache {
		return ""
	}
	var unsynced []string
	for _, r := range p.needs {
		what := r.gvr.GroupResource().String()
		if !cp.opts.Cache.Synced(r.gvr) && !slices.Contains(unsynced, what) {
			unsynced = append(unsynced, what)
		}
	}
	if len(unsynced) == 0 {
		return ""
	}
	return name + ": caches of " + strings.Join(unsynced, ", ") + " not synced"
}
