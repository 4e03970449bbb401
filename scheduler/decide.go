package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
)

var specPath = field.NewPath("spec")

// decision is what one scheduling pass concluded: plain data, computed by decide without I/O.
type decision struct {
	placement  placement.Decision
	plan       Plan
	schedule   federation.Schedule
	unplaced   int64
	held       int64 // replicas kept where they run because they fit nowhere else
	noClusters bool
	warnings   []Warning
	message    string
	// requeue is when to look again without a change: the rest of the rebalance period.
	requeue time.Duration
}

// condition is the Scheduled condition for the decision; placeErr is the placement's
// ErrUnsatisfiable, if any.
func (d decision) condition(generation int64, placeErr error) metav1.Condition {
	c := metav1.Condition{
		Type:               federation.ConditionScheduled,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonScheduled,
		Message:            fedcond.Truncate(d.message, fedcond.MaxMessage),
		ObservedGeneration: generation,
	}
	switch {
	case placeErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonUnsatisfiable
		c.Message = fedcond.Truncate(placeErr.Error()+"; "+d.message, fedcond.MaxMessage)
	case d.noClusters || d.unplaced > 0 || d.held > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonUnschedulable
	}
	return c
}

// inputError is a decision that cannot be made because of what the object or its preference
// says: Reconcile records it in the Scheduled condition with reason and stops retrying. Its
// message names the object, the field and, where one is at fault, the cluster.
type inputError struct {
	reason string
	err    error
}

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// decide selects clusters and divides replicas at time now, for a valid placement and a
// defaulted, valid preference (or nil); at is where the object runs and was scheduled before.
// The error is ErrUnsatisfiable from placement (the decision is then the best effort), or an
// *inputError.
//
// The steps: the template's replicas are checked; the clusters the preference does not cover
// are set aside (and diagnosed); placement selects among the others and says how replicas are
// spread; each selected cluster's current replicas and capacity are derived (capacity.go);
// the preference (or Duplicated without one) becomes a Request, with Refill when the
// rebalance period allows it; Divide plans; the plan becomes the schedule.
func decide(typ federation.TypeConfig, fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster, at placed, key federation.Key, now time.Time, fd placement.Disruption) (decision, error) {
	kind := typ.Federated.Kind
	total, errs := templateReplicas(fed, typ)
	if len(errs) > 0 {
		return decision{}, &inputError{ReasonInvalidObject, federation.NewInvalidError(kind, key, errs)}
	}
	p := fed.Spec.Placement
	all := clusters // before the preference filters them, for the warnings
	var noPref []placement.Diagnosis
	if rsp != nil {
		if !rsp.Spec.IntersectWithClusterSelector {
			// KubeFed: the preference, not the object's membership rules, says which clusters.
			p.Clusters, p.ClusterSelector = nil, &metav1.LabelSelector{}
		}
		clusters, noPref = withPreference(clusters, rsp.Spec.Clusters)
	}
	// NoSchedule refuses new placements only: the clusters the object runs in stay
	// (placement.Input.Running); tolerationSeconds counts at now. While the fleet is
	// disrupted a lost cluster keeps what runs there (placement.Input.Disruption).
	pin := placement.Input{Placement: p, Clusters: clusters, Running: at.in, Now: now, Disruption: fd}
	pd, placeErr := placement.Place(pin)
	if placeErr != nil && !errors.Is(placeErr, placement.ErrUnsatisfiable) {
		return decision{}, &inputError{ReasonInvalidPlacement, fmt.Errorf("%s %s: %w", kind, key, placeErr)}
	}
	// The clusters the dependencies loop says the object's dependent workloads run in.
	pd.Require(federation.RequiredClusters(fed.Annotations), pin)
	pd.Exclude(noPref...)
	byName := make(map[string]*federation.Cluster, len(clusters))
	for i := range clusters {
		byName[clusters[i].Name] = &clusters[i]
	}
	// Application failover (appfailover.go): clusters where the workload is unhealthy leave.
	app := decideAppFailover(federation.EffectiveFailover(fed.Spec.Placement, rsp), fed, at.prev, pd.Selected, byName, now)
	if len(app.out) > 0 {
		pd.Selected = slices.DeleteFunc(pd.Selected, func(c placement.Candidate) bool {
			return slices.ContainsFunc(app.out, func(x placement.Diagnosis) bool { return x.Cluster == c.Name })
		})
		pd.Exclude(app.out...)
	}

	perReplica, ferr := podRequests(fed.Spec.Template.Object)
	if ferr != nil {
		return decision{}, &inputError{ReasonInvalidObject, federation.NewInvalidError(kind, key, field.ErrorList{ferr})}
	}
	states := make([]ClusterState, 0, len(pd.Selected))
	var blocked []string
	for _, c := range pd.Selected {
		cl := byName[c.Name]
		st := clusterState(cl, c.Domain)
		if current, known := at.current[c.Name]; known && at.sticky {
			st.Current = &current
		}
		var why string
		st.Capacity, why = blockedCapacity(capacityFor(headroomReplicas(cl, perReplica), at.running[c.Name]), at.running[c.Name], fed.Status.Clusters, c.Name)
		if why != "" && typ.Divisible() && !keptNotReady(pd, c.Name) { // a cluster kept not ready says so already
			blocked = append(blocked, fmt.Sprintf("%s (%s)", c.Name, why))
		}
		states = append(states, st)
	}

	var req Request
	var ref window
	if rsp != nil {
		req = RequestFor(key, rsp, states)
		if rs := pd.ReplicaSpread; rs != nil {
			if errs := spreadConflict(rsp, rs, kind, key); len(errs) > 0 {
				return decision{}, &inputError{ReasonInvalidPreference, federation.NewInvalidError("ReplicaSchedulingPreference", key, errs)}
			}
			req.Spread = &Spread{MinDomains: rs.MinGroups, MaxSkew: rs.MaxSkew}
		}
		ref = refillFor(rsp, at.prev, now)
		req.Refill = ref.due
	} else {
		req = Request{Key: key.String(), TotalReplicas: total, Clusters: states, Strategy: federation.StrategyDuplicated}
	}
	plan, err := Divide(req)
	switch {
	case err != nil && rsp != nil:
		// The states are built valid (names unique, numbers non-negative), so what Divide
		// rejects is the preference's.
		return decision{}, &inputError{ReasonInvalidPreference, fmt.Errorf("ReplicaSchedulingPreference %s: %w", key, err)}
	case err != nil:
		return decision{}, &inputError{ReasonInvalidObject, fmt.Errorf("%s %s: %w", kind, key, err)}
	}
	d := decision{placement: pd, plan: plan, schedule: plan.Schedule(), unplaced: plan.Unplaced, noClusters: len(states) == 0}
	if !typ.Divisible() {
		for i := range d.schedule.Clusters {
			d.schedule.Clusters[i].Replicas = 0
		}
	}
	d.schedule.LastRebalanceTime, d.requeue = ref.stamp(at.prev, d.schedule.Clusters, now)
	d.schedule.Avoided = app.avoided
	if app.requeue > 0 && (d.requeue == 0 || app.requeue < d.requeue) {
		d.requeue = app.requeue
	}
	if !pd.Recheck.IsZero() {
		// A tolerationSeconds ends then: the cluster is left out from that moment.
		if wait := pd.Recheck.Sub(now); d.requeue == 0 || wait < d.requeue {
			d.requeue = max(wait, time.Second)
		}
	}
	var evicted string
	if at.sticky && typ.Divisible() {
		ev := evict(evictInput{
			before: at.before, running: at.running, failover: federation.EffectiveFailover(fed.Spec.Placement, rsp),
			status: fed.Status.Clusters, pd: pd, plan: plan, now: now,
			hold:   rsp != nil && plan.Strategy != federation.StrategyDuplicated,
			copies: plan.Strategy == federation.StrategyDuplicated,
			moving: rsp != nil && (rsp.Spec.Rebalance || ref.due),
			pinned: override.ReplicasOverrides(fed.Spec.Overrides, typ, clusters),
			retain: fed.Spec.RetainReplicas,
			fleet:  all,
		}, d.schedule.Clusters)
		d.schedule.Clusters, d.schedule.Evictions = ev.clusters, ev.evictions
		d.unplaced, d.held, evicted = ev.unplaced, ev.held, ev.message
		if ev.requeue > 0 && (d.requeue <= 0 || ev.requeue < d.requeue) {
			d.requeue = ev.requeue
		}
	}
	// Sync must not read the absence of these clusters as "no longer placed" once they are
	// Ready again and this schedule is not yet redone (federation.Schedule.NotReady).
	for _, x := range pd.Excluded {
		if x.Rule == placement.NotReady {
			d.schedule.NotReady = append(d.schedule.NotReady, x.Cluster)
		}
	}
	d.warnings = warnings(kind, fed, rsp, all, pd)
	d.message = message(plan, pd, typ.Divisible())
	if evicted != "" {
		d.message += "; " + evicted
	}
	if app.note != "" {
		d.message += "; " + app.note
	}
	if len(blocked) > 0 {
		d.message += "; no new replicas where sync cannot write the object: " + strings.Join(blocked, ", ")
	}
	d.message += notes(d.warnings)
	return d, placeErr
}

