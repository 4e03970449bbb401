package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fedkit/fedkit/federation"
)

// Op is what an Event does.
type Op string

// The script's operations.
const (
	OpAddCluster     Op = "add-cluster"     // Cluster (a new member), Value: its label index
	OpRemoveCluster  Op = "remove-cluster"  // Cluster: its Cluster object is deleted
	OpPartition      Op = "partition"       // Cluster
	OpHeal           Op = "heal"            // Cluster
	OpCreate         Op = "create"          // Kind, Key, Value, Placement, Total (>0: with an RSP), Failover
	OpTaint          Op = "taint"           // Cluster, Value: 1 puts the drain taint on spec.taints, 0 removes it
	OpEditTemplate   Op = "edit-template"   // Kind, Key, Value
	OpEditOverride   Op = "edit-override"   // Kind, Key, Cluster, Value (0 removes it)
	OpEditPlacement  Op = "edit-placement"  // Kind, Key, Placement
	OpEditPreference Op = "edit-preference" // Key, Total (0 deletes the RSP), Cluster (the heavy one)
	OpDelete         Op = "delete"          // Kind, Key, Orphan
	OpDrift          Op = "drift"           // Kind, Key, Cluster, Value: someone edits an owned field
	OpDriftDelete    Op = "drift-delete"    // Kind, Key, Cluster: someone deletes the member object
	OpForeignWrite   Op = "foreign-write"   // Kind, Key, Cluster, Value: another controller annotates
	OpConflicts      Op = "conflicts"       // Cluster ("" = the host), Value: the next updates conflict
	OpLatency        Op = "latency"         // Cluster, Duration (0 ends it)
	OpClockJump      Op = "clock-jump"      // Duration

	// Features beyond Federated<Kind> objects (see Features).
	OpPolicy        Op = "policy"         // Kind (PropagationPolicy or ClusterPropagationPolicy), Key, Value, Placement, Total, Target, Cluster: created or replaced
	OpPolicyInvalid Op = "policy-invalid" // Kind, Key, Value: made invalid in a way the API server accepts
	OpPolicyDelete  Op = "policy-delete"  // Kind, Key
	OpNative        Op = "native"         // Kind (a native kind), Key, Value, Deps, Target (the team): created or replaced on the host
	OpNativeDelete  Op = "native-delete"  // Kind, Key
	OpIsolate       Op = "isolate"        // the control plane cut off from every member (each healed later by OpHeal)
	OpSlow          Op = "slow"           // Cluster, Duration: how long its rolling updates take from now on
	OpLookalike     Op = "lookalike"      // Kind (a target kind), Key, Cluster: someone makes an object of that name there
	OpKubeFed       Op = "kubefed"        // Kind, Key, Value, Placement: KubeFed's member objects of a Federated<Kind> it ran
	OpMigrate       Op = "migrate"        // Kind, Key, Value, Placement: `kubectl fed migrate` output applied
)

// Event is one step of the script. Which fields matter depends on Op (see the constants).
type Event struct {
	Op        Op
	Kind      string // federated kind
	Key       federation.Key
	Cluster   string
	Value     int64
	Total     int64
	Orphan    bool
	Placement Placement
	Duration  time.Duration
	// Failover is spec.placement.failover of a created FederatedDeployment (nil: none).
	Failover *federation.Failover
	// Deps is the dependency set a workload refers to (0: none): see depNames.
	Deps int64
	// Rollout gives a created FederatedDeployment a staged rollout with automated rollback.
	Rollout bool
	// Target names a native object: the name a policy selects, a native Deployment's team.
	Target string
}

