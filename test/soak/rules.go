package soak

import (
	"fmt"
	"slices"
	"strings"
)

// Rule names an invariant of the soak. Every [Violation] carries the rule it breaks; the
// package documentation says each rule in a sentence.
type Rule string

// The soak's own rules. Those marked "every step" are checked after every step of the script
// and every round of the first settling; the others at quiescence.
const (
	// RuleForeignUntouched (every step): no member object without this federation's
	// identity is modified, deleted or taken over, whoever's call it is.
	RuleForeignUntouched Rule = "foreign-untouched"
	// RuleSystemNamespaces (every step): nothing in kube-system, kube-public or
	// kube-node-lease is federated from the host.
	RuleSystemNamespaces Rule = "system-namespaces"
	// RuleClaimKept (every step): a member PersistentVolumeClaim the federation put there
	// (managed, or released when its workload left) leaves only when the user deletes it (or
	// its federated object, drops the cluster from its own placement, or asks for deletion
	// with federation.ClaimRemovalAnnotation), or its cluster leaves the federation; never
	// because a workload moved.
	RuleClaimKept Rule = "claim-kept"
	// RuleSecretExcluded (every step): no Secret reaches a cluster its own placement
	// excludes.
	RuleSecretExcluded Rule = "secret-excluded"
	// RuleSecretReferenced (every step): a Secret reaches a cluster only where its own
	// placement puts it or a workload that refers to it there, after overrides, is placed.
	RuleSecretReferenced Rule = "secret-referenced"
	// RuleCapacityFloor (every step): while a cluster's replicas leave it gracefully (a
	// drain, an application failover), the workload's available replicas never fall below
	// what they were before.
	RuleCapacityFloor Rule = "capacity-floor"
	// RuleDrainedCopyKept (every step): a drained cluster's copy is not deleted before the
	// clusters that take its replicas report them available.
	RuleDrainedCopyKept Rule = "drained-copy-kept"
	// RulePurgeNever (every step): with purge mode Never a drained cluster's copy is
	// released, never deleted, and stays released.
	RulePurgeNever Rule = "purge-never"
	// RuleOutageMovesNothing (every step): while the control plane is cut off from every
	// member, and while they come back one by one, nothing moves in a cluster it counts
	// lost: no replicas come, and where a copy ran none go and no eviction begins.
	RuleOutageMovesNothing Rule = "outage-moves-nothing"
	// RuleBlockedTakesNothing (every step): a cluster where a divided workload is blocked
	// (its status says sync cannot write it there: federation.PropagationBlocked) is given no
	// more replicas than it had.
	RuleBlockedTakesNothing Rule = "blocked-takes-nothing"
	// RuleAdoptedInPlace (every step): a member object KubeFed made is taken over by its
	// migrated object in place: never deleted and made again.
	RuleAdoptedInPlace Rule = "adopted-in-place"
	// RuleNoThrash (every step): an autoscaled workload's fleet total changes direction at
	// most once per stabilization window, however its load flaps.
	RuleNoThrash Rule = "no-thrash"
	// RuleNeverZero (every step): an autoscaled workload's fleet total never falls below its
	// minReplicas (a metric that cannot be computed, a stale minority never make it 0), and
	// without a quorum of fresh members it holds.
	RuleNeverZero Rule = "never-zero"

	// RulePlacedRuns: every reachable placed cluster runs exactly the rendered object.
	RulePlacedRuns Rule = "placed-runs-render"
	// RulePlacedOnly: nothing the federation manages runs where it is not placed, unless a
	// MembersLeftBehind event announced it.
	RulePlacedOnly Rule = "placed-only"
	// RuleScheduleFollowsPlacement: the schedule names only clusters the placement selects
	// and divides a preference's total, with no eviction left over.
	RuleScheduleFollowsPlacement Rule = "schedule-follows-placement"
	// RuleStatusMatches: status.clusters, the conditions, syncedRevision and
	// status.aggregated agree with the members.
	RuleStatusMatches Rule = "status-matches"
	// RuleDeletionCompleted: every deletion completed: no object, member object or Cluster is
	// left half-deleted.
	RuleDeletionCompleted Rule = "deletion-completed"
	// RuleOrphaned: member objects orphaned (a deletion with the orphan annotation, a
	// cluster that left) remain, without fedkit's labels and annotations.
	RuleOrphaned Rule = "orphaned"
	// RuleForeignAnnotations: other controllers' annotations on member objects survive sync,
	// and cause no federation write.
	RuleForeignAnnotations Rule = "foreign-annotations"
	// RuleGeneratedMatches: every native object a valid policy selects has the generated
	// object propagation.Generate renders from it and the winning policy (its last valid
	// version), and no other native object has one.
	RuleGeneratedMatches Rule = "generated-matches-native"
	// RuleUnselectedKept: the member copies of a native object no policy selects any more
	// (the policy deleted, edited away, made invalid) keep running, no longer managed.
	RuleUnselectedKept Rule = "unselected-kept"
	// RuleDependencies: at quiescence every dependency is where its workloads are: a
	// referenced ConfigMap, Secret or claim runs in each cluster a workload referring to it
	// there is placed in, unless its own placement excludes the cluster.
	RuleDependencies Rule = "dependencies-follow"
	// RuleQuietHour: an hour after quiescence brings no write but the monitor's heartbeats.
	RuleQuietHour Rule = "quiet-hour"
	// RuleSettles: with faults off, the control plane stops writing within Config.MaxRounds.
	RuleSettles Rule = "settles"
	// RuleLoopsHealthy: every Reconcile returns, with no terminal error on valid input, and
	// the control plane stops when asked.
	RuleLoopsHealthy Rule = "loops-healthy"
	// RuleDump is not a rule: Config.Dump's YAML of an object, reported as a violation.
	RuleDump Rule = "dump"
)

