package quorum

import "time"

// IsFresh reports whether data read at lastRead from a cluster whose Ready condition is
// clusterReady is fresh at now: the cluster is Ready and the read is at most staleAfter
// old. A zero lastRead (never read) is stale.
func IsFresh(clusterReady bool, lastRead, now time.Time, staleAfter time.Duration) bool {
	return clusterReady && !lastRead.IsZero() && now.Sub(lastRead) <= staleAfter
}

// HasQuorum reports whether fresh clusters are a quorum of the placed ones: more than half.
// Numbers built from a partitioned minority are never published.
func HasQuorum(fresh, placed int) bool {
	return placed > 0 && 2*fresh > placed
}
