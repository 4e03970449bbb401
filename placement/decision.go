package placement

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Sentinel errors of [Evaluate] and [Select].
var (
	// ErrInvalidPlacement is returned when the placement itself is invalid (a duplicate
	// cluster name, a malformed selector, an unknown toleration operator...). The message
	// names each field (spec.placement.clusterSelector, ...). Retrying does not help.
	ErrInvalidPlacement = errors.New("placement: invalid placement")

	// ErrDuplicateCluster is returned when the clusters passed in hold two Clusters of the
	// same name.
	ErrDuplicateCluster = errors.New("placement: duplicate cluster")

	// ErrUnsatisfiable is returned when no selection of the eligible clusters meets every
	// spread constraint's minGroups (too few groups, maxClusters too small to cover them, a
	// maxGroups in the way), or the bounded search for one gave up (its message then says
	// so). The Decision that comes with it is the best effort, for diagnosis.
	ErrUnsatisfiable = errors.New("placement: unsatisfiable")
)

// Rule is the placement rule that left a cluster out.
type Rule uint8

const (
	// NotListed: spec.placement.clusters is present and does not name the cluster.
	NotListed Rule = iota + 1
	// ClusterSelector: spec.placement.clusters is absent and the selector does not match the
	// cluster's labels (or there is no selector, which selects nothing).
	ClusterSelector
	// ExcludeClusters: the cluster is in spec.placement.excludeClusters.
	ExcludeClusters
	// RequiredAffinity: the cluster's region or zones do not match
	// spec.placement.clusterAffinity.required.
	RequiredAffinity
	// NotReady: the cluster's not-ready or unreachable taint (set by the cluster monitor,
	// or implied by a Ready condition that is not True) is not tolerated.
	NotReady
	// Taint: a NoSchedule or NoExecute taint of the cluster is not tolerated.
	Taint
	// Spread: a spread constraint left the cluster out (no value for its topology key, or
	// its group beyond maxGroups).
	Spread
	// MaxClusters: more clusters were eligible than maxClusters allows, and this one ranked
	// lower.
	MaxClusters
	// Preference: the object's ReplicaSchedulingPreference has no entry for the cluster
	// (neither its name nor "*"), so it cannot get replicas. Evaluate never returns it: the
	// scheduler loop filters the clusters by the preference before it calls Evaluate, and
	// records those it filtered with [Decision.Exclude].
	Preference
	// ApplicationFailure: the workload has been unhealthy in the cluster (a Ready one) for
	// longer than its application failover tolerates, or the cluster is in its back-off
	// (status.schedule.avoided). Evaluate never returns it: the scheduler records it with
	// [Decision.Exclude].
	ApplicationFailure
)

// String returns the rule's name, as used in condition messages.
func (r Rule) String() string {
	switch r {
	case NotListed:
		return "NotListed"
	case ClusterSelector:
		return "ClusterSelector"
	case ExcludeClusters:
		return "ExcludeClusters"
	case RequiredAffinity:
		return "RequiredAffinity"
	case NotReady:
		return "NotReady"
	case Taint:
		return "Taint"
	case Spread:
		return "Spread"
	case MaxClusters:
		return "MaxClusters"
	case Preference:
		return "Preference"
	case ApplicationFailure:
		return "ApplicationFailure"
	}
	return fmt.Sprintf("Rule(%d)", int(r))
}

// Diagnosis says why one cluster was left out: the first rule it failed, and the value that
// failed it.
type Diagnosis struct {
	// Cluster is the cluster's name.
	Cluster string
	// Rule is the rule that left it out.
	Rule Rule
	// Detail names the value, e.g. `taint gpu=true:NoSchedule not tolerated`.
	Detail string
	// Until is, for a cluster of [Decision.Kept], when its tolerationSeconds ends; zero when
	// it stays as long as the object runs there (NoSchedule). For [ApplicationFailure], when
	// the back-off ends. Zero otherwise.
	Until time.Time
}

// String returns "cluster: Rule: detail".
func (d Diagnosis) String() string {
	return fmt.Sprintf("%s: %s: %s", d.Cluster, d.Rule, d.Detail)
}

// Candidate is a selected cluster with what ranked it.
type Candidate struct {
	// Name is the cluster's name.
	Name string
	// Score is the sum of the weights of the preferred affinity terms the cluster matches.
	Score int64
	// Avoid counts the cluster's PreferNoSchedule taints that the placement does not
	// tolerate.
	Avoid int
	// Domain is the cluster's group for the topology key of Decision.ReplicaSpread (see
	// [Domain]), and "" when the decision has no ReplicaSpread.
	Domain string
}

