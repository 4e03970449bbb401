package federation

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers branch on them with errors.Is; every package wraps them with context
// ("sync: apply production/web to cluster \"eu\": federation: cluster not ready").
var (
	// ErrClusterNotFound is returned by ClusterSet.Client when no Cluster of that name is known.
	ErrClusterNotFound = errors.New("federation: cluster not found")

	// ErrClusterNotReady is returned when a cluster is known but cannot be used now: its client
	// is not built yet, its credentials are missing, or its Ready condition is not True.
	ErrClusterNotReady = errors.New("federation: cluster not ready")

	// ErrUnreachable is wrapped by client errors caused by the network rather than the API
	// (timeouts, refused connections, an injected partition in the fake fleet).
	ErrUnreachable = errors.New("federation: cluster unreachable")

	// ErrTerminal is matched by every error wrapped with [Terminal].
	ErrTerminal = errors.New("federation: terminal error")

	// ErrInvalidKey is returned by ParseKey for a malformed key.
	ErrInvalidKey = errors.New("federation: invalid key")

	// ErrInvalidObject is returned by the conversion helpers when an object does not have the
	// expected shape (wrong kind, a field of the wrong type), and wrapped by validation failures
	// returned as errors (see [InvalidError]).
	ErrInvalidObject = errors.New("federation: invalid object")

	// ErrUnknownType is returned when a TypeConfig is incomplete or no TypeConfig is known for a
	// kind.
	ErrUnknownType = errors.New("federation: unknown type")
)

// ClusterError says which cluster and which operation an error came from. Loops that touch many
// clusters return it (often several, joined with errors.Join) so callers can group failures by
// cluster with errors.As.
//
// +kubebuilder:object:generate=false
type ClusterError struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Op is the operation, e.g. "create", "update", "get".
	Op string
	// Err is the underlying error; apierrors helpers (IsConflict, ...) work through Unwrap.
	Err error
}

func (e *ClusterError) Error() string {
	return fmt.Sprintf("cluster %q: %s: %v", e.Cluster, e.Op, e.Err)
}

// Unwrap returns the underlying error.
func (e *ClusterError) Unwrap() error { return e.Err }
