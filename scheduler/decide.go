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
// The steps, one function each: the template's replicas are checked; the clusters the
// preference does not cover are set aside (and diagnosed) and placement selects among the
// others (place); application failover leaves some out (leaveUnhealthy); each selected
// cluster's current replicas and capacity are derived (states, capacity.go); the preference
// (or Duplicated without one) becomes a Request, with Refill when the rebalance period
// allows it (request); Divide plans (divide); the plan becomes the schedule (scheduleOf),
// graceful evictions keep what the losing clusters run (evictions), and the message says
// why (message).
func decide(typ federation.TypeConfig, fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster, at placed, key federation.Key, now time.Time, fd placement.Disruption) (decision, error) {
	s := &scheduling{typ: typ, fed: fed, rsp: rsp, all: clusters, clusters: clusters, at: at, key: key, now: now, fd: fd}
	total, errs := templateReplicas(fed, typ)
	if len(errs) > 0 {
		return decision{}, s.invalidObject(errs)
	}
	pd, placeErr := s.place()
	if bad := (*inputError)(nil); errors.As(placeErr, &bad) {
		return decision{}, bad
	}
	app := s.leaveUnhealthy(&pd)
	states, blocked, err := s.states(pd)
	if err != nil {
		return decision{}, err
	}
	req, ref, err := s.request(pd, states, total)
	if err != nil {
		return decision{}, err
	}
	plan, err := s.divide(req)
	if err != nil {
		return decision{}, err
	}
	d := s.scheduleOf(plan, pd, ref, app)
	d.noClusters = len(states) == 0
	evicted := s.evictions(&d, ref)
	d.schedule.NotReady = append(d.schedule.NotReady, keptOutNotReady(pd)...)
	d.warnings = warnings(typ.Federated.Kind, fed, rsp, s.all, pd)
	d.message = s.message(d, evicted, app.note, blocked)
	return d, placeErr
}

// scheduling is one decide call: its input, shared by its steps.
type scheduling struct {
	typ      federation.TypeConfig
	fed      *federation.FederatedObject
	rsp      *federation.ReplicaSchedulingPreference
	all      []federation.Cluster // the fleet: for the warnings, and the evictions' reach
	clusters []federation.Cluster // those the preference covers (place narrows all)
	byName   map[string]*federation.Cluster
	at       placed
	key      federation.Key
	now      time.Time
	fd       placement.Disruption
}

// invalidObject is the inputError for field errors in the object.
func (s *scheduling) invalidObject(errs field.ErrorList) error {
	return &inputError{ReasonInvalidObject, federation.NewInvalidError(s.typ.Federated.Kind, s.key, errs)}
}

// place selects the clusters: among those the preference covers, by the placement (or, for
// a preference that does not intersect with it, by every cluster, KubeFed's rule), plus the
// clusters the object's dependent workloads run in. The error is placement's
// ErrUnsatisfiable (the decision is then its best effort), or an *inputError for a placement
// placement rejects.
func (s *scheduling) place() (placement.Decision, error) {
	p := s.fed.Spec.Placement
	var noPref []placement.Diagnosis
	if s.rsp != nil {
		if !s.rsp.Spec.IntersectWithClusterSelector {
			// KubeFed: the preference, not the object's membership rules, says which clusters.
			p.Clusters, p.ClusterSelector = nil, &metav1.LabelSelector{}
		}
		s.clusters, noPref = withPreference(s.clusters, s.rsp.Spec.Clusters)
	}
	s.byName = make(map[string]*federation.Cluster, len(s.clusters))
	for i := range s.clusters {
		s.byName[s.clusters[i].Name] = &s.clusters[i]
	}
	// NoSchedule refuses new placements only: the clusters the object runs in stay
	// (placement.Input.Running); tolerationSeconds counts at now. While the fleet is
	// disrupted a lost cluster keeps what runs there (placement.Input.Disruption).
	pin := placement.Input{Placement: p, Clusters: s.clusters, Running: s.at.in, Now: s.now, Disruption: s.fd}
	pd, err := placement.Place(pin)
	if err != nil && !errors.Is(err, placement.ErrUnsatisfiable) {
		return pd, &inputError{ReasonInvalidPlacement, fmt.Errorf("%s %s: %w", s.typ.Federated.Kind, s.key, err)}
	}
	// The clusters the dependencies loop says the object's dependent workloads run in.
	pd.Require(federation.RequiredClusters(s.fed.Annotations), pin)
	pd.Exclude(noPref...)
	return pd, err
}

