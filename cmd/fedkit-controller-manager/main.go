// Command fedkit-controller-manager runs fedkit's control plane (package controlplane) as a
// process: the cluster monitor, the scheduler, sync and status collector of each federated
// type, the propagation, dependencies and DNS loops, over the host it is configured for and
// the member clusters registered there (Clusters and their Secrets, `kubectl fed join`).
// It plays the part of KubeFed's controller manager; config/default deploys it
// (`kubectl apply -k config/default`).
//
//	fedkit-controller-manager                       # in a pod: its ServiceAccount
//	fedkit-controller-manager --kubeconfig dev-clusters.kubeconfig --host-context host
//
// It finds the host as client-go's users do: --kubeconfig, else $KUBECONFIG, else the
// in-cluster configuration, else ~/.kube/config. Leader election is on (a Lease in the
// namespace it runs in); --shards splits the objects between replicas instead. It serves
// Prometheus metrics on --metrics-bind-address, /healthz and /readyz on
// --health-probe-bind-address, and pprof on --pprof-bind-address when set. SIGTERM stops
// the loops, releases its Leases at once and exits 0. `--help` lists every flag with its
// default, README.md's "Deploy" section too.
//
// It is built from fedkit's public packages only, as any embedder's program would be.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/klog/v2"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/cmd/internal/process"
	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/hostcache"
)

const programName = "fedkit-controller-manager"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A second signal kills the process: the first one's graceful stop is under way.
	context.AfterFunc(ctx, stop)
	// client-go's request counter is process-wide: it is set here, once, and nowhere else.
	requests := newRESTRequests()
	clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: requests})
	err := run(ctx, os.Args[1:], system{
		stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, version: version,
		collectors: []prometheus.Collector{requests},
		// client-go logs what it does not log through a context (klog) through ours.
		globalLogger: func(log logr.Logger) { klog.SetLogger(log) },
	})
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, programName+":", err)
		os.Exit(1)
	}
}

// system is what run takes from the process: main gives the real ones, tests their own.
type system struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// version is what the linker set (main.version); "" when nothing.
	version string
	// collectors are registered with the control plane's metrics (main's client-go
	// request counter).
	collectors []prometheus.Collector
	// globalLogger, when set, hands the logger to client-go's process-wide klog.
	globalLogger func(logr.Logger)
}

// run is the program: it parses args, connects to the host, serves the endpoints and runs
// the control plane until ctx is done, then stops it within --graceful-shutdown-timeout.
// It returns flag.ErrHelp for --help, nil after a graceful stop, and an error when it
// cannot start or the control plane stops by itself (every loop failed).
func run(ctx context.Context, args []string, sys system) error {
	var f flags
	fs := newFlagSet(&f)
	fs.SetOutput(sys.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s [flags]\n\nRuns fedkit's control plane. Flags:\n", programName)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, &f, args); err != nil {
		return err
	}
	ver := process.Version(sys.version)
	if f.version {
		_, err := fmt.Fprintln(sys.stdout, programName, ver)
		return err
	}
	log, err := process.NewLogger(f.logFormat, f.verbosity, sys.stderr)
	if err != nil {
		return err
	}
	if sys.globalLogger != nil {
		sys.globalLogger(log)
	}
	hc, err := loadConfig(&f, sys.getenv)
	if err != nil {
		return err
	}
	podNamespace := hc.Namespace
	if podNamespace == "" {
		podNamespace = kube.DefaultNamespace
	}
	opts, err := f.options(podNamespace, ver)
	if err != nil {
		return err
	}
	reg, err := newRegistry(sys.collectors...)
	if err != nil {
		return err
	}

	// The host's client, one informer cache for the cluster set and every loop, the member
	// clusters registered on the host, and the control plane over them.
	client := kube.Options{QPS: float32(f.qps), Burst: f.burst, UserAgent: programName + "/" + ver}
	host, err := kube.New(hc.Rest, client)
	if err != nil {
		return err
	}
	cache, err := hostcache.New(host, hostcache.Options{Logger: log.WithName("hostcache")})
	if err != nil {
		return err
	}
	clusters, err := kube.NewClusterSet(host, kube.ClusterSetOptions{
		Namespace: f.clusterNamespace, Client: client, Logger: log.WithName("clusters"),
		CacheSyncTimeout: f.cacheSyncTimeout, Registerer: reg, Cache: cache,
	})
	if err != nil {
		return err
	}
	// Pull clusters (spec.mode: Pull) are served through their Assignments on the host;
	// the others through the cluster set (package agent).
	set, err := agent.NewClusterSet(host, clusters, agent.SetOptions{})
	if err != nil {
		return err
	}
	opts.Logger, opts.Registerer, opts.Cache = log.WithName("controlplane"), reg, cache
	cp, err := controlplane.New(host, set, opts)
	if err != nil {
		return err
	}
	if err := reg.Register(newLeaderStatus(cp, leaseNames(opts))); err != nil {
		return err
	}

	srv, err := startServers(&f, reg, cp, log)
	if err != nil {
		return err
	}
	defer srv.shutdown(5 * time.Second)
	log.Info("Starting", "version", ver, "host", hc.Rest.Host, "config", hc.Source, "replicas", replicas(opts))
	return runControlPlane(ctx, cp, cache, f.gracefulShutdown, log)
}

// replicas says, for the log, how this replica shares the work.
func replicas(o controlplane.Options) string {
	switch {
	case o.Sharding != nil:
		return fmt.Sprintf("%d shards through Leases in %s", o.Sharding.Count, o.Sharding.Lease.Namespace)
	case o.LeaderElection != nil:
		return "leader election on the Lease " + o.LeaderElection.Namespace + "/" + o.LeaderElection.Name
	case o.Shard.Sharded():
		return "static shard " + o.Shard.String()
	}
	return "single, no leader election"
}

// runControlPlane runs the host cache and the control plane until ctx is done, then gives
// the control plane gracefulShutdown to stop (its loops return, its Leases are released),
// and stops the cache after it. It returns the control plane's error, or an error when it
// did not stop in time (the Leases then expire on their own).
func runControlPlane(ctx context.Context, cp *controlplane.ControlPlane, cache *hostcache.Cache, gracefulShutdown time.Duration, log logr.Logger) error {
	// The cache outlives the loops' Run: they read it until they return.
	cacheCtx, stopCache := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = cache.Run(cacheCtx) })
	stopped := make(chan error, 1)
	go func() { stopped <- cp.Run(ctx) }()

	var err error
	select {
	case err = <-stopped:
	case <-ctx.Done():
		log.Info("Stopping: the loops return, then the Leases are released", "timeout", gracefulShutdown)
		t := time.NewTimer(gracefulShutdown)
		defer t.Stop()
		select {
		case err = <-stopped:
		case <-t.C:
			stopCache()
			return fmt.Errorf("the control plane did not stop within --graceful-shutdown-timeout %s; its Leases expire on their own", gracefulShutdown)
		}
	}
	stopCache()
	wg.Wait()
	if err != nil {
		return err
	}
	log.Info("Stopped")
	return nil
}
