package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/cmd/internal/process/processtest"
)

func noEnv(string) string { return "" }

// What the agent cannot start without, and what it refuses, each with an error naming the
// flag.
func TestRunRefuses(t *testing.T) {
	hub := processtest.Kubeconfig(t, "hub")
	member := processtest.Kubeconfig(t, "member")
	for _, tc := range []struct {
		name string
		args []string
		want string
		is   error
	}{
		{"no cluster", []string{"--hub-kubeconfig", hub}, "--cluster is required", nil},
		{"no hub", []string{"--cluster", "edge"}, "--hub-kubeconfig is required", nil},
		{"an argument", []string{"--cluster", "edge", "--hub-kubeconfig", hub, "extra"}, `unexpected arguments ["extra"]`, nil},
		{"a missing hub kubeconfig", []string{"--cluster", "edge", "--hub-kubeconfig", hub + "-absent", "--kubeconfig", member}, "--hub-kubeconfig " + hub + "-absent", nil},
		{"no member", []string{"--cluster", "edge", "--hub-kubeconfig", hub}, "the member: no configuration", nil},
		{"a lease no longer than the period", []string{"--cluster", "edge", "--hub-kubeconfig", hub, "--kubeconfig", member, "--period", "1m", "--lease-duration", "30s"},
			"LeaseDuration 30s must be longer than Period 1m0s", agent.ErrInvalidOptions},
		{"a cluster name that makes no namespace", []string{"--cluster", "Edge_1", "--hub-kubeconfig", hub, "--kubeconfig", member}, `Cluster "Edge_1"`, agent.ErrInvalidOptions},
		{"a log format", []string{"--cluster", "edge", "--hub-kubeconfig", hub, "--kubeconfig", member, "--log-format", "xml"}, `--log-format "xml"`, nil},
		{"a taken probe address", []string{"--cluster", "edge", "--hub-kubeconfig", hub, "--kubeconfig", member, "--health-probe-bind-address", processtest.Listen(t)}, "health probes:", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), tc.args, system{stdout: &out, stderr: &out, getenv: noEnv})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v; want an error containing %q", tc.args, err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("run(%q) = %v; want it to wrap %v", tc.args, err, tc.is)
			}
		})
	}
}

// --version prints the linked version; --help lists every flag.
func TestVersionAndHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, system{stdout: &out, stderr: &out, getenv: noEnv, version: "v9.8.7"}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "fedkit-agent v9.8.7\n"; got != want {
		t.Errorf("--version printed %q; want %q", got, want)
	}
	out.Reset()
	if err := run(context.Background(), []string{"--help"}, system{stdout: &out, stderr: &out, getenv: noEnv}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help = %v; want flag.ErrHelp", err)
	}
	var f flags
	newFlagSet(&f).VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(out.String(), "  -"+fl.Name+" ") && !strings.Contains(out.String(), "  -"+fl.Name+"\n") {
			t.Errorf("--help does not list -%s", fl.Name)
		}
	})
}

// With a reachable-looking configuration the agent starts and stops with its context: the
// host and the member are not answering (their servers are .invalid), which the agent logs
// and retries, never a crash.
func TestRunStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--cluster", "edge", "--hub-kubeconfig", processtest.Kubeconfig(t, "hub"), "--kubeconfig", processtest.Kubeconfig(t, "member"), "--health-probe-bind-address", "127.0.0.1:0"},
			system{stdout: &out, stderr: &out, getenv: noEnv})
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run = %v; want nil once its context is done", err)
	}
}
