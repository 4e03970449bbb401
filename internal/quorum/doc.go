// Package quorum holds the two rules every loop that sums what members report applies to
// its data: freshness and quorum.
//
//	fresh := 0
//	for _, m := range members {
//		if quorum.IsFresh(m.ClusterReady, m.LastRead, now, staleAfter) {
//			fresh++
//		}
//	}
//	if !quorum.HasQuorum(fresh, len(members)) {
//		return // a partitioned minority publishes nothing
//	}
//
// Package status (rules 1 and 2 of status.Aggregate, exported there as status.IsFresh and
// status.HasQuorum) and package autoscale/recommend (the fleet's recommendation) apply them.
// They live here, pure and importing nothing, so the pure recommender does not link the
// status loop.
package quorum
