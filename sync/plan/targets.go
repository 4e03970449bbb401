package plan

import (
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// Targets is where a federated object goes: the clusters and their replicas.
type Targets struct {
	// Replicas per placed cluster: the scheduled count, or nil to keep the template's.
	Replicas map[string]*int64
	// Order is the placed clusters in placement order.
	Order []string
	// NotReady are clusters the object would be placed in, or that status.clusters lists
	// (sync propagated there before), whose Ready condition is not True: sync neither writes
	// nor deletes there, and reports them ClusterNotReady.
	NotReady []string
	// Unplaced are the clusters of NotReady that are there only because status.clusters
	// lists them, or because the scheduler's eviction of all their replicas keeps their copy
	// until they are back: no longer placed, but what sync put there may still run.
	Unplaced []string
	// Scheduled reports whether the targets come from the scheduler's status.schedule.
	Scheduled bool
	// Unsatisfiable is placement's ErrUnsatisfiable message, when the selection is a best
	// effort.
	Unsatisfiable string
}

// TargetsFor decides where a federated object goes. When the scheduler has written a
// schedule for the object's current generation (its Scheduled condition observed it), the
// schedule's clusters and replica counts are used; otherwise spec.placement is evaluated over
// the clusters and the template's replica count is kept. Clusters that placement leaves out
// only because they are not ready are listed in NotReady, and so are the clusters of
// status.clusters that are not ready and no longer placed: the object sync put there may
// still run, and nothing can be removed until the cluster is back (a preference that sets the
// placement aside, then a partition that makes the scheduler drop the cluster, would
// otherwise make it vanish from the status while its object runs on). An invalid placement is
// an error wrapping placement.ErrInvalidPlacement.
//
// A NoSchedule taint refuses new placements only: a cluster of status.clusters stays placed
// under one (see placement.Place); when it is the not-ready taint, the cluster is in NotReady.
// A toleration with tolerationSeconds holds a NoExecute-tainted cluster until the taint's
// timeAdded plus those seconds, counted at now (placement.Options.Now); a zero now does not
// count them. [Decide] calls it at Input.Now.
func TargetsFor(obj *federation.FederatedObject, typ federation.TypeConfig, clusters []federation.Cluster, now time.Time) (Targets, error) {
	t := Targets{Replicas: map[string]*int64{}}
	// A Cluster being deleted is leaving the federation: nothing is placed there any more.
	leaving := map[string]bool{}
	for i := range clusters {
		if clusters[i].DeletionTimestamp != nil {
			leaving[clusters[i].Name] = true
		}
	}
	if len(leaving) > 0 {
		clusters = slices.DeleteFunc(slices.Clone(clusters), func(c federation.Cluster) bool { return leaving[c.Name] })
	}
	running := make([]string, 0, len(obj.Status.Clusters))
	for _, c := range obj.Status.Clusters {
		running = append(running, c.Name)
	}
	pin := placement.Input{Placement: obj.Spec.Placement, Clusters: clusters, Running: running, Now: now}
	d, err := placement.Place(pin)
	switch {
	case errors.Is(err, placement.ErrUnsatisfiable):
		t.Unsatisfiable = err.Error()
	case err != nil:
		return Targets{}, err
	}
	// The clusters the dependencies loop says the object's dependent workloads run in.
	d.Require(federation.RequiredClusters(obj.Annotations), pin)
	for _, x := range d.Excluded {
		if x.Rule == placement.NotReady {
			t.NotReady = append(t.NotReady, x.Cluster)
		}
	}
	for _, x := range d.Kept {
		if x.Rule == placement.NotReady && x.Until.IsZero() {
			// Kept only because it runs there, under the untolerated not-ready taint: placed,
			// not ready, as when placement left it out for it.
			t.NotReady = append(t.NotReady, x.Cluster)
		}
	}
	ready := readyClusters(clusters)
	if s := currentSchedule(obj); s != nil {
		return scheduledTargets(obj, typ, s, t, ready, leaving), nil
	}
	for _, c := range d.Selected {
		if slices.Contains(t.NotReady, c.Name) {
			continue // kept under the not-ready taint (above)
		}
		t.Order = append(t.Order, c.Name)
		t.Replicas[c.Name] = nil
	}
	t.Unplaced = unreachablePrevious(obj, t, ready, leaving)
	t.NotReady = append(t.NotReady, t.Unplaced...)
	return t, nil
}

// scheduledTargets are the targets of the scheduler's schedule s: its clusters that are
// ready, with their replica counts for a divisible type; those that are not ready are in
// NotReady, and Unplaced when the schedule lists them only for an eviction of all their
// replicas. t holds what placement said of the clusters that are not ready.
func scheduledTargets(obj *federation.FederatedObject, typ federation.TypeConfig, s *federation.Schedule, t Targets, ready, leaving map[string]bool) Targets {
	t.Scheduled = true
	for _, c := range s.Clusters {
		if leaving[c.Name] {
			continue
		}
		if !ready[c.Name] {
			placed := slices.Contains(t.NotReady, c.Name) // left out by placement only for not being ready
			if !placed {
				t.NotReady = append(t.NotReady, c.Name)
			}
			if !placed && evictedAway(s, c.Name) {
				t.Unplaced = append(t.Unplaced, c.Name)
			}
			continue
		}
		t.Order = append(t.Order, c.Name)
		if typ.Divisible() {
			n := c.Replicas
			t.Replicas[c.Name] = &n
		} else {
			t.Replicas[c.Name] = nil
		}
	}
	gone := unreachablePrevious(obj, t, ready, leaving)
	t.Unplaced = append(t.Unplaced, gone...)
	t.NotReady = append(t.NotReady, gone...)
	return t
}

// RolloutClusters are the clusters a staged rollout lays its stages over: the placed ones,
// ready or not (Order and NotReady), but not those that left the placement (Unplaced): a
// cluster that leaves the placement leaves the rollout.
func (t Targets) RolloutClusters() []string {
	out := make([]string, 0, len(t.Order)+len(t.NotReady))
	out = append(out, t.Order...)
	for _, c := range t.NotReady {
		if !slices.Contains(t.Unplaced, c) {
			out = append(out, c)
		}
	}
	return out
}

// unreachablePrevious returns the clusters of status.clusters that are known, not ready, not
// leaving, and in neither t.Order nor t.NotReady.
func unreachablePrevious(obj *federation.FederatedObject, t Targets, ready, leaving map[string]bool) []string {
	var out []string
	for _, c := range obj.Status.Clusters {
		isReady, known := ready[c.Name]
		if !known || isReady || leaving[c.Name] || slices.Contains(t.Order, c.Name) || slices.Contains(t.NotReady, c.Name) || slices.Contains(out, c.Name) {
			continue
		}
		out = append(out, c.Name)
	}
	return out
}

// evictedAway reports whether s lists cluster only for an eviction of all its replicas: the
// copy stays until the eviction ends (while the cluster is not Ready, until it is back), but
// the cluster is no longer placed.
func evictedAway(s *federation.Schedule, cluster string) bool {
	for _, e := range s.Evictions {
		if e.Cluster == cluster && e.State().Keeps() && e.Replicas == 0 {
			return true
		}
	}
	return false
}

// currentSchedule returns status.schedule when the Scheduled condition observed the object's
// generation, else nil.
func currentSchedule(obj *federation.FederatedObject) *federation.Schedule {
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled)
	if c == nil || obj.Status.Schedule == nil || c.ObservedGeneration != obj.Generation {
		return nil
	}
	return obj.Status.Schedule
}