// Decision is the full answer of [Evaluate]: the selected clusters in order, and a
// Diagnosis for every cluster left out.
type Decision struct {
	// Selected are the chosen clusters in rank order: fewer untolerated PreferNoSchedule
	// taints first, then higher preferred-affinity score, then name ascending.
	Selected []Candidate

	// Excluded has a Diagnosis for every other cluster, sorted by cluster name.
	Excluded []Diagnosis

	// Unknown lists names in spec.placement.clusters that are not among the clusters given,
	// in their order there. They are dropped, as in KubeFed.
	Unknown []string

	// Kept are the selected clusters that stay only for a while or only because the object
	// runs there: an untolerated NoSchedule taint (no new placements), or a NoExecute taint
	// tolerated with tolerationSeconds. Each says which taint, and until when. Sorted by
	// cluster name.
	Kept []Diagnosis

	// Recheck is the earliest end of a tolerationSeconds among the selected clusters: the
	// decision changes then without any other change. Zero: none.
	Recheck time.Time

	// ReplicaSpread is the spread constraint the division of replicas must honour, or nil
	// when no constraint sets maxSkew. The selected candidates' Domain holds their groups.
	ReplicaSpread *ReplicaSpread
}

// ReplicaSpread is the replica half of a placement's spread constraints: the constraint that
// sets maxSkew (federation validation allows one), whose groups placement has already assigned
// to the selected clusters ([Candidate].Domain). Placement owns spread constraints: it picks
// the groups and says what the replicas must honour; package scheduler divides replicas over
// the groups it is given and never reads spread constraints itself.
type ReplicaSpread struct {
	// Constraint is the constraint's index in spec.placement.spreadConstraints.
	Constraint int
	// TopologyKey is the constraint's topology key.
	TopologyKey string
	// MinGroups is how many groups should get at least one replica (its minGroups).
	MinGroups int32
	// MaxSkew bounds how far one group's replicas may exceed an even share (its maxSkew).
	MaxSkew int64
}

// Exclude records clusters that the caller left out before Evaluate (the scheduler loop, for
// the clusters its ReplicaSchedulingPreference does not cover): each Diagnosis joins Excluded,
// which stays sorted by cluster name, and its cluster leaves Unknown, where Evaluate put it if
// spec.placement.clusters names it (it exists; it was filtered, not unknown).
func (d *Decision) Exclude(diags ...Diagnosis) {
	if len(diags) == 0 {
		return
	}
	gone := make(map[string]bool, len(diags))
	for _, x := range diags {
		gone[x.Cluster] = true
	}
	d.Unknown = slices.DeleteFunc(d.Unknown, func(name string) bool { return gone[name] })
	if len(d.Unknown) == 0 {
		d.Unknown = nil
	}
	d.Excluded = append(d.Excluded, diags...)
	sort.Slice(d.Excluded, func(i, j int) bool { return d.Excluded[i].Cluster < d.Excluded[j].Cluster })
}

// Names returns the selected clusters' names, in rank order.
func (d Decision) Names() []string {
	names := make([]string, len(d.Selected))
	for i := range d.Selected {
		names[i] = d.Selected[i].Name
	}
	return names
}

// Why answers "why not cluster X": the Diagnosis of a cluster that was left out, and false
// when the cluster was selected or unknown.
func (d Decision) Why(cluster string) (Diagnosis, bool) {
	i := sort.Search(len(d.Excluded), func(i int) bool { return d.Excluded[i].Cluster >= cluster })
	if i < len(d.Excluded) && d.Excluded[i].Cluster == cluster {
		return d.Excluded[i], true
	}
	return Diagnosis{}, false
}

// summaryExcluded is how many exclusions Summary spells out before "and N more".
const summaryExcluded = 3

// Summary is one line for a condition message, e.g.
// "2 of 4 clusters selected (eu, us); left out: ap: Taint: taint gpu=true:NoSchedule not
// tolerated; sa: NotReady: ...", then the clusters kept (see [Decision.Kept]).
func (d Decision) Summary() string {
	var b strings.Builder
	total := len(d.Selected) + len(d.Excluded)
	fmt.Fprintf(&b, "%d of %d clusters selected", len(d.Selected), total)
	if len(d.Selected) > 0 && len(d.Selected) <= summaryExcluded {
		fmt.Fprintf(&b, " (%s)", strings.Join(d.Names(), ", "))
	}
	summarize(&b, "left out", d.Excluded)
	summarize(&b, "kept", d.Kept)
	if len(d.Unknown) > 0 {
		fmt.Fprintf(&b, "; unknown: %s", strings.Join(d.Unknown, ", "))
	}
	return b.String()
}

// summarize writes "; label: " and the first summaryExcluded of diags, then "; and N more"
// for the rest; nothing when diags is empty.
func summarize(b *strings.Builder, label string, diags []Diagnosis) {
	if len(diags) == 0 {
		return
	}
	parts := make([]string, 0, summaryExcluded)
	for _, x := range diags[:min(len(diags), summaryExcluded)] {
		parts = append(parts, x.String())
	}
	b.WriteString("; " + label + ": " + strings.Join(parts, "; "))
	if n := len(diags) - len(parts); n > 0 {
		fmt.Fprintf(b, "; and %d more", n)
	}
}
