package soak

import (
	"fmt"
	"time"
)

// Config sizes a soak. The zero value is the full soak of one seed (seed 0): 20 clusters, 500
// federated objects, 20% injected errors, deterministic mode.
type Config struct {
	// Seed makes the fleet, the objects, the script and the injected faults. The same seed
	// and sizes replay the same soak (exactly in deterministic mode).
	Seed uint64

	// Clusters is how many member clusters the fleet starts with. Default: 20.
	Clusters int

	// Objects is how many federated objects the host starts with, spread over the kinds
	// (FederatedDeployment, half of them with a ReplicaSchedulingPreference; FederatedService;
	// FederatedConfigMap; FederatedNamespace), with native Deployments for the policies and
	// the dependencies of the workloads that propagate theirs on top. Default: 500.
	Objects int

	// Without leaves features out of the script (the zero value: every feature). An embedder
	// whose control plane runs no propagation loop sets Without.Policies.
	Without Features

	// Shards is how many control planes share the host, each over the keys of its shard
	// (federation.Shard). Default: 2. 1: one control plane.
	Shards int

	// Invariants are the embedder's rules, checked with the soak's own (see [Invariant]).
	Invariants []Invariant

	// Skip leaves rules out: their violations are not reported. For a rule a known defect
	// breaks until its fix lands; every rule is on by default.
	Skip []Rule

	// Steps is how many steps the script has; each applies a few events, then lets the
	// control plane work (one round, or a clock step in Run mode). Default: 40.
	Steps int

	// EventsPerStep is how many events each step applies. Default: Objects/20, at least 4.
	EventsPerStep int

	// ErrorRate is the probability that an API call to a member or to the host fails with an
	// injected 503 while faults are on (per verb, per cluster, from seeded sources).
	// Default: 0.2. Negative: no injected errors.
	ErrorRate float64

	// Run selects Run mode: every loop's Run goroutine, the fake clock stepped until nothing
	// writes. Default: deterministic mode (Reconcile in a fixed order).
	Run bool
	// SampleRun checks failover after every step in Run mode too (see the package doc, What
	// is checked after every step). Off by default: a failure it finds does not replay
	// exactly, and earlier runs showed violations that are not explained.
	SampleRun bool

	// MaxRounds bounds the rounds (or clock steps, in Run mode) the control plane gets to
	// reach quiescence once faults are off. Default: 60.
	MaxRounds int

	// RoundStep is how far the fake clock moves between two rounds. Default: 10s (the cluster
	// monitor's probe period).
	RoundStep time.Duration

	// Logf, when set, receives progress lines (steps, rounds, writes).
	Logf func(format string, args ...any)

	// TraceWrites sends every write that reaches a cluster to Logf (with the diff of status
	// writes to the host).
	TraceWrites bool

	// Dump names a federated object ("namespace/name"), of any kind, whose YAML every check
	// adds to the violations: to see what a failing seed left behind.
	Dump string
	// Goroutines names a file that gets every goroutine's stack when the control plane is
	// still writing after MaxRounds (a loop that stopped, or one that never stops): what each
	// goroutine waits on. Empty: none.
	Goroutines string
}

// Defaults of Config.
const (
	DefaultClusters  = 20
	DefaultObjects   = 500
	DefaultSteps     = 40
	DefaultErrorRate = 0.2
	DefaultMaxRounds = 120
	DefaultRoundStep = 10 * time.Second
	DefaultShards    = 2
)

// Features are the parts of the script beyond Federated<Kind> objects, their edits and the
// fleet's faults. In [Config].Without, a true field leaves that part out.
type Features struct {
	// Policies: native Deployments on the host, and PropagationPolicies and
	// ClusterPropagationPolicies over them (created, edited, made invalid in ways the API
	// server accepts, deleted, competing by priority), one of them for every Deployment.
	Policies bool
	// Dependencies: workloads with spec.propagateDependencies referring to ConfigMaps,
	// Secrets (some federated by the user with their own placement and exclusions) and
	// PersistentVolumeClaims, with per-cluster overrides that change which ones.
	Dependencies bool
	// AppFailover: workloads with application failover, slow members whose rolling
	// updates take minutes, and images that never start.
	AppFailover bool
	// Outage: the control plane cut off from every member at once, healed one by one.
	Outage bool
	// Rejoin: members unjoined, then joined again under the same name.
	Rejoin bool
	// Migration: member objects KubeFed made, and the objects `kubectl fed migrate`
	// converts from KubeFed's, which take them over.
	Migration bool
	// Rollouts: staged rollouts with automated rollback.
	Rollouts bool
	// Lookalikes: objects no federation manages in the members, some of the federated
	// objects' names, in the namespaces the federation uses and in kube-system.
	Lookalikes bool
	// Kinds: a custom resource (widgets.example.com) enabled, reconfigured, disabled and
	// enabled again by a FederatedTypeConfig while the control plane runs, and FederatedWidgets
	// (deterministic mode only).
	Kinds bool
	// Autoscale: workloads whose preference has spec.autoscale, their pods' load flapping
	// from step to step, one member serving no metrics.
	Autoscale bool
}

func (c *Config) complete() error {
	if c.Clusters <= 0 {
		c.Clusters = DefaultClusters
	}
	if c.Objects <= 0 {
		c.Objects = DefaultObjects
	}
	if c.Steps <= 0 {
		c.Steps = DefaultSteps
	}
	if c.EventsPerStep <= 0 {
		c.EventsPerStep = max(c.Objects/20, 4)
	}
	switch {
	case c.ErrorRate == 0:
		c.ErrorRate = DefaultErrorRate
	case c.ErrorRate < 0:
		c.ErrorRate = 0
	case c.ErrorRate >= 1:
		return fmt.Errorf("soak: ErrorRate %v: want less than 1 (nothing would ever succeed)", c.ErrorRate)
	}
	if c.MaxRounds <= 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.RoundStep <= 0 {
		c.RoundStep = DefaultRoundStep
	}
	if c.Shards <= 0 {
		c.Shards = DefaultShards
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Clusters < 3 {
		return fmt.Errorf("soak: %d clusters: want at least 3 (partitions need a majority left)", c.Clusters)
	}
	return nil
}

// Replay is the command that runs this soak again.
func (c Config) Replay() string {
	mode := ""
	if c.Run {
		mode = " -run-mode"
	}
	if c.Shards > 0 && c.Shards != DefaultShards {
		mode += fmt.Sprintf(" -shards=%d", c.Shards)
	}
	return fmt.Sprintf("go test ./test/soak -run 'TestSoak$' -seed=%d -clusters=%d -objects=%d -steps=%d%s",
		c.Seed, c.Clusters, c.Objects, c.Steps, mode)
}
