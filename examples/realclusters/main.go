// Command realclusters runs fedkit's whole control plane against real clusters named by the
// contexts of a kubeconfig: one host, where the federated objects live, and members:
//
//	go run ./examples/realclusters -kubeconfig ~/.kube/config -host-context host -contexts a,b -install-crds -demo
//
// With -contexts, the members are those contexts (their credentials stay in the kubeconfig;
// exec plugins work) and a Cluster object is written on the host for each. Without it, the
// members are the Clusters already registered on the host, each with its Secret, as in
// KubeFed. -install-crds installs fedkit's CRDs and the namespace fedkit-system on the host
// first; -demo federates a ConfigMap to every member and prints its status as it changes.
// Several replicas of the program can run at once: with -leader-elect one of them runs the
// loops (Lease fedkit-system/fedkit-controlplane); with -shards N they split the objects
// (Leases fedkit-system/fedkit-shard-0 ... N-1), and a replica's shards move to the others when
// it dies. Stop it with Ctrl-C.
//
// hack/dev-clusters.sh starts a host and two members on this machine and prints a kubeconfig
// for them.
//
// It is an example of embedding the library in a program of your own. To deploy the control
// plane as it is, use cmd/fedkit-controller-manager and config/default (README.md, "Deploy").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr/funcr"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation/kube"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "realclusters:", err)
		os.Exit(1)
	}
}

// run is the program: it parses args, connects, and runs the control plane until ctx is done.
// The demo's status goes to out, logs to errOut.
func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("realclusters", flag.ContinueOnError)
	fs.SetOutput(errOut)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	hostContext := fs.String("host-context", "", "context of the host cluster (default: the current context)")
	contexts := fs.String("contexts", "", "comma-separated contexts of the member clusters (default: the Clusters registered on the host)")
	install := fs.Bool("install-crds", false, "install fedkit's CRDs and its namespace (fedkit-system) on the host first")
	demo := fs.Bool("demo", false, "federate the ConfigMap fedkit-demo/hello to every member and print its status")
	leaderElect := fs.Bool("leader-elect", false, "run the loops only while holding the Lease fedkit-system/fedkit-controlplane on the host (run several replicas, one active)")
	shards := fs.Int("shards", 0, "split the objects into this many shards claimed through Leases on the host (run several replicas, each with its share)")
	verbosity := fs.Int("v", 0, "log verbosity")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(errOut, prefix, args) }, funcr.Options{Verbosity: *verbosity})

	// 1. The host's client and the member clusters, from the kubeconfig.
	var members []string
	if *contexts != "" {
		members = strings.Split(*contexts, ",")
	}
	host, clusters, err := kube.ConnectKubeconfig(*kubeconfig, *hostContext, kube.ClusterSetOptions{Logger: log.WithName("clusters")}, members...)
	if err != nil {
		return err
	}

	// 2. fedkit's CRDs on the host, and a Cluster object per member context.
	if *install {
		if err := installCRDs(ctx, host); err != nil {
			return err
		}
	}
	if len(members) > 0 {
		if err := clusters.Register(ctx, host); err != nil {
			return err
		}
	}

	// 3. Every loop, in one call.
	opts := controlplane.Options{Logger: log.WithName("controlplane")}
	if *leaderElect {
		opts.LeaderElection = &controlplane.Lease{}
	}
	if *shards > 0 {
		opts.Sharding = &controlplane.Sharding{Count: *shards}
	}
	cp, err := controlplane.New(host, clusters, opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()
	if *demo {
		if err := runDemo(ctx, host, out); err != nil && ctx.Err() == nil {
			cancel()
			return errors.Join(err, <-done)
		}
	}
	return <-done
}
