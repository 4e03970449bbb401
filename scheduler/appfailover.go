package scheduler

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// appFailover is what application failover decided for one object: the clusters it leaves
// out (placement.ApplicationFailure), the clusters avoided from now on, when to look again,
// and a note for the message when it held back.
type appFailover struct {
	out     []placement.Diagnosis
	avoided []federation.AvoidedCluster
	requeue time.Duration
	note    string
}

// decideAppFailover applies spec.placement.failover.application (or the preference's; see
// federation.EffectiveFailover) to the selected clusters at now. It is pure.
//
// A cluster is left out when the workload there has been unhealthy for toleranceSeconds:
// the Collector's status.clusters[].unhealthySince, from fresh data (a stale entry never
// counts), in a cluster whose Ready condition is True (a cluster that is not Ready is the
// cluster monitor's business). It is then avoided until now plus backoffSeconds
// (status.schedule.avoided); an avoided cluster stays out until then, and may be chosen
// again after. Application failover never leaves an object without a cluster: when no other
// selected cluster could take the replicas, the cluster stays and the note says so.
// Without application failover nothing is left out and nothing stays avoided.
func decideAppFailover(f federation.Failover, fed *federation.FederatedObject, prev *federation.Schedule, selected []placement.Candidate, clusters map[string]*federation.Cluster, now time.Time) appFailover {
	var out appFailover
	app := f.Application
	if app == nil {
		return out
	}
	tolerance := time.Duration(*app.ToleranceSeconds) * time.Second
	backoff := time.Duration(*app.BackoffSeconds) * time.Second
	isSelected := func(name string) bool {
		return slices.ContainsFunc(selected, func(c placement.Candidate) bool { return c.Name == name })
	}
	wait := func(d time.Duration) {
		if d > 0 && (out.requeue == 0 || d < out.requeue) {
			out.requeue = d
		}
	}
	leaving := map[string]placement.Diagnosis{}
	var avoided []federation.AvoidedCluster
	if prev != nil {
		for _, a := range prev.Avoided {
			if !now.Before(a.Until.Time) {
				continue // the back-off ended: it may be chosen again
			}
			avoided = append(avoided, a)
			if isSelected(a.Cluster) {
				leaving[a.Cluster] = placement.Diagnosis{Cluster: a.Cluster, Rule: placement.ApplicationFailure, Until: a.Until.Time,
					Detail: "avoided after an application failover until " + stamp(a.Until.Time)}
			}
			wait(a.Until.Sub(now))
		}
	}
	for _, m := range fed.Status.Clusters {
		c := clusters[m.Name]
		if m.UnhealthySince == nil || m.Stale || c == nil || !isSelected(m.Name) || leaving[m.Name].Cluster != "" ||
			!meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			continue
		}
		if left := m.UnhealthySince.Add(tolerance).Sub(now); left > 0 {
			wait(left)
			continue
		}
		until := now.Add(backoff).Truncate(time.Second)
		leaving[m.Name] = placement.Diagnosis{Cluster: m.Name, Rule: placement.ApplicationFailure, Until: until,
			Detail: fmt.Sprintf("the workload is unhealthy there since %s, longer than toleranceSeconds (%ds); avoided until %s",
				stamp(m.UnhealthySince.Time), *app.ToleranceSeconds, stamp(until))}
		avoided = append(avoided, federation.AvoidedCluster{Cluster: m.Name, Reason: federation.EvictionApplication, Until: metav1.NewTime(until)})
		wait(backoff)
	}
	if len(leaving) == 0 {
		out.avoided = avoided
		return out
	}
	if len(leaving) >= len(selected) {
		// Never into nothing: the replicas stay where they are.
		names := make([]string, 0, len(leaving))
		for name := range leaving {
			names = append(names, name)
		}
		slices.Sort(names)
		out.note = fmt.Sprintf("application failover would leave out %v, but no other cluster could take its replicas", names)
		// Only the back-offs already running stay, and only they ask to look again.
		out.requeue = 0
		for _, a := range avoided {
			if prev != nil && slices.Contains(prev.Avoided, a) {
				out.avoided = append(out.avoided, a)
				wait(a.Until.Sub(now))
			}
		}
		return out
	}
	for _, c := range selected {
		if x, ok := leaving[c.Name]; ok {
			out.out = append(out.out, x)
		}
	}
	out.avoided = avoided
	return out
}

// stamp formats a time for a message.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
