// Command fedkit-agent runs pull mode's agent (package agent) as a process in a member
// cluster: it reads what the federation assigned to its cluster from the host, applies it in
// the member, reports back and renews its Lease there. The host never reaches the member and
// holds no credential for it.
//
//	fedkit-agent --cluster edge --hub-kubeconfig /etc/fedkit/hub/kubeconfig   # in a pod
//	fedkit-agent --cluster edge --hub-kubeconfig edge-agent.kubeconfig --kubeconfig edge.kubeconfig
//
// `kubectl fed join edge --mode Pull --agent-kubeconfig edge-agent.kubeconfig` registers the
// cluster on the host and writes the agent's kubeconfig there: an identity confined to the
// cluster's namespace on the host. config/agent deploys the agent in the member, with that
// file in the Secret fedkit-system/fedkit-agent-hub (README.md, "Pull mode").
//
// It finds the member as client-go's users do: --kubeconfig, else $KUBECONFIG, else the
// in-cluster configuration, else ~/.kube/config. It serves /healthz on
// --health-probe-bind-address. SIGTERM stops the agent between two passes and exits 0; the
// member objects stay as they are, and the host sees the Lease age.
//
// It is built from fedkit's public packages only, as any embedder's program would be.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/cmd/internal/process"
	"github.com/fedkit/fedkit/federation/kube"
)

const programName = "fedkit-agent"

// version is the program's version, set by the linker (-ldflags "-X main.version=v0.4.0").
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], system{
		stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, version: version,
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
	version        string
	globalLogger   func(logr.Logger)
}

// flags are the command line, parsed; every default is the agent package's own.
type flags struct {
	cluster, identity         string
	hubKubeconfig, hubContext string
	kubeconfig, context       string
	serviceAccountDir         string
	period, leaseDuration     time.Duration
	probeAddr, logFormat      string
	verbosity                 int
	version                   bool
	qps                       float64
	burst                     int
}

const defaultProbeAddr = ":8081"

func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet(programName, flag.ContinueOnError)
	fs.StringVar(&f.cluster, "cluster", "", "name of this member's Cluster on the host (required); the agent reads and writes only in its namespace there, fedkit-cluster-<name>")
	fs.StringVar(&f.hubKubeconfig, "hub-kubeconfig", "", "kubeconfig of the agent's identity on the host, as `kubectl fed join --mode Pull --agent-kubeconfig` writes it (required)")
	fs.StringVar(&f.hubContext, "hub-context", "", "kubeconfig context in --hub-kubeconfig (default: its current context)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster. Default: $KUBECONFIG, else the in-cluster configuration (a pod's ServiceAccount), else ~/.kube/config")
	fs.StringVar(&f.context, "context", "", "kubeconfig context of the member cluster (default: the current context; not with the in-cluster configuration)")
	fs.StringVar(&f.serviceAccountDir, "serviceaccount-dir", process.DefaultServiceAccountDir, "directory of the in-cluster credentials: token, ca.crt and namespace, as every pod has them")
	fs.StringVar(&f.identity, "identity", "", "the federation's identity: the agent changes and deletes only member objects labelled with it (default: the control plane's default)")
	fs.DurationVar(&f.period, "period", agent.DefaultPeriod, "how often the agent reads its Assignments and corrects drift (and at once when an Assignment changes)")
	fs.DurationVar(&f.leaseDuration, "lease-duration", agent.DefaultLeaseDuration, "duration written in the agent's Lease on the host: the host judges the cluster unreachable after it; longer than --period")
	fs.Float64Var(&f.qps, "kube-api-qps", 0, "queries per second to each API server (host and member); 0: client-go's default")
	fs.IntVar(&f.burst, "kube-api-burst", 0, "burst of queries to each API server; 0: client-go's default")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", defaultProbeAddr, "address of /healthz; \"0\" turns it off")
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

// parse parses args and checks what the agent cannot start without.
func parse(fs *flag.FlagSet, f *flags, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every setting is a flag (--help)", fs.Args())
	}
	if f.version {
		return nil
	}
	switch {
	case f.cluster == "":
		return errors.New("--cluster is required: the name of this member's Cluster on the host")
	case f.hubKubeconfig == "":
		return errors.New("--hub-kubeconfig is required: the agent's kubeconfig for the host, as `kubectl fed join --mode Pull --agent-kubeconfig` writes it")
	}
	return nil
}

// run is the program: it parses args, connects to the host and the member, serves /healthz
// and runs the agent until ctx is done. It returns flag.ErrHelp for --help, nil after ctx is
// done, and an error when it cannot start.
func run(ctx context.Context, args []string, sys system) error {
	var f flags
	fs := newFlagSet(&f)
	fs.SetOutput(sys.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s --cluster NAME --hub-kubeconfig FILE [flags]\n\nRuns fedkit's pull-mode agent in a member cluster. Flags:\n", programName)
		fs.PrintDefaults()
	}
	if err := parse(fs, &f, args); err != nil {
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
	a, where, err := newAgent(&f, sys.getenv, ver, log)
	if err != nil {
		return err
	}
	stopProbes, err := serveProbes(f.probeAddr, log)
	if err != nil {
		return err
	}
	defer stopProbes()
	log.Info("Starting", "version", ver, "cluster", f.cluster, "member", where)
	err = a.Run(ctx)
	log.Info("Stopped")
	return err
}

// newAgent connects to the host with --hub-kubeconfig and to the member as client-go's users
// do, and returns the agent and where the member's configuration came from.
func newAgent(f *flags, getenv func(string) string, ver string, log logr.Logger) (*agent.Agent, string, error) {
	hubRules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.hubKubeconfig}
	hubCfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(hubRules, &clientcmd.ConfigOverrides{CurrentContext: f.hubContext}).ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("--hub-kubeconfig %s: %w", f.hubKubeconfig, err)
	}
	mc, err := process.Load(process.Source{Kubeconfig: f.kubeconfig, Context: f.context, ServiceAccountDir: f.serviceAccountDir, Getenv: getenv})
	if err != nil {
		return nil, "", fmt.Errorf("the member: %w", err)
	}
	client := kube.Options{QPS: float32(f.qps), Burst: f.burst, UserAgent: programName + "/" + ver}
	hub, err := kube.New(hubCfg, client)
	if err != nil {
		return nil, "", fmt.Errorf("the host: %w", err)
	}
	member, err := kube.New(mc.Rest, client)
	if err != nil {
		return nil, "", fmt.Errorf("the member: %w", err)
	}
	a, err := agent.New(hub, member, agent.Options{
		Cluster: f.cluster, Identity: f.identity, Period: f.period, LeaseDuration: f.leaseDuration,
		Logger: log.WithName("agent"),
	})
	if err != nil {
		return nil, "", err
	}
	return a, mc.Source, nil
}

// serveProbes serves /healthz (200 while the process serves) on addr unless it is "0" or
// empty, and returns the function that stops it. It fails at once when addr cannot be
// listened on.
func serveProbes(addr string, log logr.Logger) (stop func(), err error) {
	if addr == "0" || addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health probes: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, "ok") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "Serving health probes failed")
		}
	}()
	log.Info("Serving health probes", "address", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