// Violation is one broken invariant: the seed, where in the soak, the rule, the object.
type Violation struct {
	// Seed is the soak's seed.
	Seed uint64
	// Phase is the part of the soak: "the chaos" (the script), "after the chaos" (the first
	// settling), "cluster c-00 cut off", "healed", "an hour later".
	Phase string
	// Step is the step of the script (or the round of a settling) in Phase, -1 when the
	// violation belongs to the phase as a whole.
	Step int
	// Rule is the invariant broken.
	Rule Rule
	// Object names what broke it ("FederatedDeployment soak-0/dep-0003", "cluster c-01: ...").
	Object string
	// Message says what is wrong.
	Message string
	// Replay is the command that runs the seed again.
	Replay string
}

// String is the violation in one line, then the replay command.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %s", v.Seed, v.Phase)
	if v.Step >= 0 {
		fmt.Fprintf(&b, ", step %d", v.Step)
	}
	fmt.Fprintf(&b, ": [%s] %s: %s", v.Rule, v.Object, v.Message)
	if v.Replay != "" {
		fmt.Fprintf(&b, "\n  replay: %s", v.Replay)
	}
	return b.String()
}

// Invariant is an embedder's rule, checked with the soak's own (Config.Invariants): a
// function over the World's state returning what breaks it. Check reads the fakes without
// API calls (fake.Cluster.Objects and Peek) and sets Object and Message of each Violation;
// the harness fills in the seed, the phase, the step, the rule and the replay command.
type Invariant struct {
	// Rule names the invariant in its violations.
	Rule Rule
	// Quiescent checks it only at quiescence (faults off, the control plane settled).
	// Otherwise it is also checked after every step of the script and every round of the
	// first settling, where faults, partitions and lag are the rule.
	Quiescent bool
	// Check returns the violations of the World's current state.
	Check func(w *World) []Violation
}

// where is the World's place in the soak, for violations.
type where struct {
	phase string
	step  int
}

// at sets where the soak is: violations recorded from now on name phase and step.
func (w *World) at(phase string, step int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.where = where{phase: phase, step: step}
}

// violate records a violation of rule by object. After a step (or a round) a rule reports an
// object once: the first step is the one to replay; what follows repeats it.
func (w *World) violate(rule Rule, object, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Contains(w.Config.Skip, rule) {
		return
	}
	if w.where.step >= 0 {
		k := string(rule) + " " + object
		if w.reported[k] {
			return
		}
		if w.reported == nil {
			w.reported = map[string]bool{}
		}
		w.reported[k] = true
	}
	w.violations = append(w.violations, Violation{
		Seed: w.Config.Seed, Phase: w.where.phase, Step: w.where.step, Rule: rule, Object: object,
		Message: fmt.Sprintf(format, args...), Replay: w.Config.Replay(),
	})
}

// checkInvariants runs the embedder's invariants: at quiescence all of them, else those
// that are not Quiescent.
func (w *World) checkInvariants(quiescent bool) {
	for _, inv := range w.Config.Invariants {
		if inv.Quiescent && !quiescent || inv.Check == nil {
			continue
		}
		for _, v := range inv.Check(w) {
			w.violate(inv.Rule, v.Object, "%s", v.Message)
		}
	}
}
