package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/cmd/internal/process/processtest"
	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// summary is what a test compares of the Options the flags give.
type summary struct {
	Types              []string
	Disable            controlplane.Parts
	Identity           string
	Version            string
	Shard              federation.Shard
	LeaderElection     *controlplane.Lease
	Sharding           *controlplane.Sharding
	Leases             []string
	Workers            [7]int // scheduler, sync, status, monitor, dns, dependencies, propagation
	Periods            [4]time.Duration
	CacheSync          time.Duration
	Retry, Events      time.Duration
	ClusterQPS         float64
	Disruption         placement.DisruptionOptions
	CredentialsWarning time.Duration
}

func summarize(o controlplane.Options) summary {
	s := summary{
		Disable: o.Disable, Identity: o.Identity, Version: o.Version, Shard: o.Shard,
		LeaderElection: o.LeaderElection, Sharding: o.Sharding, Leases: leaseNames(o),
		Workers: [7]int{o.Scheduler.Workers, o.Sync.Workers, o.Status.Workers, o.Monitor.Workers, o.DNS.Workers,
			o.Dependencies.Workers, o.Propagation.Workers},
		Periods:            [4]time.Duration{o.Sync.ResyncPeriod, o.Status.Period, o.Monitor.Period, o.DNS.ResyncPeriod},
		CacheSync:          o.Sync.CacheSyncTimeout,
		Retry:              o.RetryPeriod,
		Events:             o.EventWindow,
		ClusterQPS:         o.Sync.ClusterQPS,
		Disruption:         o.Disruption,
		CredentialsWarning: o.Monitor.CredentialsWarning,
	}
	for _, t := range o.Types {
		s.Types = append(s.Types, t.Federated.Kind)
	}
	for _, d := range []time.Duration{o.Scheduler.CacheSyncTimeout, o.Status.CacheSyncTimeout, o.Monitor.CacheSyncTimeout,
		o.DNS.CacheSyncTimeout, o.Dependencies.CacheSyncTimeout, o.Propagation.CacheSyncTimeout} {
		if d != s.CacheSync {
			s.CacheSync = -1 // the loops disagree: --cache-sync-timeout reached some only
		}
	}
	return s
}

// optionsOf parses args and returns the Options, for a process in namespace podNamespace.
func optionsOf(args []string, podNamespace string) (controlplane.Options, error) {
	var f flags
	fs := newFlagSet(&f)
	fs.SetOutput(&bytes.Buffer{})
	if err := parseFlags(fs, &f, args); err != nil {
		return controlplane.Options{}, err
	}
	return f.options(podNamespace, "v1.2.3")
}

