package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fedkit/fedkit/cmd/internal/process"
	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// flags are the command line, parsed. Every default is the library's own (the constants of
// each package), so --help shows what the control plane does when a flag is left out.
type flags struct {
	// Connection to the host.
	kubeconfig, hostContext string
	serviceAccountDir       string
	clusterNamespace        string
	qps                     float64
	burst                   int

	// What runs.
	types, controllers string
	identity           string
	typeConfigs        bool

	// Workers, periods and timeouts of the loops.
	schedulerWorkers, syncWorkers, statusWorkers, monitorWorkers int
	dnsWorkers, dependenciesWorkers, propagationWorkers          int
	syncResyncPeriod, statusPeriod, monitorPeriod, dnsResync     time.Duration
	syncClusterQPS                                               float64
	retryPeriod, cacheSyncTimeout, eventWindow                   time.Duration

	// Failover.
	fleetDisruption                      bool
	disruptionThreshold                  float64
	disruptionWindow, credentialsWarning time.Duration

	// Replicas.
	leaderElect                                    bool
	leaseDuration, renewDeadline, leaseRetryPeriod time.Duration
	leaseNamespace, leaseName                      string
	shards                                         int
	shard                                          string

	// The process's endpoints, logs, shutdown.
	metricsAddr, probeAddr, pprofAddr string
	gracefulShutdown                  time.Duration
	verbosity                         int
	logFormat                         string
	version                           bool

	// set are the flags given on the command line.
	set map[string]bool
}

// Defaults of the process itself (the library has none for these).
const (
	defaultMetricsAddr      = ":8080"
	defaultProbeAddr        = ":8081"
	defaultGracefulShutdown = 30 * time.Second
)