// keptNotReady reports whether placement kept cluster under its not-ready taint (the object
// runs there).
func keptNotReady(pd placement.Decision, cluster string) bool {
	return slices.ContainsFunc(pd.Kept, func(x placement.Diagnosis) bool { return x.Cluster == cluster && x.Rule == placement.NotReady })
}

// spreadConflict returns why the preference cannot honour the placement's replica spread: it
// divides replicas with KubeFed's planner, by cost, or not at all.
func spreadConflict(rsp *federation.ReplicaSchedulingPreference, rs *placement.ReplicaSpread, kind string, key federation.Key) field.ErrorList {
	why := fmt.Sprintf("cannot honour spec.placement.spreadConstraints[%d].maxSkew of %s %s", rs.Constraint, kind, key)
	switch {
	case rsp.Spec.Algorithm == federation.AlgorithmKubeFed:
		return field.ErrorList{field.Invalid(specPath.Child("algorithm"), rsp.Spec.Algorithm, why+": use algorithm Webster")}
	case rsp.Spec.Strategy == federation.StrategyCostOptimized || rsp.Spec.Strategy == federation.StrategyDuplicated:
		return field.ErrorList{field.Invalid(specPath.Child("strategy"), rsp.Spec.Strategy, why+": use strategy Weighted or CapacityWeighted")}
	}
	return nil
}