func (e Event) String() string {
	var b strings.Builder
	b.WriteString(string(e.Op))
	if e.Kind != "" {
		fmt.Fprintf(&b, " %s %s", e.Kind, e.Key)
	}
	if e.Cluster != "" {
		fmt.Fprintf(&b, " cluster=%s", e.Cluster)
	}
	switch e.Op {
	case OpCreate, OpPolicy, OpNative, OpKubeFed, OpMigrate:
		fmt.Fprintf(&b, " value=%d %s", e.Value, e.Placement)
		if e.Total > 0 {
			fmt.Fprintf(&b, " total=%d", e.Total)
		}
		if e.Deps > 0 {
			fmt.Fprintf(&b, " deps=%d", e.Deps)
		}
		if e.Rollout {
			b.WriteString(" rollout")
		}
		if e.Target != "" {
			fmt.Fprintf(&b, " target=%s", e.Target)
		}
		if f := e.Failover; f != nil {
			fmt.Fprintf(&b, " purge=%s", f.PurgeMode)
			if f.GracePeriodSeconds != nil {
				fmt.Fprintf(&b, " grace=%ds", *f.GracePeriodSeconds)
			}
			if f.Application != nil {
				b.WriteString(" app-failover")
			}
		}
	case OpEditPlacement:
		fmt.Fprintf(&b, " %s", e.Placement)
	case OpEditPreference:
		fmt.Fprintf(&b, " %s total=%d", e.Key, e.Total)
	case OpDelete:
		fmt.Fprintf(&b, " orphan=%t", e.Orphan)
	case OpLatency, OpClockJump, OpSlow:
		fmt.Fprintf(&b, " %s", e.Duration)
	case OpRemoveCluster, OpPartition, OpHeal, OpDriftDelete, OpIsolate, OpPolicyDelete, OpNativeDelete, OpLookalike:
	default:
		fmt.Fprintf(&b, " value=%d", e.Value)
	}
	return b.String()
}

// Script is a soak's events: the initial fleet and objects, then the steps.
type Script struct {
	Initial []Event
	Steps   [][]Event
}

// NewScript generates the script of cfg. It depends on cfg only (seed and sizes), never on
// what the control plane does, so a seed always gives the same script.
func NewScript(cfg Config) (Script, error) {
	if err := cfg.complete(); err != nil {
		return Script{}, err
	}
	g := &generator{r: rand.New(rand.NewPCG(cfg.Seed, 0x50a4)), cfg: cfg, on: cfg.Without.on(), live: map[string][]federation.Key{},
		partitioned: map[string]bool{}, tainted: map[string]bool{}, index: map[string]int64{}, deps: map[federation.Key]int64{},
		policies: map[string]Event{}}
	var s Script
	for range cfg.Clusters {
		s.Initial = append(s.Initial, g.addCluster())
	}
	s.Initial = append(s.Initial, Event{Op: OpCreate, Kind: federation.NamespaceType.Federated.Kind,
		Key: federation.Key{Namespace: governedNamespace, Name: governedNamespace}, Value: 1, Placement: Placement{Selector: map[string]string{}}})
	s.Initial = append(s.Initial, g.dependencies()...)
	for range cfg.Objects {
		s.Initial = append(s.Initial, g.create())
	}
	s.Initial = append(s.Initial, g.policiesAndNatives()...)
	s.Initial = append(s.Initial, g.kubeFed()...)
	episodes := g.episodes()
	kg := newKindsGen(cfg, g)
	for i := range cfg.Steps {
		step := make([]Event, 0, cfg.EventsPerStep+2)
		step = append(step, g.episode(episodes, i)...)
		for range cfg.EventsPerStep {
			if e, ok := g.next(); ok {
				step = append(step, e)
			}
		}
		step = append(step, kg.step(i)...)
		s.Steps = append(s.Steps, step)
	}
	return s, nil
}

// generator is the script's own model of what the user did: which clusters and objects exist
// as far as the user knows.
type generator struct {
	r           *rand.Rand
	cfg         Config
	on          Features // the features the script uses
	clusters    []string // live, in order of joining
	added       int
	index       map[string]int64 // each cluster's label index, for a rejoin under its name
	unjoined    []string         // clusters removed, which may join again
	partitioned map[string]bool
	tainted     map[string]bool             // clusters with the drain taint
	live        map[string][]federation.Key // per kind
	gone        []Event                     // deleted objects, whose names may come back
	seq         int
	// deps is the dependency set of each FederatedDeployment that propagates its dependencies.
	deps map[federation.Key]int64
	// policies are the live policies, by kind/namespace/name; natives the live native
	// Deployments of the policies.
	policies map[string]Event
	natives  []Event
	// isolated: the control plane is cut off from every member (an episode), until healed.
	isolated  bool
	migrating []Event // KubeFed's objects, migrated in an episode
	broken    *Event  // the policy the episode made invalid, to mend
	drained   string  // the cluster the drain episode drained
	deleted   *Event  // the policy the episode deleted, to make again
}