// leaveUnhealthy applies application failover (appfailover.go): the selected clusters where
// the workload is unhealthy leave pd.
func (s *scheduling) leaveUnhealthy(pd *placement.Decision) appFailover {
	app := decideAppFailover(federation.EffectiveFailover(s.fed.Spec.Placement, s.rsp), s.fed, s.at.prev, pd.Selected, s.byName, s.now)
	if len(app.out) > 0 {
		pd.Selected = slices.DeleteFunc(pd.Selected, func(c placement.Candidate) bool {
			return slices.ContainsFunc(app.out, func(x placement.Diagnosis) bool { return x.Cluster == c.Name })
		})
		pd.Exclude(app.out...)
	}
	return app
}

// states returns each selected cluster's state for the division, and, for a divisible type,
// the clusters that get no new replicas because sync cannot write the object there (each
// with why).
func (s *scheduling) states(pd placement.Decision) ([]ClusterState, []string, error) {
	perReplica, ferr := podRequests(s.fed.Spec.Template.Object)
	if ferr != nil {
		return nil, nil, s.invalidObject(field.ErrorList{ferr})
	}
	states := make([]ClusterState, 0, len(pd.Selected))
	var blocked []string
	for _, c := range pd.Selected {
		cl := s.byName[c.Name]
		st := clusterState(cl, c.Domain)
		if current, known := s.at.current[c.Name]; known && s.at.sticky {
			st.Current = &current
		}
		var why string
		running := s.at.running[c.Name]
		st.Capacity, why = blockedCapacity(capacityFor(headroomReplicas(cl, perReplica), running), running, s.fed.Status.Clusters, c.Name)
		switch {
		case keptNotReady(pd, c.Name):
			// Not Ready: sync cannot write there, whether or not its status entry says so
			// yet. Placement kept the cluster for what runs there, and says so.
			st.Capacity = heldAt(st.Capacity, running)
		case why != "" && s.typ.Divisible():
			blocked = append(blocked, fmt.Sprintf("%s (%s)", c.Name, why))
		}
		states = append(states, st)
	}
	return states, blocked, nil
}

// request is the division's Request: the preference's, with the placement's replica spread
// and a refill when the rebalance period allows it (ref); without a preference, the
// template's total in every cluster (Duplicated).
func (s *scheduling) request(pd placement.Decision, states []ClusterState, total int64) (Request, window, error) {
	if s.rsp == nil {
		return Request{Key: s.key.String(), TotalReplicas: total, Clusters: states, Strategy: federation.StrategyDuplicated}, window{}, nil
	}
	req := RequestFor(s.key, s.rsp, states)
	if rs := pd.ReplicaSpread; rs != nil {
		if errs := spreadConflict(s.rsp, rs, s.typ.Federated.Kind, s.key); len(errs) > 0 {
			return req, window{}, &inputError{ReasonInvalidPreference, federation.NewInvalidError("ReplicaSchedulingPreference", s.key, errs)}
		}
		req.Spread = &Spread{MinDomains: rs.MinGroups, MaxSkew: rs.MaxSkew}
	}
	ref := refillFor(s.rsp, s.at.prev, s.now)
	req.Refill = ref.due
	return req, ref, nil
}

