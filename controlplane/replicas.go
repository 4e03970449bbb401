package controlplane

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/internal/lease"
)

// Lease configures the coordination.k8s.io/v1 Leases on the host through which replicas of
// one control plane exclude each other: the one Lease of [Options].LeaderElection, or the
// shard Leases of [Options].Sharding. The elections are client-go's
// tools/leaderelection, with its defaults; every field's zero value is the documented
// default.
type Lease struct {
	// Namespace holds the Leases; it must exist. The replicas must be allowed to get, create
	// and update Leases there (and, for sharding, list and delete them). Default: kube.DefaultNamespace
	// ("fedkit-system"), where the clusters' credentials are kept too.
	Namespace string

	// Name is the Lease's name for leader election, and the prefix of the Leases for
	// sharding: one per shard, Name-0 to Name-<Count-1>, and one per replica that says it
	// is alive, Name-member-<hash of Identity>. Replicas that must exclude each other use
	// the same Name; control planes that manage different objects (a different
	// Options.Identity) must not. Default: Options.Identity followed by "-controlplane"
	// (leader election) or "-shard" (sharding): "fedkit-controlplane", "fedkit-shard-0"...
	// With a static Options.Shard, leader election appends "-<Index>" to it, so the
	// replicas of each shard elect their own leader.
	Name string

	// Identity names this replica in the Leases' spec.holderIdentity, and must differ
	// between replicas. It is not Options.Identity, the managed-by label that every replica
	// of a control plane shares. Default: the host name (a pod's name) and 8 random hex
	// digits, chosen once by New, as controller-runtime names its candidates (host name and a
	// UUID): a process restarted under the same name does not take its predecessor's Lease
	// for its own.
	Identity string

	// LeaseDuration is how long a Lease stays with a replica that stopped renewing it (it
	// crashed, or lost the host): a peer takes over that long after it last saw it renewed.
	// Whole seconds. Default: 15s, client-go's and controller-runtime's default.
	LeaseDuration time.Duration

	// RenewDeadline is how long the holder keeps trying to renew before it stops its loops.
	// The loops have LeaseDuration - RenewDeadline to return before a peer may start them
	// (they return within one reconcile). Less than LeaseDuration. Default: 10s.
	RenewDeadline time.Duration

	// RetryPeriod is how often a replica tries to acquire, renews, and (sharding) looks at
	// the spread of the shards. Default: 2s.
	RetryPeriod time.Duration

	// ReleaseOnCancel gives the Leases up when Run's context is done, after the loops have
	// returned, so a peer takes over at once instead of LeaseDuration later: set it when Run
	// is stopped only on a graceful shutdown (SIGTERM). Default false, as in client-go: the
	// Leases expire on their own, which is also what a crash does.
	ReleaseOnCancel bool
}

// Sharding configures shards claimed through Leases: each replica runs the loops for the
// shards it holds, and the replicas split Count shards evenly between them (see
// [Options].Sharding).
type Sharding struct {
	// Count is how many shards the keys are split into (federation.ShardOf). Every replica
	// must use the same Count; while a replica with another Count holds a shard, a replica
	// claims nothing, so a rolling change of Count never runs two splits at once. Required:
	// at least 1. Choose more shards than replicas (a few per replica): a replica's shards
	// move one by one when replicas come and go, and each shard held costs its own set of
	// loops and informers.
	Count int

	// Lease configures the shard Leases.
	Lease Lease
}

// completeReplicas validates the replica options (leader election, sharding, a static shard)
// and fills in the Leases' defaults, on copies: the embedder's structs are not written.
func (o *Options) completeReplicas() error {
	var errs []error
	if o.LeaderElection != nil && o.Sharding != nil {
		errs = append(errs, errors.New("LeaderElection and Sharding are both set: shards claimed through Leases already keep two replicas from running the same keys; set one"))
	}
	if o.Sharding != nil && o.Shard.Sharded() {
		errs = append(errs, fmt.Errorf("Options.Shard %s and Options.Sharding are both set: a replica owns either a static shard or the shards it claims; set one", o.Shard))
	}
	if err := o.Shard.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("Options.Shard: %w", err))
	}
	for loop, s := range map[string]federation.Shard{
		"Scheduler.Shard": o.Scheduler.Shard, "Sync.Shard": o.Sync.Shard, "Status.Shard": o.Status.Shard,
		"Monitor.Shard": o.Monitor.Shard, "DNS.Shard": o.DNS.Shard, "Propagation.Shard": o.Propagation.Shard,
	} {
		if s != (federation.Shard{}) {
			errs = append(errs, fmt.Errorf("%s is set: the control plane gives every loop its shard; set Options.Shard or Options.Sharding instead", loop))
		}
	}
	if le := o.LeaderElection; le != nil {
		c := *le
		suffix := "-controlplane"
		if o.Shard.Sharded() {
			// Each static shard's replicas elect their own leader.
			suffix += "-" + strconv.Itoa(o.Shard.Index)
			if c.Name != "" {
				c.Name += "-" + strconv.Itoa(o.Shard.Index)
			}
		}
		if err := c.complete(o.Identity, suffix, false, 0); err != nil {
			errs = append(errs, fmt.Errorf("LeaderElection: %w", err))
		}
		o.LeaderElection = &c
	}
	if sh := o.Sharding; sh != nil {
		c := *sh
		if err := c.Lease.complete(o.Identity, "-shard", true, c.Count); err != nil {
			errs = append(errs, fmt.Errorf("Sharding: %w", err))
		}
		o.Sharding = &c
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return nil
}

