package controlplane

import (
	"errors"

	"github.com/fedkit/fedkit/internal/loop"
)

// Sentinel errors of package controlplane; errors.Is finds them through wrapping.
var (
	// ErrInvalidOptions is wrapped by New's errors about Options: a type twice, identities
	// that disagree.
	ErrInvalidOptions = errors.New("controlplane: invalid options")

	// ErrNotServed is wrapped by a loop's error (in [ControlPlane.Status], the log, and Run's
	// error) when the host does not serve a resource the loop needs: the CustomResourceDefinition
	// of a federated type, of ReplicaSchedulingPreference or of the DNS records is not
	// installed. The message names the resource. The loop is not started until it is served.
	ErrNotServed = errors.New("controlplane: the host does not serve a resource the loop needs")

	// ErrCacheNotSynced is wrapped by a loop's error when the loop started but could not list
	// what it watches within its CacheSyncTimeout (the CRD was deleted after the check, RBAC
	// forbids the list, the host cannot be reached). It is the error every fedkit loop's Run
	// wraps in that case, so errors.Is works on those too.
	ErrCacheNotSynced = loop.ErrCacheNotSynced

	// ErrAllFailed is wrapped by the error Run returns when every loop of a set has failed
	// (the ClusterSet's Run aside): nothing is left running. With Options.Sharding, one shard's
	// set failing stops the replica. The error joins each loop's own.
	ErrAllFailed = errors.New("controlplane: every loop failed")

	// ErrNotReady is wrapped by [ControlPlane.Ready]'s error while this replica is not ready:
	// Run is not running, or a loop it runs has not synced its caches yet. The message names
	// the loops and resources it waits for.
	ErrNotReady = errors.New("controlplane: not ready")

	// ErrRunning is returned by Run when the control plane is already running.
	ErrRunning = errors.New("controlplane: already running")
)