// on returns the features the script uses: all but those f leaves out.
func (f Features) on() Features {
	return Features{Policies: !f.Policies, Dependencies: !f.Dependencies, AppFailover: !f.AppFailover, Outage: !f.Outage,
		Rejoin: !f.Rejoin, Migration: !f.Migration, Rollouts: !f.Rollouts, Lookalikes: !f.Lookalikes, Kinds: !f.Kinds}
}

func (g *generator) addCluster() Event {
	name := fmt.Sprintf("c-%02d", g.added)
	e := Event{Op: OpAddCluster, Cluster: name, Value: int64(g.added)}
	g.index[name] = int64(g.added)
	g.added++
	g.clusters = append(g.clusters, name)
	return e
}

// kindMix spreads objects over the kinds: 40% Deployments, 25% Services, 25% ConfigMaps, 10%
// Namespaces.
func (g *generator) kind() string {
	switch n := g.r.IntN(20); {
	case n < 8:
		return federation.DeploymentType.Federated.Kind
	case n < 13:
		return federation.ServiceType.Federated.Kind
	case n < 18:
		return federation.ConfigMapType.Federated.Kind
	}
	return federation.NamespaceType.Federated.Kind
}

func (g *generator) placement() Placement {
	switch g.r.IntN(5) {
	case 0:
		return Placement{Selector: map[string]string{}}
	case 1:
		return Placement{Selector: map[string]string{tierLabel: []string{"gold", "silver"}[g.r.IntN(2)]}}
	case 2:
		return Placement{Selector: map[string]string{federation.RegionLabel: clusterLabels(g.r.IntN(3))[federation.RegionLabel]}}
	}
	n := 1 + g.r.IntN(min(5, len(g.clusters)))
	picked := slices.Clone(g.clusters)
	g.r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	picked = picked[:n]
	slices.Sort(picked)
	return Placement{Clusters: picked}
}

func (g *generator) cluster() string { return g.clusters[g.r.IntN(len(g.clusters))] }

// create makes a new object, or brings a deleted name back (one time in four).
func (g *generator) create() Event {
	var e Event
	if len(g.gone) > 0 && g.r.IntN(4) == 0 {
		i := g.r.IntN(len(g.gone))
		e = Event{Op: OpCreate, Kind: g.gone[i].Kind, Key: g.gone[i].Key}
		g.gone = slices.Delete(g.gone, i, i+1)
	} else {
		e = Event{Op: OpCreate, Kind: g.kind()}
		g.seq++
		switch e.Kind {
		case federation.NamespaceType.Federated.Kind:
			name := fmt.Sprintf("leaf-%04d", g.seq)
			e.Key = federation.Key{Namespace: name, Name: name}
		default:
			ns := plainNamespaces(g.cfg.Objects)
			namespace := ns[g.seq%len(ns)]
			if g.seq%7 == 0 {
				namespace = governedNamespace
			}
			prefix := map[string]string{"FederatedDeployment": "dep", "FederatedService": "svc", "FederatedConfigMap": "cm"}[e.Kind]
			e.Key = federation.Key{Namespace: namespace, Name: fmt.Sprintf("%s-%04d", prefix, g.seq)}
		}
	}
	e.Value = int64(g.r.IntN(1000))
	e.Placement = g.placement()
	if e.Kind == federation.DeploymentType.Federated.Kind {
		g.workload(&e)
	}
	g.live[e.Kind] = append(g.live[e.Kind], e.Key)
	return e
}

