package scheduler

import (
	"errors"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/placement"
)

// Input is everything [Decide] needs to schedule one federated object: plain values, read
// by the caller from wherever it keeps them (the Scheduler reads them from the host; a
// preview or a strategy test builds them from YAML).
type Input struct {
	// Type is the federated type (which field holds the template's replicas, whether the
	// type is divisible).
	Type federation.TypeConfig

	// Object is the federated object, as stored. Its spec (template, placement) is what is
	// scheduled; its status.clusters gives the replicas the object runs in each cluster (the
	// status loop's fresh observations). Its status.schedule is not read: Previous is.
	Object *federation.FederatedObject

	// Preference is the object's ReplicaSchedulingPreference as stored (same namespace and
	// name), or nil when there is none. Decide defaults a copy of it as the Scheduler does
	// (federation.DefaultReplicaSchedulingPreference; for the KubeFed algorithm only the
	// rebalance period, so a migrated object keeps its plan) and validates it. A preference
	// whose spec.targetKind is another federated kind is ignored, as the Scheduler ignores
	// it: it schedules the other kind's object of the same name.
	Preference *federation.ReplicaSchedulingPreference

	// Clusters are the federation's Cluster objects, with their status (readiness, taints,
	// available resources).
	Clusters []federation.Cluster

	// Previous is the schedule written before (the object's status.schedule), or nil. With
	// rebalance off the replicas it lists stay where they are unless the status loop has
	// observed otherwise, and its lastRebalanceTime says when the next refill is due.
	Previous *federation.Schedule

	// Now is the time of the decision: it decides whether the rebalance period allows a
	// refill and stamps a new period.
	Now time.Time

	// Fresh decides where the object would go now, as if nothing had been scheduled before:
	// Previous is ignored, and running replicas do not stay where they are (as with
	// rebalance on), though they still count towards their cluster's capacity, since they
	// hold room there. It answers "why would it place this now?"; the Scheduler never sets it.
	Fresh bool

	// RejectUnknownClusters makes a cluster name that no Cluster has (in
	// spec.placement.clusters or among the preference's keys) an error: Scheduled=False with
	// reason UnknownCluster and the field path, and no schedule. Without it the name is
	// skipped with a warning in the message. The Scheduler sets it from
	// [Options].RejectUnknownClusters.
	RejectUnknownClusters bool

	// Disruption says when the fleet counts as disrupted (placement.FleetDisruption): then a
	// lost cluster keeps its replicas and gets no new ones. The Scheduler sets it from
	// [Options].Disruption; the zero value is the default.
	Disruption placement.DisruptionOptions
}

// Decision is what Reconcile writes for one object, and why. It is plain, read-only data.
type Decision struct {
	// Placement is the cluster selection, with a Diagnosis for every cluster left out
	// (placement's rules, and the preference's: a cluster it has no entry for) and the
	// names spec.placement.clusters gives that no Cluster has (Placement.Unknown).
	Placement placement.Decision
	// Plan is the division of replicas among the selected clusters, with each one's reason
	// ([Plan.Explain]).
	Plan Plan
	// Schedule is what Reconcile writes to status.schedule, or nil when the input is
	// invalid (the last good schedule then stays).
	Schedule *federation.Schedule
	// Condition is the Scheduled condition Reconcile writes (its lastTransitionTime is left
	// to whoever writes it: it changes only when the status does).
	Condition metav1.Condition
	// Warnings are what the decision went ahead with although it probably does not do what
	// its author meant: cluster names no Cluster has, a placement the preference set aside.
	// The message ends with them; nil when there is nothing to say or the input is invalid.
	Warnings []Warning
	// Message is the plan's summary and the placement's, then the warnings, as in
	// Condition.Message before it is bounded.
	Message string
	// RequeueAfter is when Reconcile asks to look again without a change: the rest of the
	// rebalance period, or sooner when a tolerationSeconds ends (placement's
	// Decision.Recheck), 0 for none.
	RequeueAfter time.Duration
}

