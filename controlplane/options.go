package controlplane

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// Defaults of [Options].
const (
	// DefaultRetryPeriod is how long a loop that failed waits before it is checked and started
	// again: short enough that a CRD installed after the control plane started is picked up
	// within a minute or so, long enough that a host without it is asked rarely.
	DefaultRetryPeriod = time.Minute

	// DefaultName is the event source's component: what `kubectl describe` shows in the
	// From column of the events the loops record.
	DefaultName = "fedkit"
)

// Options configure a [ControlPlane]. The zero value runs every loop for the built-in types,
// with each loop's own defaults, on the real clock, with logs discarded, no metrics and events
// recorded on the host.
//
// The common fields (Clock, Logger, Registerer, Events, Identity) apply to every loop whose own
// options leave the field at its zero value; a loop's own setting wins. LeaderElection,
// Sharding and Shard configure how several replicas of the control plane share the work (see
// the package documentation, "Running several replicas"); at most one of them is set.
type Options struct {
	// Types are the federated types to run the scheduler, sync and the status collector for,
	// one of each per type. Nil means every built-in type (federation.BuiltinTypes); an empty,
	// non-nil slice runs no per-type loop. Two types with the same federated kind are an error.
	Types []federation.TypeConfig

	// TypeConfigs, when true, also runs the scheduler, sync and the status collector of every
	// type a FederatedTypeConfig on the host configures (`kubectl fed enable`), custom
	// resources included, with the kind's rules: a loop "typeconfigs" watches them, starts a
	// type's loops when its configuration appears, restarts them when its spec changes and
	// stops them when it is deleted, without restarting the process and without touching a
	// member object. A configuration that is invalid, whose rules do not compile, or whose
	// federated kind Types has already, runs nothing new: the previous valid configuration of
	// that name keeps running, and the configuration's Ready condition and a Warning say why.
	// Rules that do not compile in a configuration with no previous one start the loops all
	// the same: sync needs no rule, and the collector reports each object's members not ready
	// with the compile error, so the objects say it too.
	// The loops of a configured type are listed in Status like the others. A configured kind
	// with dependency rules is a workload of the dependencies loop too, which restarts with
	// it when configurations come and go (it runs when Types has a kind to follow, such as
	// ConfigMaps); a dependency such a kind required stays where it is while the kind is
	// disabled (see package dependencies). Policies over native objects of a configured kind
	// are not served (the propagation loops run over Types). False: Types only.
	TypeConfigs bool

	// Per-loop options, applied to the loop of every type (Scheduler, Sync, Status) or to the
	// one loop (Monitor, DNS). See each package for the fields and their defaults. New sets
	// Sync.WaitForScheduler for the types whose scheduler runs (see the package
	// documentation).
	Scheduler scheduler.Options
	Sync      fedsync.Options
	Status    status.Options
	Monitor   status.MonitorOptions
	DNS       dnsrecord.Options
	// Dependencies configures the loop that makes workloads' ConfigMaps, Secrets,
	// ServiceAccounts and PVCs follow them (spec.propagateDependencies), over Types. It runs
	// when some type of Types has an extractor (package dependencies: Deployment, Job, ...).
	// Its ControlPlaneNamespace, whose Secrets never follow a workload, defaults as
	// Propagation's does.
	Dependencies dependencies.Options

	// Autoscale configures the autoscaler (package autoscale): it writes the fleet total of
	// every ReplicaSchedulingPreference with spec.autoscale, from the members' metrics, and
	// the scheduler divides it. It runs over the divisible types of Types (its Types, when
	// set). Its Identity defaults to Identity.
	Autoscale autoscale.Options

	// Propagation is the loop over native objects selected by propagation policies, one
	// per type of propagation.DefaultTypes(Types): namespaced targets, Secrets excluded;
	// and the policy monitor that writes the policies' status, one for all those types.
	// Its ControlPlaneNamespace, where no policy selects, defaults to the Leases'
	// namespace with LeaderElection or Sharding, else to kube.DefaultNamespace.
	Propagation propagation.Options

	// Disable switches parts of the control plane off, for embedders who run them elsewhere or
	// not at all (no DNS, say). The zero value runs everything.
	Disable Parts

	// Clock drives every loop (requeues, backoff, cache sync timeouts, probes) and the retry
	// of failed loops. Default: the real clock.
	Clock clock.WithTicker

	// Logger receives the control plane's logs (loops started, failed, retried) and is every
	// loop's logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives every loop's metrics. nil: no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache every loop of every shard shares (one informer per
	// host resource; see package hostcache), for loops whose own Options.Cache is nil. nil:
	// the control plane makes one and runs it in Run. One given here is run by its owner,
	// who may share it with a kube.ClusterSet (ClusterSetOptions.Cache) or its own loops.
	// Static shards in one process (one control plane per Options.Shard) given one Cache hold
	// one copy of every host object and open one watch per resource between them.
	Cache *hostcache.Cache

	// Events records the loops' events on federated objects. nil: the control plane records
	// them on the host, through a client-go record.EventBroadcaster it starts in Run and shuts
	// down before Run returns (Disable.Events turns that off).
	Events federation.EventRecorder

	// Invariants are the embedder's own rules that every destructive write of every loop
	// (a delete, an orphaning, an adoption, a Secret's placement) must keep, besides the
	// gate's built-in ones (package gate): one Gate with them, and the control plane's
	// namespace, goes to sync, propagation, dependencies and DNS, unless a loop's Options
	// already has a Gate. For example: never delete in namespaces labelled protected=true.
	Invariants []gate.Invariant
	// gate is the Gate completeGate made: the loops' and the shards' Leases'.
	gate *gate.Gate

	// Identity is the value of federation.ManagedByLabel on the member objects this control
	// plane manages, for sync (which writes it), the status collector and the DNS loop
	// (which read only objects carrying it). Default: federation.ManagedByValue. New refuses
	// Sync.Identity and Status.Identity that differ: the collector would never see what sync
	// writes.
	Identity string

	// Version is the version of the program that runs this control plane ("v0.4.0", a
	// commit). With LeaderElection or Sharding, every Lease this replica writes (the
	// election's, the shards' it holds, its presence Lease) carries it in the annotation
	// federation.ControlPlaneVersionAnnotation, so whoever reads the Leases (`kubectl fed
	// version`) sees which version holds them. Empty: no annotation. It changes nothing
	// else.
	Version string

	// EventWindow is how long the control plane's event recorder (when Options.Events is
	// nil) gathers Normal events of one reason in one namespace: at the window's end one
	// object's events are written as recorded, several objects' as one digest Event naming
	// each object and what happened to it. Warnings are written at once; the Normal events
	// of a federated object's first rollout are not written (see package doc). 0:
	// DefaultEventWindow. Negative: every event at once.
	EventWindow time.Duration

	// StatusWindow is how long the control plane's shared status writer holds a loop's status
	// change of a federated object for the other loops' changes to it: the scheduler's, sync's
	// and the collector's changes within the window are one status write, each loop's fields
	// its own. 0: statuswrite's default, two seconds (changes that keep arriving hold the
	// write up to five windows). Negative: no shared writer, each loop writes its status at
	// once; so it is with Sharding, where a pending write could land after the object's
	// shard moved. With LeaderElection the writer runs while this replica leads: what is
	// pending when the replica loses its Lease is dropped, not written (its successor
	// decides again from the objects), and what is pending on a graceful stop is written
	// before the Lease is released. A loop given its own StatusWriter keeps it.
	StatusWindow time.Duration

	// Name is the component of the events' source. Default: DefaultName.
	Name string

	// Disruption says when the fleet counts as disrupted (placement.FleetDisruption: every
	// cluster lost, or a large share of it lost together), the control plane's own outage:
	// the cluster monitor then taints no cluster NoExecute and the scheduler evicts nothing
	// for readiness. It is given to both, unless Scheduler.Disruption or Monitor.Disruption is
	// set (they should agree). Default: the zero placement.DisruptionOptions.
	Disruption placement.DisruptionOptions

	// RetryPeriod is how long a failed loop waits before the control plane checks the host
	// again and restarts it. Default: DefaultRetryPeriod. Negative: a failed loop stays
	// failed.
	RetryPeriod time.Duration

	// LeaderElection, when set, runs the loops in one replica at a time: the replica that
	// holds the Lease it names on the host. The others stand by (their loops are
	// StateStandby) and take over when the leader stops renewing, LeaseDuration after its
	// last renewal; a leader that cannot renew stops every loop before a peer could take the
	// Lease. Nil: no election, the loops run as soon as Run starts. Setting it together with
	// Sharding is an error.
	LeaderElection *Lease

	// Sharding, when set, splits the federated objects (and Clusters, DNS records) between
	// replicas: each claims shards through one Lease per shard and runs one set of loops per
	// shard it holds, each loop with its Options.Shard set to that shard. The shards of a
	// replica that dies move to the others once their Leases expire. Nil: no sharding.
	Sharding *Sharding

	// Shard is this replica's static shard, for embedders that assign shards themselves (a
	// StatefulSet's ordinal as Index, its replicas as Count): every loop runs with it as its
	// Options.Shard, and no Lease is involved. The zero Shard owns every key. With
	// LeaderElection, the replicas given the same Shard elect one leader among them. Setting
	// it together with Sharding is an error.
	Shard federation.Shard
}