// The defaults are the library's; each flag reaches its field of controlplane.Options.
func TestOptions(t *testing.T) {
	lease := func(ns, name string) *controlplane.Lease {
		return &controlplane.Lease{Namespace: ns, Name: name, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
			RetryPeriod: 2 * time.Second, ReleaseOnCancel: true}
	}
	defaults := summary{
		Identity: "fedkit", Version: "v1.2.3",
		LeaderElection: lease("fedkit-system", "fedkit-controlplane"), Leases: []string{"fedkit-controlplane"},
		Workers:   [7]int{8, 16, 8, 4, 2, 2, 1},
		Periods:   [4]time.Duration{10 * time.Minute, 30 * time.Second, 10 * time.Second, 30 * time.Second},
		CacheSync: 2 * time.Minute, Retry: time.Minute, Events: 10 * time.Second,
		Disruption:         placement.DisruptionOptions{Threshold: placement.DefaultDisruptionThreshold, Window: placement.DefaultDisruptionWindow},
		CredentialsWarning: 7 * 24 * time.Hour,
	}
	with := func(edit func(*summary)) summary {
		s := defaults
		s.LeaderElection = lease("fedkit-system", "fedkit-controlplane")
		edit(&s)
		return s
	}
	for _, tc := range []struct {
		name         string
		args         []string
		podNamespace string
		want         summary
	}{
		{"defaults", nil, "fedkit-system", defaults},
		{"the Lease in the pod's namespace", nil, "platform", with(func(s *summary) { s.LeaderElection.Namespace = "platform" })},
		{"no leader election", []string{"--leader-elect=false"}, "fedkit-system", with(func(s *summary) { s.LeaderElection, s.Leases = nil, nil })},
		{"lease settings", []string{"--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=4s",
			"--leader-elect-resource-namespace=ops", "--leader-elect-resource-name=fed"}, "fedkit-system", with(func(s *summary) {
			s.LeaderElection = &controlplane.Lease{Namespace: "ops", Name: "fed", LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second,
				RetryPeriod: 4 * time.Second, ReleaseOnCancel: true}
			s.Leases = []string{"fed"}
		})},
		{"sharding replaces leader election", []string{"--shards=4", "--identity=blue"}, "fedkit-system", with(func(s *summary) {
			s.Identity, s.LeaderElection = "blue", nil
			s.Sharding = &controlplane.Sharding{Count: 4, Lease: *lease("fedkit-system", "blue-shard")}
			s.Leases = []string{"blue-shard-0", "blue-shard-1", "blue-shard-2", "blue-shard-3"}
		})},
		{"a static shard elects its own leader", []string{"--shard=1/3"}, "fedkit-system", with(func(s *summary) {
			s.Shard = federation.Shard{Index: 1, Count: 3}
			s.Leases = []string{"fedkit-controlplane-1"}
		})},
		{"a static shard alone", []string{"--shard=0/2", "--leader-elect=false"}, "fedkit-system", with(func(s *summary) {
			s.Shard, s.LeaderElection, s.Leases = federation.Shard{Index: 0, Count: 2}, nil, nil
		})},
		{"loops off", []string{"--controllers=*,-dns,-events"}, "fedkit-system", with(func(s *summary) { s.Disable = controlplane.Parts{DNS: true, Events: true} })},
		{"no autoscaler", []string{"--controllers=*,-autoscale"}, "fedkit-system", with(func(s *summary) { s.Disable = controlplane.Parts{Autoscale: true} })},
		{"only the loops named", []string{"--controllers=sync,status"}, "fedkit-system", with(func(s *summary) {
			s.Disable = controlplane.Parts{Monitor: true, Scheduler: true, Propagation: true, Dependencies: true, DNS: true, Autoscale: true, Events: true}
		})},
		{"types by either kind", []string{"--types=Deployment, FederatedConfigMap"}, "fedkit-system", with(func(s *summary) {
			s.Types = []string{"FederatedDeployment", "FederatedConfigMap"}
		})},
		{"workers and periods", []string{"--scheduler-workers=1", "--sync-workers=2", "--status-workers=3", "--cluster-monitor-workers=4",
			"--dns-workers=5", "--dependencies-workers=6", "--propagation-workers=7", "--sync-resync-period=1m", "--status-period=2m",
			"--cluster-monitor-period=3m", "--dns-resync-period=4m", "--cache-sync-timeout=5m", "--loop-retry-period=6m",
			"--event-window=-1s", "--sync-cluster-qps=50"}, "fedkit-system", with(func(s *summary) {
			s.Workers = [7]int{1, 2, 3, 4, 5, 6, 7}
			s.Periods = [4]time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute}
			s.CacheSync, s.Retry, s.Events, s.ClusterQPS = 5*time.Minute, 6*time.Minute, -time.Second, 50
		})},
		{"failover", []string{"--fleet-disruption-threshold=0.8", "--fleet-disruption-window=2m", "--credentials-warning=48h"}, "fedkit-system", with(func(s *summary) {
			s.Disruption = placement.DisruptionOptions{Threshold: 0.8, Window: 2 * time.Minute}
			s.CredentialsWarning = 48 * time.Hour
		})},
		{"no fleet disruption rule", []string{"--fleet-disruption=false"}, "fedkit-system", with(func(s *summary) { s.Disruption.Disabled = true })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := optionsOf(tc.args, tc.podNamespace)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summarize(o)); diff != "" {
				t.Errorf("options(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// Flags that cannot work are refused before anything runs, naming the flag.
func TestOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two ways to share", []string{"--shards=2", "--leader-elect"}, "--shards and --leader-elect"},
		{"static and claimed shards", []string{"--shards=2", "--shard=0/2"}, "--shards and --shard"},
		{"negative shards", []string{"--shards=-1"}, "--shards must not be negative"},
		{"a shard out of range", []string{"--shard=3/3"}, `--shard "3/3"`},
		{"a shard that is no shard", []string{"--shard=first"}, "want INDEX/COUNT"},
		{"an unknown loop", []string{"--controllers=*,-dnz"}, `--controllers: unknown "-dnz"`},
		{"an unknown type", []string{"--types=Pod"}, `--types: "Pod" is not a built-in federated type`},
		{"an argument", []string{"extra"}, "unexpected arguments"},
		{"an unknown flag", []string{"--nope"}, "flag provided but not defined: -nope"},
		{"a disruption threshold out of range", []string{"--fleet-disruption-threshold=1.5"}, "Threshold must be between 0 and 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := optionsOf(tc.args, "fedkit-system")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("options(%q) = %v; want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// run refuses what the control plane would refuse, before it serves or runs anything: the
// error is controlplane.New's or the listener's.
func TestRunRefusesBeforeRunning(t *testing.T) {
	kubeconfig := processtest.Kubeconfig(t, "host")
	taken := processtest.Listen(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a Lease of a second and a half", []string{"--leader-elect-lease-duration=1500ms"}, "whole number of seconds"},
		{"a metrics address in use", []string{"--metrics-bind-address=" + taken, "--health-probe-bind-address=0"}, "metrics: listen tcp"},
		{"a log format", []string{"--log-format=xml"}, `--log-format "xml"`},
		{"no such context", []string{"--host-context=nope"}, `context "nope" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--kubeconfig=" + kubeconfig, "--host-context=host"}, tc.args...)
			err := run(context.Background(), args, system{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: noEnv})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q) = %v; want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// --version prints the version the linker set, and --help every flag with its default.
func TestVersionAndHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, system{stdout: &out, stderr: &out, getenv: noEnv, version: "v9.8.7"}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "fedkit-controller-manager v9.8.7\n"; got != want {
		t.Errorf("--version printed %q; want %q", got, want)
	}

	help := helpText(t)
	var f flags
	newFlagSet(&f).VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(help, "  -"+fl.Name+" ") && !strings.Contains(help, "  -"+fl.Name+"\n") {
			t.Errorf("--help does not list -%s", fl.Name)
		}
	})
}

// helpText is what --help prints.
func helpText(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, system{stdout: &out, stderr: &out, getenv: noEnv})
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help returned %v; want flag.ErrHelp", err)
	}
	return out.String()
}

func noEnv(string) string { return "" }