// Decide schedules one federated object exactly as [Scheduler.Reconcile] does, from plain
// values: Reconcile reads its inputs, calls Decide and writes the result, so the two cannot
// disagree. It does no I/O, reads no clock and the same input always gives the same
// decision.
//
// The steps, each documented on Reconcile: the placement is validated; the preference is
// defaulted and validated; with a preference, the candidates are the clusters it covers (its
// own entry or "*"), among every cluster unless spec.intersectWithClusterSelector (KubeFed's
// rule), and placement's other rules apply; each selected cluster's capacity is what fits in
// its status.available given the template's pod requests, plus the replicas the object runs
// there already; [Divide] plans; the plan becomes the schedule. Names in
// spec.placement.clusters or among the preference's keys that no Cluster has, and a
// placement the preference set aside that would have left scheduled clusters out, are
// Decision.Warnings, which the message ends with.
//
// The error is the validation error when the object, its placement or its preference is
// invalid (wrapping federation.ErrInvalidObject, placement.ErrInvalidPlacement or
// ErrInvalidRequest, with the field path): the Decision then holds only the Scheduled
// condition Reconcile records (status False, reason InvalidObject, InvalidPlacement or
// InvalidPreference) and Schedule is nil. When no selection meets the spread constraints'
// minGroups the error wraps placement.ErrUnsatisfiable and the Decision is the best effort,
// which Reconcile writes.
func Decide(in Input) (Decision, error) {
	if in.Object == nil {
		return Decision{}, errors.New("scheduler: Decide: Input.Object is nil")
	}
	fed := in.Object
	key := federation.Key{Namespace: fed.Namespace, Name: fed.Name}
	d, err := decideInput(in, key)
	var bad *inputError
	if errors.As(err, &bad) {
		return Decision{Condition: invalidCondition(bad.reason, bad.err, fed.Generation)}, bad.err
	}
	out := Decision{
		Placement:    d.placement,
		Plan:         d.plan,
		Schedule:     &d.schedule,
		Condition:    d.condition(fed.Generation, err),
		Warnings:     d.warnings,
		Message:      d.message,
		RequeueAfter: d.requeue,
	}
	return out, err
}

// decideInput validates the placement and the preference, then decides.
func decideInput(in Input, key federation.Key) (decision, error) {
	kind := in.Type.Federated.Kind
	if in.RejectUnknownClusters {
		if err := unknownClustersError(kind, key, in.Object, in.Preference, in.Clusters); err != nil {
			return decision{}, &inputError{ReasonUnknownCluster, err}
		}
	}
	if errs := federation.ValidatePlacement(in.Object.Spec.Placement, specPath.Child("placement")); len(errs) > 0 {
		return decision{}, &inputError{ReasonInvalidPlacement, federation.NewInvalidError(kind, key, errs)}
	}
	rsp, err := preferenceFor(in.Type, in.Preference, key)
	if err != nil {
		return decision{}, &inputError{ReasonInvalidPreference, err}
	}
	// A Cluster being deleted is leaving the federation: sync (TargetsFor) places nothing
	// there any more, so the schedule gives it nothing either.
	clusters := slices.DeleteFunc(slices.Clone(in.Clusters), func(c federation.Cluster) bool { return c.DeletionTimestamp != nil })
	at := placed{before: in.Previous, prev: targetsOf(in.Previous), running: withoutCopies(currentReplicas(in.Object, in.Previous), in.Object.Status.Clusters),
		sticky: !in.Fresh, in: runningIn(in.Object, in.Previous)}
	at.current = stickyReplicas(in.Object, at.prev)
	if in.Fresh {
		at = placed{running: currentReplicas(in.Object, nil)}
		at.current = at.running
	}
	return decide(in.Type, in.Object, rsp, clusters, at, key, in.Now, placement.FleetDisruption(in.Clusters, in.Now, in.Disruption))
}