// Parts names the parts of a control plane that [Options].Disable can switch off.
type Parts struct {
	// Scheduler, Sync and Status switch off that loop for every type.
	Scheduler, Sync, Status bool
	// Monitor switches off the cluster monitor: Clusters then need their Ready condition
	// written by someone else, or placement leaves them out.
	Monitor bool
	// DNS switches off the DNS loop (ServiceDNSRecord, IngressDNSRecord).
	DNS bool
	// Dependencies switches off the dependencies loop (spec.propagateDependencies). It does
	// not run either when no type of Types is a workload with an extractor.
	Dependencies bool
	// ClusterSet keeps Run from running the ClusterSet's own Run, for an embedder who runs it
	// already (a kube.ClusterSet must run for its member caches to work).
	ClusterSet bool
	// Propagation switches off the propagation loop (PropagationPolicy and
	// ClusterPropagationPolicy over native host objects).
	Propagation bool
	// Autoscale switches off the autoscaler: preferences with spec.autoscale then keep
	// their spec.totalReplicas.
	Autoscale bool
	// Events stops the control plane from recording events on the host when Options.Events
	// is nil: the loops then record none (they still log them).
	Events bool
}

// complete fills in the defaults and spreads the common fields over the loops' options.
func (o *Options) complete() error {
	if o.Types == nil {
		o.Types = federation.BuiltinTypes()
	}
	seen := map[string]bool{}
	for _, t := range o.Types {
		if err := t.Validate(); err != nil {
			return err
		}
		if seen[t.Federated.Kind] {
			return fmt.Errorf("%w: %s appears twice in Types", ErrInvalidOptions, t.Federated.Kind)
		}
		seen[t.Federated.Kind] = true
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Identity == "" {
		o.Identity = federation.ManagedByValue
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.EventWindow == 0 {
		o.EventWindow = DefaultEventWindow
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}

	if err := o.Disruption.Validate(); err != nil {
		return fmt.Errorf("%w: Disruption: %w", ErrInvalidOptions, err)
	}
	for _, d := range []*placement.DisruptionOptions{&o.Scheduler.Disruption, &o.Monitor.Disruption} {
		if *d == (placement.DisruptionOptions{}) {
			*d = o.Disruption
		}
	}
	common(&o.Scheduler.Clock, &o.Scheduler.Logger, &o.Scheduler.Registerer, o)
	common(&o.Sync.Clock, &o.Sync.Logger, &o.Sync.Registerer, o)
	common(&o.Status.Clock, &o.Status.Logger, &o.Status.Registerer, o)
	common(&o.Monitor.Clock, &o.Monitor.Logger, &o.Monitor.Registerer, o)
	common(&o.DNS.Clock, &o.DNS.Logger, &o.DNS.Registerer, o)
	common(&o.Dependencies.Clock, &o.Dependencies.Logger, &o.Dependencies.Registerer, o)
	common(&o.Propagation.Clock, &o.Propagation.Logger, &o.Propagation.Registerer, o)
	common(&o.Autoscale.Clock, &o.Autoscale.Logger, &o.Autoscale.Registerer, o)
	for _, c := range []**hostcache.Cache{&o.Scheduler.Cache, &o.Sync.Cache, &o.Status.Cache, &o.Monitor.Cache, &o.DNS.Cache, &o.Dependencies.Cache, &o.Propagation.Cache, &o.Autoscale.Cache} {
		if *c == nil {
			*c = o.Cache
		}
	}
	if o.Sync.Identity == "" {
		o.Sync.Identity = o.Identity
	}
	if o.Status.Identity == "" {
		o.Status.Identity = o.Identity
	}
	if o.DNS.Identity == "" {
		o.DNS.Identity = o.Identity
	}
	if o.Autoscale.Identity == "" {
		o.Autoscale.Identity = o.Identity
	}
	if o.Sync.Identity != o.Status.Identity {
		return fmt.Errorf("%w: Sync.Identity %q and Status.Identity %q differ: the collector would not see the objects sync writes",
			ErrInvalidOptions, o.Sync.Identity, o.Status.Identity)
	}
	if err := o.completeReplicas(); err != nil {
		return err
	}
	// No policy selects in the control plane's own namespace, and no dependency leaves it:
	// where its Leases are, or the default one (the loops' default, kube.DefaultNamespace).
	ns := o.ownNamespace()
	for _, n := range []*string{&o.Propagation.ControlPlaneNamespace, &o.Dependencies.ControlPlaneNamespace} {
		if *n == "" {
			*n = ns
		}
	}
	o.completeGate()
	return nil
}

// completeGate gives every loop that has none the one Gate of the control plane, with
// Options.Invariants. Its own namespace is federation.DefaultNamespace, where kubectl fed
// join puts a member's ServiceAccount and the host keeps the clusters' credentials, whatever
// namespace its Leases are in (an embedder who moved those gives each loop a Gate of its
// own).
func (o *Options) completeGate() {
	g := gate.New(gate.Options{ControlPlaneNamespace: federation.DefaultNamespace, Invariants: o.Invariants})
	o.gate = g
	for _, loop := range []**gate.Gate{&o.Sync.Gate, &o.Propagation.Gate, &o.Dependencies.Gate, &o.DNS.Gate, &o.Autoscale.Gate} {
		if *loop == nil {
			*loop = g
		}
	}
}

// ownNamespace is the control plane's own namespace on the host, as its Leases say: "" when
// it holds none (the loops then default to kube.DefaultNamespace).
func (o *Options) ownNamespace() string {
	switch {
	case o.LeaderElection != nil:
		return o.LeaderElection.Namespace
	case o.Sharding != nil:
		return o.Sharding.Lease.Namespace
	}
	return ""
}

// common sets a loop's clock, logger and registerer from o where the loop leaves them unset.
func common(clk *clock.WithTicker, log *logr.Logger, reg *prometheus.Registerer, o *Options) {
	if *clk == nil {
		*clk = o.Clock
	}
	if log.GetSink() == nil {
		*log = o.Logger
	}
	if *reg == nil {
		*reg = o.Registerer
	}
}
