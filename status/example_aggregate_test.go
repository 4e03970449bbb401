package status_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// The quorum rule: status.aggregated sums the clusters with fresh data, and only while they
// are a majority of the placed clusters; without a majority the last good sums stay, and
// staleClusters still counts the stale clusters. A cluster whose Cluster is not Ready, or that has not
// been read for StaleAfter, is stale: its last values stay visible but never count.
func ExampleAggregate() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ready := func(n int64) *status.Observation {
		return &status.Observation{Replicas: &n, ReadyReplicas: &n, AvailableReplicas: &n, UpdatedReplicas: &n, Ready: true, Revision: 1}
	}
	// What sync wrote: generation 1 propagated, at revision 1, to the three clusters.
	bySync := func(st *federation.FederatedStatus) *federation.FederatedStatus {
		st.ObservedGeneration, st.SyncedRevision = 1, 1
		st.Conditions = append(st.Conditions, metav1.Condition{Type: federation.ConditionPropagated,
			Status: metav1.ConditionTrue, Reason: "Propagated", ObservedGeneration: 1})
		return st
	}
	st := bySync(&federation.FederatedStatus{Clusters: []federation.MemberStatus{{Name: "eu", Revision: 1}, {Name: "us", Revision: 1}, {Name: "ap", Revision: 1}}})
	show := func(step string, members ...status.Member) {
		a := status.Aggregate(status.Input{Generation: 1, Status: st, Members: members, Now: now, StaleAfter: 90 * time.Second})
		fmt.Printf("%s: ready replicas %d from %d clusters (%d stale); Ready=%s %s\n", step,
			a.Aggregated.ReadyReplicas, a.Aggregated.Clusters, a.Aggregated.StaleClusters, a.Ready.Status, a.Ready.Reason)
		st = bySync(&federation.FederatedStatus{Clusters: a.Clusters, Aggregated: a.Aggregated})
	}
	fresh := func(o *status.Observation) status.Member {
		return status.Member{ClusterReady: true, LastRead: now, Observation: o}
	}
	partitioned := status.Member{ClusterReady: false, LastRead: now.Add(-time.Minute), Observation: ready(3)}

	show("all fresh", fresh(ready(3)), fresh(ready(3)), fresh(ready(3)))
	show("ap partitioned", fresh(ready(3)), fresh(ready(3)), partitioned)
	show("us and ap partitioned", fresh(ready(3)), partitioned, partitioned)
	now = now.Add(5 * time.Minute)
	show("healed", fresh(ready(3)), fresh(ready(4)), fresh(ready(2)))
	// Output:
	// all fresh: ready replicas 9 from 3 clusters (0 stale); Ready=True Ready
	// ap partitioned: ready replicas 6 from 2 clusters (1 stale); Ready=False StaleClusters
	// us and ap partitioned: ready replicas 6 from 2 clusters (2 stale); Ready=Unknown NoQuorum
	// healed: ready replicas 9 from 3 clusters (0 stale); Ready=True Ready
}