// scheduleOutdated reports whether a scheduler has written a schedule before but not yet for
// this generation: sync then waits rather than push the template's replica count for a
// moment.
func scheduleOutdated(obj *federation.FederatedObject) bool {
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled)
	return c != nil && obj.Status.Schedule != nil && c.ObservedGeneration < obj.Generation
}

// scheduledBeforeReady reports whether the current schedule left out, as not ready, a cluster
// that is Ready now: the scheduler has yet to place it again, and until it has, the schedule's
// silence about that cluster does not mean "delete what runs there" (sync then waits).
func scheduledBeforeReady(obj *federation.FederatedObject, clusters []federation.Cluster) bool {
	s := currentSchedule(obj)
	if s == nil || len(s.NotReady) == 0 {
		return false
	}
	ready := readyClusters(clusters)
	for _, name := range s.NotReady {
		if ready[name] {
			return true
		}
	}
	return false
}

// readyClusters maps each cluster's name to whether it is Ready.
func readyClusters(clusters []federation.Cluster) map[string]bool {
	out := make(map[string]bool, len(clusters))
	for i := range clusters {
		out[clusters[i].Name] = isReady(&clusters[i])
	}
	return out
}

// isReady reports whether c's Ready condition is True.
func isReady(c *federation.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady)
}
