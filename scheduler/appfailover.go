package scheduler

import (
	"fmt"
	"maps"
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
	if f.Application == nil {
		return appFailover{}
	}
	a := appFailoverPass{app: f.Application, selected: selected, now: now, leaving: map[string]placement.Diagnosis{}}
	a.stillAvoided(prev)
	a.unhealthy(fed.Status.Clusters, clusters)
	switch {
	case len(a.leaving) == 0:
		a.out.avoided = a.avoided
	case len(a.leaving) >= len(selected):
		a.stay(prev)
	default:
		for _, c := range selected {
			if x, ok := a.leaving[c.Name]; ok {
				a.out.out = append(a.out.out, x)
			}
		}
		a.out.avoided = a.avoided
	}
	return a.out
}

// appFailoverPass is one decideAppFailover call: its input, and what it found so far.
type appFailoverPass struct {
	app      *federation.ApplicationFailover
	selected []placement.Candidate
	now      time.Time
	leaving  map[string]placement.Diagnosis // the selected clusters that leave, and why
	avoided  []federation.AvoidedCluster
	out      appFailover
}

// isSelected reports whether placement selected cluster name.
func (a *appFailoverPass) isSelected(name string) bool {
	return slices.ContainsFunc(a.selected, func(c placement.Candidate) bool { return c.Name == name })
}

// wait asks to look again within d.
func (a *appFailoverPass) wait(d time.Duration) {
	if d > 0 && (a.out.requeue == 0 || d < a.out.requeue) {
		a.out.requeue = d
	}
}

// stillAvoided keeps the back-offs of prev that have not ended: a selected cluster among
// them leaves until then.
func (a *appFailoverPass) stillAvoided(prev *federation.Schedule) {
	if prev == nil {
		return
	}
	for _, av := range prev.Avoided {
		if !a.now.Before(av.Until.Time) {
			continue // the back-off ended: it may be chosen again
		}
		a.avoided = append(a.avoided, av)
		if a.isSelected(av.Cluster) {
			a.leaving[av.Cluster] = placement.Diagnosis{Cluster: av.Cluster, Rule: placement.ApplicationFailure, Until: av.Until.Time,
				Detail: "avoided after an application failover until " + stamp(av.Until.Time)}
		}
		a.wait(av.Until.Sub(a.now))
	}
}

// unhealthy finds the selected, Ready clusters where fresh data says the workload has been
// unhealthy for longer than toleranceSeconds: each leaves, and is avoided from now on.
func (a *appFailoverPass) unhealthy(status []federation.MemberStatus, clusters map[string]*federation.Cluster) {
	tolerance := time.Duration(*a.app.ToleranceSeconds) * time.Second
	backoff := time.Duration(*a.app.BackoffSeconds) * time.Second
	for _, m := range status {
		c := clusters[m.Name]
		if m.UnhealthySince == nil || m.Stale || c == nil || !a.isSelected(m.Name) || a.leaving[m.Name].Cluster != "" ||
			!meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			continue
		}
		if left := m.UnhealthySince.Add(tolerance).Sub(a.now); left > 0 {
			a.wait(left)
			continue
		}
		until := a.now.Add(backoff).Truncate(time.Second)
		a.leaving[m.Name] = placement.Diagnosis{Cluster: m.Name, Rule: placement.ApplicationFailure, Until: until,
			Detail: fmt.Sprintf("the workload is unhealthy there since %s, longer than toleranceSeconds (%ds); avoided until %s",
				stamp(m.UnhealthySince.Time), *a.app.ToleranceSeconds, stamp(until))}
		a.avoided = append(a.avoided, federation.AvoidedCluster{Cluster: m.Name, Reason: federation.EvictionApplication, Until: metav1.NewTime(until)})
		a.wait(backoff)
	}
}

// stay is never into nothing: when every selected cluster would leave, the replicas stay
// where they are. Only the back-offs already running stay, and only they ask to look again.
func (a *appFailoverPass) stay(prev *federation.Schedule) {
	names := slices.Sorted(maps.Keys(a.leaving))
	a.out.note = fmt.Sprintf("application failover would leave out %v, but no other cluster could take its replicas", names)
	a.out.requeue = 0
	for _, av := range a.avoided {
		if prev != nil && slices.Contains(prev.Avoided, av) {
			a.out.avoided = append(a.out.avoided, av)
			a.wait(av.Until.Sub(a.now))
		}
	}
}

// stamp formats a time for a message.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