// workload chooses what a created FederatedDeployment has: a preference (half of them),
// failover settings (half), dependencies (a third of those in plain namespaces), a staged
// rollout (a fifth).
func (g *generator) workload(e *Event) {
	if g.r.IntN(2) == 0 {
		e.Total = 2 + int64(g.r.IntN(11))
	}
	if g.r.IntN(2) == 0 {
		e.Failover = g.failover()
	}
	delete(g.deps, e.Key)
	if g.on.Dependencies && e.Key.Namespace != governedNamespace && g.r.IntN(3) == 0 {
		e.Deps = 1 + int64(g.r.IntN(int(depSets(g.cfg.Objects))))
		g.deps[e.Key] = e.Deps
	}
	if g.on.Rollouts && g.r.IntN(5) == 0 {
		e.Rollout = true
	}
}

// failover is a FederatedDeployment's spec.placement.failover: a purge mode (the default, named
// or not, half the time) and, mostly, a grace period of 20s to 3m (the replacements take 20s to
// 30s to be available, so a short one may end before them); a third of them fail over when
// the workload itself is unhealthy.
func (g *generator) failover() *federation.Failover {
	f := &federation.Failover{}
	switch g.r.IntN(6) {
	case 0:
		f.PurgeMode = federation.PurgeGraciously
	case 1, 2:
		f.PurgeMode = federation.PurgeImmediately
	case 3, 4:
		f.PurgeMode = federation.PurgeNever
	}
	if g.r.IntN(4) > 0 {
		s := int32(20 + 10*g.r.IntN(17))
		f.GracePeriodSeconds = &s
	}
	if g.on.AppFailover && g.r.IntN(3) == 0 {
		// A new copy takes defaultReadyAfter (20s) to be available, and the collector and
		// then the scheduler see it a round (10s) each later: a tolerance of 40s or less
		// fails over every copy it starts, a fresh try after each back-off, for ever.
		tolerance, backoff := int32(60+30*g.r.IntN(4)), int32(120+60*g.r.IntN(4))
		f.Application = &federation.ApplicationFailover{ToleranceSeconds: &tolerance, BackoffSeconds: &backoff}
	}
	return f
}

// taint drains a cluster with the NoExecute drain taint, or ends a drain (Value 0). At most a
// quarter of the clusters (at least one) are drained at a time.
func (g *generator) taint() (Event, bool) {
	if names := sortedKeys(g.tainted); len(names) > 0 && (g.r.IntN(2) == 0 || len(names) >= max(1, len(g.clusters)/4)) {
		c := names[g.r.IntN(len(names))]
		delete(g.tainted, c)
		return Event{Op: OpTaint, Cluster: c, Value: 0}, true
	}
	c := g.cluster()
	if g.tainted[c] {
		return Event{}, false
	}
	g.tainted[c] = true
	return Event{Op: OpTaint, Cluster: c, Value: 1}, true
}

// object picks a live object (ok false when there is none).
func (g *generator) object() (string, federation.Key, bool) {
	var present []string
	for _, t := range kinds() {
		if len(g.live[t.Federated.Kind]) > 0 {
			present = append(present, t.Federated.Kind)
		}
	}
	if len(present) == 0 {
		return "", federation.Key{}, false
	}
	k := present[g.r.IntN(len(present))]
	keys := g.live[k]
	return k, keys[g.r.IntN(len(keys))], true
}