// complete fills in l's defaults (the Name from the control plane's identity and suffix) and
// validates it as package lease will use it.
func (l *Lease) complete(identity, suffix string, shards bool, count int) error {
	if l.Namespace == "" {
		l.Namespace = kube.DefaultNamespace
	}
	if l.Name == "" {
		l.Name = identity + suffix
	}
	if l.Identity == "" {
		l.Identity = lease.DefaultIdentity()
	}
	if l.LeaseDuration == 0 {
		l.LeaseDuration = lease.DefaultLeaseDuration
	}
	if l.RenewDeadline == 0 {
		l.RenewDeadline = lease.DefaultRenewDeadline
	}
	if l.RetryPeriod == 0 {
		l.RetryPeriod = lease.DefaultRetryPeriod
	}
	var errs []error
	if msgs := validation.IsDNS1123Label(l.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("the Namespace %q: %v", l.Namespace, msgs))
	}
	// The longest name a Lease of the group gets: a shard's, or a replica's presence.
	longest := l.Name
	if shards {
		longest += "-member-0123456789"
	}
	if msgs := validation.IsDNS1123Subdomain(longest); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("the Name %q does not make valid Lease names (set Name, or an Options.Identity that is a DNS name): %v", l.Name, msgs))
	}
	if err := l.options(count, Options{}).Validate(shards); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// options are l as package lease takes them.
func (l Lease) options(count int, o Options) lease.Options {
	var ann map[string]string
	if o.Version != "" {
		ann = map[string]string{federation.ControlPlaneVersionAnnotation: o.Version}
	}
	return lease.Options{
		Annotations:     ann,
		Namespace:       l.Namespace,
		Name:            l.Name,
		Identity:        l.Identity,
		LeaseDuration:   l.LeaseDuration,
		RenewDeadline:   l.RenewDeadline,
		RetryPeriod:     l.RetryPeriod,
		ReleaseOnCancel: l.ReleaseOnCancel,
		Count:           count,
		Logger:          o.Logger,
	}
}

// work runs the loops as the replica options say: the one set of loops all along (no
// leader election), while leading (LeaderElection), or one set per shard held (Sharding).
// It returns nil when ctx is done, after every loop has returned, and an error when every
// loop of a set has failed (see Run).
func (cp *ControlPlane) work(ctx context.Context) error {
	switch o := cp.opts; {
	case o.Sharding != nil:
		host := leaseHost{ClusterClient: cp.host, gate: o.gate, group: o.Sharding.Lease.Name}
		return lease.Shards(ctx, host, o.Sharding.Lease.options(o.Sharding.Count, o), cp.runShard)
	case o.LeaderElection != nil:
		u := cp.units[0]
		return lease.Elect(ctx, cp.host, o.LeaderElection.options(0, o), func(term context.Context) error {
			cp.opts.Logger.Info("Leading: starting the loops", "lease", o.LeaderElection.Namespace+"/"+o.LeaderElection.Name)
			defer cp.setUnitState(u, StateStandby)
			if cp.status == nil {
				return cp.runUnit(term, u)
			}
			// The shared status writer runs for the term. When the term ends before Run
			// does, the Lease was lost: what is pending is dropped, not written, since the
			// successor may be writing already. Otherwise (a graceful stop, every loop
			// failed) it is written before the Lease is released.
			stop := cp.runStatusWriter(term)
			err := cp.runUnit(term, u)
			stop(ctx.Err() != nil || term.Err() == nil)
			return err
		})
	default:
		return cp.runUnit(ctx, cp.units[0])
	}
}

// runShard builds the loops of a shard this replica has claimed and runs them until the
// shard is lost or handed over (ctx is done); Status lists them meanwhile.
func (cp *ControlPlane) runShard(ctx context.Context, shard federation.Shard) error {
	u, err := cp.newUnit(shard)
	if err != nil {
		// New built every loop once with these options: only a shard out of range gets here.
		return fmt.Errorf("controlplane: shard %s: %w", shard, err)
	}
	cp.addUnit(u)
	defer cp.removeUnit(u)
	cp.opts.Logger.Info("Holding a shard: starting its loops", "shard", shard.String())
	defer cp.opts.Logger.Info("Shard stopped", "shard", shard.String())
	return cp.runUnit(ctx, u)
}

// leaseHost is the host as package lease sees it: its deletes (a peer's presence Lease gone
// stale, its own when it lets go) go through the gate, the Lease read first, its
// lease.GroupLabel (group) the mark that it is this deployment's.
type leaseHost struct {
	federation.ClusterClient
	gate  *gate.Gate
	group string
}

// Delete reads the Lease and deletes it through the gate; a missing one is NotFound, as a
// delete's.
func (h leaseHost) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	live, err := h.ClusterClient.Get(ctx, gvr, namespace, name)
	if err != nil {
		return err
	}
	return h.gate.Delete(ctx, h.ClusterClient, gate.Write{
		Verb: gate.Delete, Resource: gvr, Object: live,
		Evidence: gate.Evidence{Mark: gate.Mark{Label: lease.GroupLabel, Value: h.group}},
	}, opts)
}