// newFlagSet returns the program's flags, bound to f, with the library's defaults.
func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet(programName, flag.ContinueOnError)

	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the host cluster. Default: $KUBECONFIG, else the in-cluster configuration (a pod's ServiceAccount), else ~/.kube/config")
	fs.StringVar(&f.hostContext, "host-context", "", "kubeconfig context of the host cluster (default: the current context; not with the in-cluster configuration)")
	fs.StringVar(&f.serviceAccountDir, "serviceaccount-dir", process.DefaultServiceAccountDir, "directory of the in-cluster credentials: token, ca.crt and namespace, as every pod has them")
	fs.StringVar(&f.clusterNamespace, "cluster-namespace", kube.DefaultNamespace, "namespace of the member clusters' Secrets on the host")
	fs.Float64Var(&f.qps, "kube-api-qps", 0, "client-side requests per second to the host and to each member (0: no client-side limit, the API servers' Priority and Fairness protects them)")
	fs.IntVar(&f.burst, "kube-api-burst", 0, "client-side burst with --kube-api-qps")

	fs.BoolVar(&f.typeConfigs, "type-configs", true, "also run the loops of every type a FederatedTypeConfig on the host configures (kubectl fed enable), started, restarted and stopped as the configurations change")
	fs.StringVar(&f.types, "types", "", "comma-separated federated types to run the scheduler, sync and status loops for, by kind (FederatedDeployment or Deployment; default: every built-in type)")
	fs.StringVar(&f.controllers, "controllers", "*", "loops to run: '*' is every one, 'foo' enables foo, '-foo' disables it; one of "+strings.Join(partNames(), ", "))
	fs.StringVar(&f.identity, "identity", federation.ManagedByValue, "value of the federation.k8s.io/managed-by label on the member objects this control plane manages")

	fs.IntVar(&f.schedulerWorkers, "scheduler-workers", scheduler.DefaultWorkers, "federated objects each scheduler schedules at once")
	fs.IntVar(&f.syncWorkers, "sync-workers", fedsync.DefaultWorkers, "federated objects each sync loop propagates at once")
	fs.IntVar(&f.statusWorkers, "status-workers", status.DefaultWorkers, "federated objects each status collector collects at once")
	fs.IntVar(&f.monitorWorkers, "cluster-monitor-workers", status.DefaultMonitorWorkers, "Clusters the cluster monitor probes at once")
	fs.IntVar(&f.dnsWorkers, "dns-workers", dnsrecord.DefaultWorkers, "DNS records the DNS loop writes at once")
	fs.IntVar(&f.dependenciesWorkers, "dependencies-workers", dependencies.DefaultWorkers, "namespaces the dependencies loop handles at once")
	fs.IntVar(&f.propagationWorkers, "propagation-workers", propagation.DefaultWorkers, "native objects each propagation loop handles at once")
	fs.DurationVar(&f.syncResyncPeriod, "sync-resync-period", fedsync.DefaultResyncPeriod, "how often sync checks every object against its members when nothing changed")
	fs.DurationVar(&f.statusPeriod, "status-period", status.DefaultPeriod, "how often the status collector pulls each object's member status")
	fs.DurationVar(&f.monitorPeriod, "cluster-monitor-period", status.DefaultProbePeriod, "how often the cluster monitor probes each Cluster")
	fs.DurationVar(&f.dnsResync, "dns-resync-period", dnsrecord.DefaultResyncPeriod, "how often the DNS loop writes every record again when nothing changed")
	fs.Float64Var(&f.syncClusterQPS, "sync-cluster-qps", 0, "sync's writes per second to each member (0: no limit)")
	fs.DurationVar(&f.retryPeriod, "loop-retry-period", controlplane.DefaultRetryPeriod, "how long a failed loop (its CRD missing, say) waits before it is checked and started again")
	fs.DurationVar(&f.cacheSyncTimeout, "cache-sync-timeout", scheduler.DefaultCacheSyncTimeout, "how long each loop waits for its first lists before it fails")
	fs.DurationVar(&f.eventWindow, "event-window", controlplane.DefaultEventWindow, "how long Normal events of one reason in one namespace are gathered before they are written (negative: at once)")

	fs.BoolVar(&f.fleetDisruption, "fleet-disruption", true, "treat Clusters lost together as the control plane's own outage: no NoExecute taint, no eviction, nothing moves (false: every lost Cluster is an outage of its own)")
	fs.Float64Var(&f.disruptionThreshold, "fleet-disruption-threshold", placement.DefaultDisruptionThreshold, "share of the fleet (above 0, at most 1) that, lost within --fleet-disruption-window, is the control plane's own outage; every Cluster lost always is")
	fs.DurationVar(&f.disruptionWindow, "fleet-disruption-window", placement.DefaultDisruptionWindow, "how close together the lost Clusters must have turned not Ready to count as one disruption, and how long a Cluster that came back still counts with them")
	fs.DurationVar(&f.credentialsWarning, "credentials-warning", status.DefaultCredentialsWarning, "how long before a member's credentials expire the cluster monitor warns (condition CredentialsExpiring, a Warning event)")

	fs.BoolVar(&f.leaderElect, "leader-elect", true, "run the loops only while holding a Lease on the host: of several replicas one works, the others stand by")
	fs.DurationVar(&f.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a standby waits after the holder's last renewal before it takes the Lease (whole seconds)")
	fs.DurationVar(&f.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the holder tries to renew before it stops its loops")
	fs.DurationVar(&f.leaseRetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often a replica tries to acquire or renew its Leases")
	fs.StringVar(&f.leaseNamespace, "leader-elect-resource-namespace", "", "namespace of the Leases (default: the namespace the pod runs in, else "+kube.DefaultNamespace+")")
	fs.StringVar(&f.leaseName, "leader-elect-resource-name", "", "name of the Lease, or prefix of the shard Leases with --shards (default: <identity>-controlplane, <identity>-shard)")
	fs.IntVar(&f.shards, "shards", 0, "split the objects into this many shards claimed through Leases, instead of electing one leader (0: no sharding)")
	fs.StringVar(&f.shard, "shard", "", "a static shard INDEX/COUNT this replica runs (a StatefulSet's ordinal and replicas); with --leader-elect the replicas of each shard elect their own leader")

	fs.StringVar(&f.metricsAddr, "metrics-bind-address", defaultMetricsAddr, "address of the Prometheus /metrics endpoint ('0': off)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", defaultProbeAddr, "address of the /healthz and /readyz endpoints ('0': off)")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "0", "address of the /debug/pprof/ endpoints ('0': off)")
	fs.DurationVar(&f.gracefulShutdown, "graceful-shutdown-timeout", defaultGracefulShutdown, "how long the loops get to stop and the Leases to be released after SIGTERM")
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

// parseFlags parses args into flags.
func parseFlags(fs *flag.FlagSet, f *flags, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every setting is a flag (see --help)", fs.Args())
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return nil
}

// parts are the names --controllers knows, with the switch each sets in controlplane.Parts.
var parts = []struct {
	name string
	off  func(*controlplane.Parts) *bool
}{
	{"cluster-monitor", func(p *controlplane.Parts) *bool { return &p.Monitor }},
	{"scheduler", func(p *controlplane.Parts) *bool { return &p.Scheduler }},
	{"sync", func(p *controlplane.Parts) *bool { return &p.Sync }},
	{"status", func(p *controlplane.Parts) *bool { return &p.Status }},
	{"propagation", func(p *controlplane.Parts) *bool { return &p.Propagation }},
	{"dependencies", func(p *controlplane.Parts) *bool { return &p.Dependencies }},
	{"dns", func(p *controlplane.Parts) *bool { return &p.DNS }},
	{"autoscale", func(p *controlplane.Parts) *bool { return &p.Autoscale }},
	{"events", func(p *controlplane.Parts) *bool { return &p.Events }},
}

func partNames() []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.name)
	}
	return out
}