// next generates one event of a step.
func (g *generator) next() (Event, bool) {
	roll := g.r.IntN(100)
	switch {
	case roll < 4 && len(g.partitioned) < len(g.clusters)/4 && !g.isolated:
		c := g.cluster()
		if g.partitioned[c] {
			return Event{}, false
		}
		g.partitioned[c] = true
		return Event{Op: OpPartition, Cluster: c}, true
	case roll < 9 && len(g.partitioned) > 0 && !g.isolated:
		names := sortedKeys(g.partitioned)
		c := names[g.r.IntN(len(names))]
		delete(g.partitioned, c)
		return Event{Op: OpHeal, Cluster: c}, true
	case roll < 10 && g.isolated:
		return Event{}, false
	case roll < 10 && g.on.Rejoin && len(g.unjoined) > 0 && g.r.IntN(2) == 0:
		return g.rejoin(), true
	case roll < 10 && g.added < g.cfg.Clusters+g.cfg.Clusters/2:
		return g.addCluster(), true
	case roll < 11 && len(g.clusters) > max(3, g.cfg.Clusters*2/3) && !g.isolated:
		return g.unjoin(g.r.IntN(len(g.clusters))), true
	case roll < 13:
		c := ""
		if g.r.IntN(3) > 0 {
			c = g.cluster()
		}
		return Event{Op: OpConflicts, Cluster: c, Value: 1 + int64(g.r.IntN(5))}, true
	case roll < 15 && g.isolated:
		return Event{}, false
	case roll < 15:
		d := time.Duration(0)
		if g.r.IntN(2) == 0 {
			d = time.Duration(1+g.r.IntN(20)) * 50 * time.Millisecond
		}
		return Event{Op: OpLatency, Cluster: g.cluster(), Duration: d}, true
	case roll < 17 && g.isolated:
		return Event{}, false
	case roll < 17:
		return Event{Op: OpClockJump, Duration: time.Duration(1+g.r.IntN(15)) * time.Minute}, true
	case roll < 20 && g.isolated:
		return Event{}, false
	case roll < 20:
		return g.taint()
	case roll < 28:
		return g.create(), true
	case roll < 36:
		return g.feature()
	}
	return g.edit()
}

// edit edits, deletes or drifts a live object.
func (g *generator) edit() (Event, bool) {
	kind, key, ok := g.object()
	if !ok {
		return Event{}, false
	}
	e := Event{Kind: kind, Key: key, Value: 1 + int64(g.r.IntN(1000)), Deps: g.deps[key]}
	switch roll := g.r.IntN(100); {
	case roll < 22:
		e.Op = OpEditTemplate
	case roll < 34:
		e.Op, e.Cluster = OpEditOverride, g.cluster()
		if g.r.IntN(3) == 0 {
			e.Value = 0
		}
	case roll < 46:
		e.Op, e.Placement = OpEditPlacement, g.placement()
		if kind == federation.SecretType.Federated.Kind {
			e.Placement.Exclude = []string{g.cluster()}
		}
	case roll < 54 && kind == federation.DeploymentType.Federated.Kind:
		e.Op, e.Kind, e.Cluster = OpEditPreference, "", g.cluster()
		if g.r.IntN(4) > 0 {
			e.Total = 1 + int64(g.r.IntN(14))
		}
	case roll < 64:
		e.Op, e.Orphan = OpDelete, g.r.IntN(3) == 0
		g.live[kind] = slices.DeleteFunc(g.live[kind], func(k federation.Key) bool { return k == key })
		g.gone = append(g.gone, Event{Kind: kind, Key: key})
		delete(g.deps, key)
		e.Value, e.Deps = 0, 0
	case roll < 78:
		e.Op, e.Cluster = OpDrift, g.cluster()
	case roll < 84:
		e.Op, e.Cluster, e.Value = OpDriftDelete, g.cluster(), 0
	default:
		e.Op, e.Cluster = OpForeignWrite, g.cluster()
	}
	return e, true
}

// unjoin removes the i-th live cluster from the federation.
func (g *generator) unjoin(i int) Event {
	c := g.clusters[i]
	g.clusters = slices.Delete(g.clusters, i, i+1)
	delete(g.partitioned, c) // the harness heals it at the end; nothing targets it any more
	delete(g.tainted, c)
	if g.on.Rejoin {
		g.unjoined = append(g.unjoined, c)
	}
	return Event{Op: OpRemoveCluster, Cluster: c}
}

// rejoin joins a removed cluster again, under its name and with its labels.
func (g *generator) rejoin() Event {
	i := g.r.IntN(len(g.unjoined))
	c := g.unjoined[i]
	g.unjoined = slices.Delete(g.unjoined, i, i+1)
	g.clusters = append(g.clusters, c)
	return Event{Op: OpAddCluster, Cluster: c, Value: g.index[c]}
}
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