// divide plans req. The states are built valid (names unique, numbers non-negative), so
// what Divide rejects is the preference's, or without one the object's.
func (s *scheduling) divide(req Request) (Plan, error) {
	plan, err := Divide(req)
	switch {
	case err == nil:
		return plan, nil
	case s.rsp != nil:
		return plan, &inputError{ReasonInvalidPreference, fmt.Errorf("ReplicaSchedulingPreference %s: %w", s.key, err)}
	}
	return plan, &inputError{ReasonInvalidObject, fmt.Errorf("%s %s: %w", s.typ.Federated.Kind, s.key, err)}
}

// scheduleOf turns the plan into the decision's schedule (0 replicas each for a type that
// is not divisible), with the refill stamp, the avoided clusters and when to look again.
func (s *scheduling) scheduleOf(plan Plan, pd placement.Decision, ref window, app appFailover) decision {
	d := decision{placement: pd, plan: plan, schedule: plan.Schedule(), unplaced: plan.Unplaced}
	if !s.typ.Divisible() {
		for i := range d.schedule.Clusters {
			d.schedule.Clusters[i].Replicas = 0
		}
	}
	d.schedule.LastRebalanceTime, d.requeue = ref.stamp(s.at.prev, d.schedule.Clusters, s.now)
	d.schedule.Avoided = app.avoided
	if app.requeue > 0 && (d.requeue == 0 || app.requeue < d.requeue) {
		d.requeue = app.requeue
	}
	if !pd.Recheck.IsZero() {
		// A tolerationSeconds ends then: the cluster is left out from that moment.
		if wait := pd.Recheck.Sub(s.now); d.requeue == 0 || wait < d.requeue {
			d.requeue = max(wait, time.Second)
		}
	}
	return d
}

// evictions applies graceful eviction (evict.go) to d's schedule, for a divisible type
// scheduled before, and returns what it says for the message.
func (s *scheduling) evictions(d *decision, ref window) string {
	if !s.at.sticky || !s.typ.Divisible() {
		return ""
	}
	plan := d.plan
	ev := evict(evictInput{
		before: s.at.before, running: s.at.running, failover: federation.EffectiveFailover(s.fed.Spec.Placement, s.rsp),
		status: s.fed.Status.Clusters, pd: d.placement, plan: plan, now: s.now,
		hold:   s.rsp != nil && plan.Strategy != federation.StrategyDuplicated,
		copies: plan.Strategy == federation.StrategyDuplicated,
		moving: s.rsp != nil && (s.rsp.Spec.Rebalance || ref.due),
		pinned: override.ReplicasOverrides(s.fed.Spec.Overrides, s.typ, s.clusters),
		retain: s.fed.Spec.RetainReplicas,
		fleet:  s.all, disrupted: s.fd,
	}, d.schedule.Clusters)
	d.schedule.Clusters, d.schedule.Evictions = ev.clusters, ev.evictions
	d.unplaced, d.held = ev.unplaced, ev.held
	if ev.requeue > 0 && (d.requeue <= 0 || ev.requeue < d.requeue) {
		d.requeue = ev.requeue
	}
	return ev.message
}

// keptOutNotReady returns the clusters placement left out only because they are not ready:
// sync must not read their absence as "no longer placed" once they are Ready again and this
// schedule is not yet redone (federation.Schedule.NotReady).
func keptOutNotReady(pd placement.Decision) []string {
	var out []string
	for _, x := range pd.Excluded {
		if x.Rule == placement.NotReady {
			out = append(out, x.Cluster)
		}
	}
	return out
}

// message is the Scheduled condition's message for d: the plan and placement (message),
// then what the evictions wait for, application failover's note, the clusters blocked for
// new replicas, and the warnings.
func (s *scheduling) message(d decision, evicted, note string, blocked []string) string {
	m := message(d.plan, d.placement, s.typ.Divisible())
	if evicted != "" {
		m += "; " + evicted
	}
	if note != "" {
		m += "; " + note
	}
	if len(blocked) > 0 {
		m += "; no new replicas where sync cannot write the object: " + strings.Join(blocked, ", ")
	}
	return m + notes(d.warnings)
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