// preferenceFor returns a defaulted, validated copy of rsp, or nil when there is none for
// typ's kind.
func preferenceFor(typ federation.TypeConfig, rsp *federation.ReplicaSchedulingPreference, key federation.Key) (*federation.ReplicaSchedulingPreference, error) {
	if rsp == nil || rsp.Spec.TargetKind != typ.Federated.Kind {
		return nil, nil // none, or it schedules another federated kind of the same name
	}
	rsp = rsp.DeepCopy()
	if rsp.Spec.Algorithm == federation.AlgorithmKubeFed {
		// KubeFed's minReplicas defaults to 0: leave it alone so a migrated object keeps its
		// plan replica for replica.
		if rsp.Spec.RebalancePeriod == nil {
			rsp.Spec.RebalancePeriod = &metav1.Duration{Duration: federation.DefaultRebalancePeriod}
		}
	} else {
		federation.DefaultReplicaSchedulingPreference(rsp)
	}
	if errs := federation.ValidateReplicaSchedulingPreference(rsp); len(errs) > 0 {
		return nil, federation.NewInvalidError("ReplicaSchedulingPreference", key, errs)
	}
	return rsp, nil
}

// invalidCondition is the Scheduled condition for input that cannot be scheduled.
func invalidCondition(reason string, cause error, generation int64) metav1.Condition {
	return metav1.Condition{
		Type:               federation.ConditionScheduled,
		Status:             metav1.ConditionFalse,
		Reason:             reason,
		Message:            fedcond.Truncate(cause.Error(), fedcond.MaxMessage),
		ObservedGeneration: generation,
	}
}

// placed is what a decision knows of where the object is: the previous schedule as written
// (before: for its evictions) and at its evictions' targets (prev: for the rebalance period),
// the replicas it runs per cluster (running: for capacity and evictions), those the division
// keeps where they are (current: evicting clusters at their target), whether they stay where
// they are (sticky: every pass of the loop; not in a fresh decision, which evicts nothing
// either), and the clusters it runs in (in: an untolerated NoSchedule taint keeps them; none
// in a fresh decision).
type placed struct {
	before  *federation.Schedule
	prev    *federation.Schedule
	running map[string]int64
	current map[string]int64
	sticky  bool
	in      []string
}

// runningIn returns the clusters the object runs in: those of status.clusters whose entry
// shows a copy (copyIn) but for a copy being deleted ([going]), then those of the previous schedule that status.clusters does not
// list (sync has not reported on them yet), each once. An entry sync wrote for a cluster it
// could not write in, with no copy there, is no sign that the object runs there: under a
// NoSchedule taint such a cluster is a new placement, and refused.
func runningIn(fed *federation.FederatedObject, prev *federation.Schedule) []string {
	var out []string
	listed := make(map[string]bool, len(fed.Status.Clusters))
	for i := range fed.Status.Clusters {
		m := &fed.Status.Clusters[i]
		listed[m.Name] = true
		if copyIn(m) && !going(*m) && !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	if prev != nil {
		for _, c := range prev.Clusters {
			if !listed[c.Name] && !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// copyIn reports whether the status entry m shows a copy of the object in its cluster: sync
// wrote one there (it records the revision it wrote), or the collector observed one of the
// federation's (its replicas, its revision annotation). An entry sync wrote for a cluster it
// could not write in (not ready, unreachable, an object of the same name that is not the
// federation's, a refused create) shows neither.
func copyIn(m *federation.MemberStatus) bool {
	return m.Revision > 0 || m.ObservedRevision > 0 || m.Replicas != nil
}

// withoutCopies returns running (replicas per cluster, from status and the previous schedule)
// with 0 for every cluster whose status entry shows no copy there (copyIn): what the previous
// schedule asked for does not run where sync could not put it. running itself is returned
// when there is none.
func withoutCopies(running map[string]int64, status []federation.MemberStatus) map[string]int64 {
	var out map[string]int64
	for i := range status {
		m := &status[i]
		if copyIn(m) || running[m.Name] == 0 {
			continue
		}
		if out == nil {
			out = maps.Clone(running)
		}
		out[m.Name] = 0
	}
	if out == nil {
		return running
	}
	return out
}
