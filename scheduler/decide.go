package scheduler

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

var specPath = field.NewPath("spec")

// decision is what one scheduling pass concluded: plain data, computed by decide without I/O.
type decision struct {
	placement  placement.Decision
	plan       Plan
	schedule   federation.Schedule
	unplaced   int64
	noClusters bool
	message    string
}

// condition is the Scheduled condition for the decision; placeErr is the placement's
// ErrUnsatisfiable, if any.
func (d decision) condition(generation int64, placeErr error) metav1.Condition {
	c := metav1.Condition{
		Type:               federation.ConditionScheduled,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonScheduled,
		Message:            truncate(d.message),
		ObservedGeneration: generation,
	}
	switch {
	case placeErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonUnsatisfiable
		c.Message = truncate(placeErr.Error() + "; " + d.message)
	case d.noClusters || d.unplaced > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonUnschedulable
	}
	return c
}

// decide selects clusters and divides replicas. The error is ErrUnsatisfiable from placement
// (the decision is then the best effort), or an invalid placement or request.
func (s *Scheduler) decide(fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster, key federation.Key) (decision, error) {
	p := fed.Spec.Placement
	if rsp != nil && !rsp.Spec.IntersectWithClusterSelector {
		// KubeFed: the preference, not the object's membership rules, says which clusters.
		p.Clusters, p.ClusterSelector = nil, &metav1.LabelSelector{}
	}
	if rsp != nil {
		clusters = withPreference(clusters, rsp.Spec.Clusters)
	}
	pd, placeErr := placement.Evaluate(p, clusters)
	if placeErr != nil && !errors.Is(placeErr, placement.ErrUnsatisfiable) {
		return decision{}, placeErr
	}
	byName := make(map[string]*federation.Cluster, len(clusters))
	for i := range clusters {
		byName[clusters[i].Name] = &clusters[i]
	}

	spread, topologyKey := SpreadFor(p)
	states := make([]ClusterState, 0, len(pd.Selected))
	perReplica, err := PodRequests(fed.Spec.Template.Object)
	if err != nil {
		return decision{}, err
	}
	current := currentReplicas(fed)
	for _, c := range pd.Selected {
		cl := byName[c.Name]
		st := NewClusterState(cl, topologyKey)
		if n, ok := current[c.Name]; ok {
			st.Current = &n
		}
		st.Capacity = ReplicaCapacity(cl, perReplica)
		states = append(states, st)
	}

	var req Request
	if rsp != nil {
		req, err = RequestFor(key, rsp, states)
		if err != nil {
			return decision{}, err
		}
		req.Spread = spread
	} else {
		req = Request{Key: key.String(), TotalReplicas: templateReplicas(fed, s.typ), Clusters: states, Strategy: Duplicated}
	}
	plan, err := Divide(req)
	if err != nil {
		return decision{}, err
	}
	d := decision{placement: pd, plan: plan, schedule: plan.Schedule(), unplaced: plan.Unplaced, noClusters: len(states) == 0}
	if !s.typ.Divisible() {
		for i := range d.schedule.Clusters {
			d.schedule.Clusters[i].Replicas = 0
		}
	}
	d.message = message(plan, pd, s.typ.Divisible())
	return d, placeErr
}

// withPreference keeps the clusters a preference covers: its own entry or "*".
func withPreference(clusters []federation.Cluster, prefs map[string]federation.ClusterPreferences) []federation.Cluster {
	if len(prefs) == 0 {
		return clusters
	}
	if _, ok := prefs[federation.WildcardCluster]; ok {
		return clusters
	}
	out := make([]federation.Cluster, 0, len(prefs))
	for _, c := range clusters {
		if _, ok := prefs[c.Name]; ok {
			out = append(out, c)
		}
	}
	return out
}

// currentReplicas returns the replicas running per cluster: the status loop's fresh
// observation, else the previous schedule.
func currentReplicas(fed *federation.FederatedObject) map[string]int64 {
	out := map[string]int64{}
	if fed.Status.Schedule != nil {
		for _, c := range fed.Status.Schedule.Clusters {
			out[c.Name] = c.Replicas
		}
	}
	for _, c := range fed.Status.Clusters {
		if c.Replicas != nil && !c.Stale {
			out[c.Name] = *c.Replicas
		}
	}
	return out
}

// templateReplicas is the template's replica count (1 when unset, the API default), or 0 for
// types that are not divisible.
func templateReplicas(fed *federation.FederatedObject, typ federation.TypeConfig) int64 {
	if !typ.Divisible() {
		return 0
	}
	v, ok, err := unstructured.NestedFieldNoCopy(fed.Spec.Template.Object, typ.ReplicasFields()...)
	if n, isInt := v.(int64); err == nil && ok && isInt && n >= 0 {
		return n
	}
	return 1
}

// message is the Scheduled condition's message: the plan's summary and why clusters were left
// out.
func message(plan Plan, pd placement.Decision, divisible bool) string {
	var b strings.Builder
	if divisible {
		b.WriteString(plan.Summary())
	} else {
		fmt.Fprintf(&b, "placed in %d cluster(s): %s", len(pd.Selected), strings.Join(pd.Names(), ", "))
	}
	if len(pd.Excluded) > 0 || len(pd.Unknown) > 0 {
		b.WriteString("; ")
		b.WriteString(pd.Summary())
	}
	return b.String()
}

func fieldDecodeError(err error) field.ErrorList {
	return field.ErrorList{field.Invalid(specPath, "", err.Error())}
}
