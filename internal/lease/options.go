package lease

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of Options: client-go's and controller-runtime's. A leader that stops renewing
// stops its work within RenewDeadline (10s) and a peer takes over LeaseDuration (15s) after it
// last saw the Lease renewed, which leaves the stopping work 5s.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// ErrInvalidOptions is wrapped by the errors Elect and Shards return for Options they cannot
// work with, before they touch the host.
var ErrInvalidOptions = errors.New("lease: invalid options")

// Options configure Elect and Shards. Namespace and Name are required; every other field's
// zero value is the documented default.
type Options struct {
	// Namespace holds the Leases. Required.
	Namespace string

	// Name is the Lease's name for Elect. For Shards it is the prefix of the shard Leases
	// (Name-0 to Name-<Count-1>) and of each process's presence Lease (Name-member-<hash of
	// Identity>), and the value of the group label on all of them, so at most 63 characters.
	// Required. Processes that must exclude each other use the same Name.
	Name string

	// Identity names this process in the Leases' spec.holderIdentity; it must differ between
	// processes. Default: the host name and 8 random hex digits ("host_1a2b3c4d").
	Identity string

	// LeaseDuration is how long a Lease stays with its holder after it was last seen renewed:
	// a peer takes over that long after the holder stopped renewing (crashed, cut off).
	// Whole seconds, since a Lease stores whole seconds and candidates time it from there.
	// Default: DefaultLeaseDuration (15s).
	LeaseDuration time.Duration

	// RenewDeadline is how long the holder keeps trying to renew before it gives up: its run
	// is cancelled RenewDeadline after the start of its last successful renewal, and must
	// return within LeaseDuration - RenewDeadline, before a peer can take the Lease. Must be
	// less than LeaseDuration and more than 1.2 RetryPeriod. Default: DefaultRenewDeadline
	// (10s).
	RenewDeadline time.Duration

	// RetryPeriod is how often a candidate tries to acquire, a holder renews, and Shards
	// rebalances. Default: DefaultRetryPeriod (2s).
	RetryPeriod time.Duration

	// ReleaseOnCancel gives the Leases up when ctx is done, once run has returned, so a peer
	// takes over at once instead of LeaseDuration later: set it for graceful shutdowns.
	// Without it (the default, as in client-go) the Leases expire on their own, which is
	// what a crash does.
	ReleaseOnCancel bool

	// Count is how many shards Shards splits the keys into (federation.Shard.Count); Elect
	// ignores it. Every process of one deployment must use the same Count. Required for
	// Shards (at least 1).
	Count int

	// Annotations are set on every Lease this process writes: the Lease of Elect, the shard
	// Leases it holds and its presence Lease of Shards. They say something about the holder
	// to whoever reads the Leases (package controlplane writes its program's version
	// there, which `kubectl fed version` reads). Each write sets them anew, so they follow
	// the Lease from holder to holder. Keys must be valid annotation keys.
	Annotations map[string]string

	// Logger receives the elections' transitions (acquired, lost, released, shards moved)
	// and client-go's elector logs. Default: logr.Discard().
	Logger logr.Logger
}

// complete validates o and fills in the defaults; shards says whether Shards uses it.
func (o *Options) complete(shards bool) error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("Options.Namespace is required"))
	}
	if o.Name == "" {
		errs = append(errs, errors.New("Options.Name is required"))
	}
	if shards && len(o.Name) > validation.LabelValueMaxLength {
		errs = append(errs, fmt.Errorf("Options.Name %q is longer than %d characters (it is a label value on the Leases)", o.Name, validation.LabelValueMaxLength))
	}
	if shards && o.Count < 1 {
		errs = append(errs, fmt.Errorf("Options.Count must be at least 1, got %d", o.Count))
	}
	for k := range o.Annotations {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("Options.Annotations: key %q: %s", k, strings.Join(msgs, "; ")))
		}
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = DefaultRenewDeadline
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}
	switch {
	case o.LeaseDuration < time.Second || o.LeaseDuration%time.Second != 0:
		errs = append(errs, fmt.Errorf("LeaseDuration must be a whole number of seconds, got %s", o.LeaseDuration))
	case o.RenewDeadline <= 0 || o.RenewDeadline >= o.LeaseDuration:
		errs = append(errs, fmt.Errorf("RenewDeadline must be positive and less than LeaseDuration %s, got %s", o.LeaseDuration, o.RenewDeadline))
	case o.RetryPeriod <= 0 || float64(o.RenewDeadline) <= 1.2*float64(o.RetryPeriod):
		errs = append(errs, fmt.Errorf("RetryPeriod must be positive and RenewDeadline %s more than 1.2 times it, got %s", o.RenewDeadline, o.RetryPeriod))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if o.Identity == "" {
		o.Identity = DefaultIdentity()
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}

// Validate returns the error Elect (shards false) or Shards (shards true) would return for o
// before touching the host, wrapping ErrInvalidOptions, or nil; it changes nothing. It lets a
// caller that runs Elect or Shards later (package controlplane's Run) refuse bad Options when
// it is built.
func (o Options) Validate(shards bool) error {
	return o.complete(shards)
}

// DefaultIdentity returns the default Options.Identity: the host name (a pod's name in
// Kubernetes) and 8 random hex digits, "host_1a2b3c4d", as controller-runtime names its
// leader-election candidates (host name and a UUID), so that a process restarted under the
// same name is a new candidate and not the holder of its predecessor's Leases.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "fedkit"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it aborts the program instead)
	return host + "_" + hex.EncodeToString(b[:])
}
