// Command controllerruntime runs fedkit's loops inside a controller-runtime manager, the way a
// platform team adds federation to an operator it already has: the manager owns the process,
// the leader election, the metrics and health endpoints and the shutdown; fedkit's loops are
// Runnables it starts once this replica is the leader.
//
//	go run . --kubeconfig ~/.kube/host.yaml
//
// The host is the cluster of the kubeconfig (or the in-cluster config): it must serve fedkit's
// CRDs (kubectl apply -f config/crd) and hold the member Clusters and their Secrets in
// --namespace (fedkit-system). Package fedkit never imports controller-runtime: this module
// does, with its own go.mod.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// config is what the command line sets; the test sets it directly.
type config struct {
	// Namespace holds the Clusters' Secrets and the leader election Lease.
	Namespace string
	// LeaderElection makes only one replica run the loops.
	LeaderElection bool
	// MetricsAddr and ProbeAddr are the manager's endpoints ("0" turns one off).
	MetricsAddr, ProbeAddr string
	// Registerer receives the manager's and the loops' metrics: controller-runtime's
	// registry, served on MetricsAddr, unless the caller gives another.
	Registerer prometheus.Registerer
	// Logger is the manager's logger; the loops get named children of it.
	Logger logr.Logger
	// OwnQueue drives sync's Reconcile from a controller of the manager (ownqueue.go)
	// instead of running Syncer.Run.
	OwnQueue bool
	// NoCollector leaves the status collector out. Its status writes requeue the federated
	// object as well; without it, sync's own triggers are all that acts on member drift.
	NoCollector bool
}

func main() {
	c := config{Registerer: crmetrics.Registry}
	flag.StringVar(&c.Namespace, "namespace", "fedkit-system", "namespace of the Clusters' Secrets and of the leader election Lease")
	flag.BoolVar(&c.LeaderElection, "leader-elect", true, "run the loops only on the replica holding the Lease")
	flag.StringVar(&c.MetricsAddr, "metrics-bind-address", ":8080", `address of the metrics endpoint ("0": none)`)
	flag.StringVar(&c.ProbeAddr, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0": none)`)
	flag.BoolVar(&c.OwnQueue, "own-queue", false, "drive sync's Reconcile from a controller-runtime controller instead of its Run")
	flag.Parse() // controller-runtime registers --kubeconfig
	c.Logger = logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	ctrl.SetLogger(c.Logger)

	cfg, err := ctrl.GetConfig()
	if err == nil {
		err = run(ctrl.SetupSignalHandler(), cfg, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "controllerruntime:", err)
		os.Exit(1)
	}
}

// run builds the manager and runs it until ctx is done.
func run(ctx context.Context, cfg *rest.Config, c config) error {
	mgr, err := newManager(cfg, c)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// newManager is the whole integration: a manager, fedkit's clients built from its rest.Config,
// and each loop's Run added as a Runnable.
func newManager(cfg *rest.Config, c config) (manager.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Logger:                        c.Logger,
		Metrics:                       metricsserver.Options{BindAddress: c.MetricsAddr},
		HealthProbeBindAddress:        c.ProbeAddr,
		LeaderElection:                c.LeaderElection,
		LeaderElectionID:              "fedkit-controlplane",
		LeaderElectionNamespace:       c.Namespace,
		LeaderElectionReleaseOnCancel: true, // a rolling update hands over at once
	})
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}

	// The host client and the member clusters, from the manager's rest.Config.
	host, err := kube.New(mgr.GetConfig(), kube.Options{UserAgent: "fedkit-controllerruntime"})
	if err != nil {
		return nil, err
	}
	clusters, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Namespace: c.Namespace, Logger: c.Logger.WithName("clusters")})
	if err != nil {
		return nil, err
	}
	// Every replica keeps its member connections and caches warm, so a new leader starts
	// from synced caches; only the leader runs the loops below.
	if err := mgr.Add(everyReplica(clusters.Run)); err != nil {
		return nil, err
	}

	// The loops. Each Run blocks until ctx is done and joins its goroutines, which is what
	// manager.RunnableFunc needs; a RunnableFunc needs leader election.
	typ := federation.DeploymentType
	monitor, err := status.NewClusterMonitor(host, clusters, status.MonitorOptions{Logger: c.Logger.WithName("monitor"), Registerer: c.Registerer})
	if err != nil {
		return nil, err
	}
	sched, err := scheduler.New(host, typ, scheduler.Options{Logger: c.Logger.WithName("scheduler"), Registerer: c.Registerer})
	if err != nil {
		return nil, err
	}
	// The scheduler runs for the type: sync waits for its schedule.
	syncer, err := fedsync.New(host, clusters, typ, fedsync.Options{Logger: c.Logger.WithName("sync"), Registerer: c.Registerer, WaitForScheduler: true})
	if err != nil {
		return nil, err
	}
	collector, err := status.New(host, clusters, typ, status.Options{Logger: c.Logger.WithName("status"), Registerer: c.Registerer})
	if err != nil {
		return nil, err
	}
	loops := []func(context.Context) error{monitor.Run, sched.Run, syncer.Run, collector.Run}
	if c.OwnQueue {
		if err := addOwnQueueSync(mgr, syncer, typ); err != nil {
			return nil, err
		}
		loops = []func(context.Context) error{monitor.Run, sched.Run, collector.Run}
	}
	if c.NoCollector {
		loops = loops[:len(loops)-1] // the collector is last
	}
	for _, loop := range loops {
		if err := mgr.Add(manager.RunnableFunc(loop)); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// everyReplica is a Runnable that runs on every replica, leader or not.
type everyReplica func(context.Context) error

func (r everyReplica) Start(ctx context.Context) error { return r(ctx) }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (everyReplica) NeedLeaderElection() bool { return false }

var _ manager.LeaderElectionRunnable = everyReplica(nil)