// disabled turns --controllers into the parts switched off, as kube-controller-manager reads
// its --controllers: '*' enables every part, a name enables it, '-name' disables it. A list
// without '*' runs only the parts it names.
func disabled(spec string) (controlplane.Parts, error) {
	var out controlplane.Parts
	items := strings.Split(spec, ",")
	all := slices.Contains(items, "*")
	enabled := map[string]bool{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		name, off := strings.CutPrefix(item, "-")
		switch {
		case item == "*":
			continue
		case !slices.Contains(partNames(), name):
			return out, fmt.Errorf("--controllers: unknown %q (want '*', or names among %s, each optionally prefixed with '-')", item, strings.Join(partNames(), ", "))
		}
		enabled[name] = !off
	}
	for _, p := range parts {
		on, named := enabled[p.name]
		*p.off(&out) = !(on || (all && !named))
	}
	return out, nil
}

// typesOf turns --types into the federated types to run: every built-in one when empty.
func typesOf(spec string) ([]federation.TypeConfig, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil // controlplane's default: every built-in type
	}
	var out []federation.TypeConfig
	for _, kind := range strings.Split(spec, ",") {
		kind = strings.TrimSpace(kind)
		i := slices.IndexFunc(federation.BuiltinTypes(), func(t federation.TypeConfig) bool {
			return strings.EqualFold(t.Federated.Kind, kind) || strings.EqualFold(t.Target.Kind, kind)
		})
		if i < 0 {
			var kinds []string
			for _, t := range federation.BuiltinTypes() {
				kinds = append(kinds, t.Federated.Kind)
			}
			return nil, fmt.Errorf("--types: %q is not a built-in federated type (%s)", kind, strings.Join(kinds, ", "))
		}
		out = append(out, federation.BuiltinTypes()[i])
	}
	return out, nil
}

// staticShard parses --shard INDEX/COUNT.
func staticShard(spec string) (federation.Shard, error) {
	if spec == "" {
		return federation.Shard{}, nil
	}
	i, n, ok := strings.Cut(spec, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return federation.Shard{}, fmt.Errorf("--shard %q: want INDEX/COUNT, as 0/3", spec)
	}
	s := federation.Shard{Index: index, Count: count}
	if err := s.Validate(); err != nil {
		return federation.Shard{}, fmt.Errorf("--shard %q: %w", spec, err)
	}
	return s, nil
}

