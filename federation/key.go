package federation

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Key names one object that a loop reconciles: a federated object by namespace and name, or,
// for the cluster monitor, a Cluster by name (Namespace empty). It is a plain comparable value, so
// it can key maps and work queues directly.
//
// +kubebuilder:object:generate=false
type Key struct {
	Namespace string
	Name      string
}

// String returns "namespace/name", or "name" for cluster-scoped objects, the form used by
// client-go's cache.MetaNamespaceKeyFunc.
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// ParseKey is the inverse of [Key.String]. It returns an error satisfying
// errors.Is(err, ErrInvalidKey) when s is empty or has more than one slash.
func ParseKey(s string) (Key, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return Key{Name: parts[0]}, nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return Key{Namespace: parts[0], Name: parts[1]}, nil
	}
	return Key{}, fmt.Errorf("%w: %q", ErrInvalidKey, s)
}

// Result is what one Reconcile pass asks of its caller. A zero Result means "done until
// something changes". Every loop documents that the Result is ignored when Reconcile also
// returns an error: the error decides (backoff, or drop if terminal).
//
// +kubebuilder:object:generate=false
type Result struct {
	// RequeueAfter asks the caller to reconcile the key again after this long, even if nothing
	// changes (for example the rebalance period, or a cluster that is still starting).
	RequeueAfter time.Duration
}

// terminalError marks an error as not worth retrying.
//
// +kubebuilder:object:generate=false
type terminalError struct{ err error }

func (t *terminalError) Error() string { return "terminal: " + t.err.Error() }
func (t *terminalError) Unwrap() error { return t.err }

// Is makes errors.Is(err, ErrTerminal) true for every error wrapped by [Terminal].
func (t *terminalError) Is(target error) bool { return target == ErrTerminal }

// Terminal wraps err so that loops stop retrying the key: the input is wrong (bad spec, invalid
// override) and retrying cannot help until the object changes. The error is still reported
// (status condition, event, log). Terminal(nil) returns nil.
//
// Check it with [IsTerminal] or errors.Is(err, ErrTerminal); never by matching the message.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether err, or any error it wraps, was marked with [Terminal].
func IsTerminal(err error) bool {
	return errors.Is(err, ErrTerminal)
}