// withPreference keeps the clusters a preference covers (its own entry or "*") and diagnoses
// the others.
func withPreference(clusters []federation.Cluster, prefs map[string]federation.ClusterPreferences) ([]federation.Cluster, []placement.Diagnosis) {
	if len(prefs) == 0 {
		return clusters, nil
	}
	if _, ok := prefs[federation.WildcardCluster]; ok {
		return clusters, nil
	}
	out := make([]federation.Cluster, 0, len(prefs))
	var left []placement.Diagnosis
	for _, c := range clusters {
		if _, ok := prefs[c.Name]; ok {
			out = append(out, c)
			continue
		}
		left = append(left, placement.Diagnosis{Cluster: c.Name, Rule: placement.Preference,
			Detail: fmt.Sprintf("the ReplicaSchedulingPreference has no entry for it (neither %q nor %q in spec.clusters)", c.Name, federation.WildcardCluster)})
	}
	return out, left
}

// currentReplicas returns the replicas the object runs per cluster: the status loop's fresh
// observation (the member's status.replicas) when it was made after prev's last refill, else
// the previous schedule prev (nil: none). capacity.go says why this is the number that
// consumes a cluster's headroom. A negative count (no API server writes one) is ignored: a
// member's bad number is never reported as the preference's. Nor is the count of a copy being
// deleted ([going]).
func currentReplicas(fed *federation.FederatedObject, prev *federation.Schedule) map[string]int64 {
	out := map[string]int64{}
	if prev != nil {
		for _, c := range prev.Clusters {
			if c.Replicas >= 0 {
				out[c.Name] = c.Replicas
			}
		}
	}
	var refilled *metav1.Time
	if prev != nil {
		refilled = prev.LastRebalanceTime
	}
	for _, c := range fed.Status.Clusters {
		if c.Replicas == nil || *c.Replicas < 0 || c.Stale || going(c) {
			continue
		}
		if refilled != nil && (c.LastObserved == nil || !c.LastObserved.After(refilled.Time)) {
			// Read before the last refill moved replicas: the members may not run the refill
			// yet, and reading this as where replicas run would undo it on the next pass.
			continue
		}
		out[c.Name] = *c.Replicas
	}
	return out
}

// templateReplicas is the template's replica count (1 when unset or null, the API default),
// or 0 for types that are not divisible. A count that is negative or not an integer is a
// field error at its path (spec.template.spec.replicas by default).
func templateReplicas(fed *federation.FederatedObject, typ federation.TypeConfig) (int64, field.ErrorList) {
	if !typ.Divisible() {
		return 0, nil
	}
	fields := typ.ReplicasFields()
	v, ok, _ := unstructured.NestedFieldNoCopy(fed.Spec.Template.Object, fields...)
	if !ok || v == nil {
		return 1, nil
	}
	path := specPath.Child("template", fields...)
	switch n := v.(type) {
	case int64:
		if n < 0 {
			return 0, field.ErrorList{field.Invalid(path, n, "must be non-negative")}
		}
		return n, nil
	default:
		return 0, field.ErrorList{field.Invalid(path, v, "must be an integer")}
	}
}

// message is the Scheduled condition's message: the plan's summary and why clusters were left
// out. Unknown cluster names are left to the warnings, which name the field that holds them.
func message(plan Plan, pd placement.Decision, divisible bool) string {
	pd.Unknown = nil
	var b strings.Builder
	switch {
	case divisible:
		b.WriteString(plan.Summary())
	case len(pd.Selected) == 0:
		b.WriteString("placed in no cluster")
	default:
		fmt.Fprintf(&b, "placed in %d cluster(s): %s", len(pd.Selected), strings.Join(pd.Names(), ", "))
	}
	if len(pd.Excluded) > 0 || len(pd.Kept) > 0 {
		b.WriteString("; ")
		b.WriteString(pd.Summary())
	}
	return b.String()
}

func fieldDecodeError(err error) field.ErrorList {
	return field.ErrorList{field.Invalid(specPath, "", err.Error())}
}

// going reports whether sync lists m's cluster only because its copy there is being deleted
// and not gone yet (federation.PropagationWaitingForRemoval). What runs there is going: it is
// not where the object runs, so it is no eviction's to keep, and counting it would put the
// cluster back in the schedule, and the copy back once it is gone.
func going(m federation.MemberStatus) bool {
	return m.Propagation == federation.PropagationWaitingForRemoval
}