// options turns the flags into the control plane's Options. podNamespace is the namespace
// the process runs in ("" outside a pod), the Leases' default namespace; version goes on the
// Leases. The process's own parts (logger, registerer, cache) are the caller's to set.
func (f *flags) options(podNamespace, version string) (controlplane.Options, error) {
	var o controlplane.Options
	var errs []error
	var err error
	if o.Types, err = typesOf(f.types); err != nil {
		errs = append(errs, err)
	}
	if o.Disable, err = disabled(f.controllers); err != nil {
		errs = append(errs, err)
	}
	if o.Shard, err = staticShard(f.shard); err != nil {
		errs = append(errs, err)
	}
	o.Identity, o.Version = f.identity, version
	o.TypeConfigs = f.typeConfigs
	o.RetryPeriod, o.EventWindow = f.retryPeriod, f.eventWindow

	o.Scheduler.Workers, o.Scheduler.CacheSyncTimeout = f.schedulerWorkers, f.cacheSyncTimeout
	o.Sync.Workers, o.Sync.CacheSyncTimeout = f.syncWorkers, f.cacheSyncTimeout
	o.Sync.ResyncPeriod, o.Sync.ClusterQPS = f.syncResyncPeriod, f.syncClusterQPS
	o.Status.Workers, o.Status.CacheSyncTimeout, o.Status.Period = f.statusWorkers, f.cacheSyncTimeout, f.statusPeriod
	o.Monitor.Workers, o.Monitor.CacheSyncTimeout, o.Monitor.Period = f.monitorWorkers, f.cacheSyncTimeout, f.monitorPeriod
	o.DNS.Workers, o.DNS.CacheSyncTimeout, o.DNS.ResyncPeriod = f.dnsWorkers, f.cacheSyncTimeout, f.dnsResync
	o.Dependencies.Workers, o.Dependencies.CacheSyncTimeout = f.dependenciesWorkers, f.cacheSyncTimeout
	o.Propagation.Workers, o.Propagation.CacheSyncTimeout = f.propagationWorkers, f.cacheSyncTimeout
	o.Disruption = placement.DisruptionOptions{Threshold: f.disruptionThreshold, Window: f.disruptionWindow, Disabled: !f.fleetDisruption}
	if err := o.Disruption.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--fleet-disruption-threshold, --fleet-disruption-window: %w", err))
	}
	o.Monitor.CredentialsWarning = f.credentialsWarning

	lease := controlplane.Lease{
		Namespace:     f.leaseNamespace,
		Name:          f.leaseName,
		LeaseDuration: f.leaseDuration,
		RenewDeadline: f.renewDeadline,
		RetryPeriod:   f.leaseRetryPeriod,
		// The process stops its Run only on SIGTERM (or an interrupt): a peer takes over at
		// once, not a LeaseDuration later.
		ReleaseOnCancel: true,
	}
	if lease.Namespace == "" {
		lease.Namespace = podNamespace
	}
	if lease.Name == "" {
		// The control plane's own default, named here so that leader_election_master_status
		// can name the Leases (leaseNames).
		lease.Name = f.identity + "-controlplane"
		if f.shards > 0 {
			lease.Name = f.identity + "-shard"
		}
	}
	switch {
	case f.shards < 0:
		errs = append(errs, fmt.Errorf("--shards must not be negative, got %d", f.shards))
	case f.shards > 0 && f.set["leader-elect"] && f.leaderElect:
		errs = append(errs, errors.New("--shards and --leader-elect: the shard Leases already keep two replicas from running the same objects; give one"))
	case f.shards > 0 && f.shard != "":
		errs = append(errs, errors.New("--shards and --shard: a replica runs either a static shard or the shards it claims; give one"))
	case f.shards > 0:
		o.Sharding = &controlplane.Sharding{Count: f.shards, Lease: lease}
	case f.leaderElect:
		o.LeaderElection = &lease
	}
	return o, errors.Join(errs...)
}

// leaseNames are the Leases whose holder leader_election_master_status reports: the
// election's (with a static shard the control plane appends "-<index>" to its name, see
// controlplane.Lease.Name), or one per shard.
func leaseNames(o controlplane.Options) []string {
	switch {
	case o.Sharding != nil:
		var out []string
		for i := range o.Sharding.Count {
			out = append(out, fmt.Sprintf("%s-%d", o.Sharding.Lease.Name, i))
		}
		return out
	case o.LeaderElection != nil && o.Shard.Sharded():
		return []string{o.LeaderElection.Name + "-" + strconv.Itoa(o.Shard.Index)}
	case o.LeaderElection != nil:
		return []string{o.LeaderElection.Name}
	}
	return nil
}
