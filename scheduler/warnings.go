package scheduler

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// ReasonUnknownCluster is the Scheduled condition's reason when Options.RejectUnknownClusters
// is set and the object's placement or its preference names a cluster that no Cluster has;
// the last good schedule stays.
const ReasonUnknownCluster = "UnknownCluster"

// This file holds what the Scheduled message says beyond the plan and the placement's
// summary: the traps a user falls into without noticing, because the schedule they produce
// looks plausible. Each is KubeFed's behaviour, kept for compatibility, and said out loud.
// [Decide] finds them once, as [Decision].Warnings; the message is built from those, and a
// dry run (package preview) reports the same ones.
//
//   - A ReplicaSchedulingPreference without spec.intersectWithClusterSelector chooses among
//     every cluster: the object's spec.placement.clusters and clusterSelector are set aside.
//     When that put the object in a cluster the placement would have left out, the message
//     says so and names the clusters (WarningPlacementIgnored).
//   - A name in spec.placement.clusters, or a key of the preference's spec.clusters, that no
//     Cluster has (a typo, a cluster not joined yet) is skipped. The message warns, naming
//     the field (WarningUnknownCluster); Options.RejectUnknownClusters makes it an error
//     (unknownClusters).
//   - A spread constraint's maxSkew bounds how replicas are divided; without a
//     ReplicaSchedulingPreference nothing is divided (every selected cluster gets the
//     template's replicas), so the message says the maxSkew bounds nothing
//     (WarningSpreadIgnored). With a preference whose algorithm or strategy cannot honour
//     it, the preference is invalid instead (spreadConflict).

// Reasons of a [Warning].
const (
	// WarningUnknownCluster: spec.placement.clusters, or the preference's spec.clusters,
	// names a cluster that no Cluster has; nothing is placed there (the preference's entry
	// applies to no cluster). With Options.RejectUnknownClusters it is an error instead, with
	// the condition reason ReasonUnknownCluster.
	WarningUnknownCluster = "UnknownCluster"
	// WarningPlacementIgnored: a ReplicaSchedulingPreference without
	// spec.intersectWithClusterSelector set the object's spec.placement.clusters or
	// clusterSelector aside (KubeFed's rule), and the schedule holds clusters that rule would
	// have left out.
	WarningPlacementIgnored = "PlacementIgnored"
	// WarningSpreadIgnored: a spread constraint sets maxSkew, but no ReplicaSchedulingPreference
	// divides the object's replicas (every selected cluster gets the template's), so maxSkew
	// bounds nothing. Its minGroups and maxGroups still choose the clusters.
	WarningSpreadIgnored = "SpreadIgnored"
)

// Warning is something a decision went ahead with although it probably does not do what
// its author meant: the schedule is written, and the Scheduled message says it (a "warning:"
// or, for WarningPlacementIgnored, a "note:"). It is plain data.
type Warning struct {
	// Reason is WarningUnknownCluster, WarningPlacementIgnored or WarningSpreadIgnored.
	Reason string
	// Kind is the kind of the object whose field it is about: the federated kind, or
	// ReplicaSchedulingPreference (same namespace and name).
	Kind string
	// Field is the field path in that object: spec.placement.clusters,
	// spec.placement.clusterSelector, spec.placement.spreadConstraints[i].maxSkew, or the
	// preference's spec.clusters.
	Field string
	// Clusters are the clusters concerned: the names no Cluster has (in the field's order;
	// the preference's sorted), or the scheduled clusters the set-aside rule would have left
	// out (in the schedule's order); none for WarningSpreadIgnored.
	Clusters []string
	// Message says what the field does and what follows, without the field:
	// names no Cluster "gpc" (a typo, or a cluster not joined yet?): nothing is placed there.
	Message string
}

// String is the warning as the Scheduled message says it:
// warning: the ReplicaSchedulingPreference's spec.clusters names no Cluster "azuer" (...): ...
func (w Warning) String() string {
	label, subject := "warning", w.Field
	if w.Reason == WarningPlacementIgnored {
		label = "note"
	}
	if w.Kind == preferenceKind {
		subject = "the ReplicaSchedulingPreference's " + w.Field
	}
	return label + ": " + subject + " " + w.Message
}

// preferenceKind is the kind a Warning names for a field of the preference.
const preferenceKind = "ReplicaSchedulingPreference"

// warnings returns what to warn about, for the object fed of the given kind, its preference
// rsp (or nil), every Cluster on the host, and the placement decision pd that was made.
func warnings(kind string, fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster, pd placement.Decision) []Warning {
	var out []Warning
	for _, u := range unknownClusters(fed, rsp, clusters) {
		k := kind
		if u.kind != "" {
			k = u.kind
		}
		out = append(out, Warning{Reason: WarningUnknownCluster, Kind: k, Field: u.field, Clusters: u.names,
			Message: fmt.Sprintf("names no Cluster %s (a typo, or a cluster not joined yet?): %s", quoted(u.names), u.effect)})
	}
	if f, left := ignoredMembership(fed.Spec.Placement, rsp, clusters, pd.Selected); len(left) > 0 {
		out = append(out, Warning{Reason: WarningPlacementIgnored, Kind: kind, Field: "spec.placement." + f, Clusters: left,
			Message: fmt.Sprintf("was ignored (it would leave out %s): a ReplicaSchedulingPreference chooses among every cluster unless its spec.intersectWithClusterSelector is true (KubeFed's rule)",
				strings.Join(left, ", "))})
	}
	if rs := pd.ReplicaSpread; rs != nil && rsp == nil {
		out = append(out, Warning{Reason: WarningSpreadIgnored, Kind: kind, Field: fmt.Sprintf("spec.placement.spreadConstraints[%d].maxSkew", rs.Constraint),
			Message: "bounds nothing: without a ReplicaSchedulingPreference no replicas are divided (every selected cluster gets the template's)"})
	}
	return out
}

// notes is the warnings as the Scheduled message's tail: "; warning: ...; note: ..."
// ("" when there is nothing to say).
func notes(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("; ")
		b.WriteString(w.String())
	}
	return b.String()
}

// unknown is a field of the object or its preference that names clusters no Cluster has.
type unknown struct {
	kind   string // "" for the object's own field, or ReplicaSchedulingPreference
	field  string // spec.placement.clusters, or the preference's spec.clusters
	names  []string
	paths  []*field.Path // one per name
	effect string
}

// unknownClusters returns the names in spec.placement.clusters, then those among the keys of
// the preference's spec.clusters ("*" aside), that no Cluster has, in their order there (the
// preference's sorted).
func unknownClusters(fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster) []unknown {
	known := make(map[string]bool, len(clusters))
	for i := range clusters {
		known[clusters[i].Name] = true
	}
	var out []unknown
	p := unknown{field: "spec.placement.clusters", effect: "nothing is placed there"}
	for i, c := range fed.Spec.Placement.Clusters {
		if !known[c.Name] && !slices.Contains(p.names, c.Name) {
			p.names = append(p.names, c.Name)
			p.paths = append(p.paths, specPath.Child("placement", "clusters").Index(i).Child("name"))
		}
	}
	if len(p.names) > 0 {
		out = append(out, p)
	}
	if rsp == nil {
		return out
	}
	r := unknown{kind: preferenceKind, field: "spec.clusters", effect: "its preferences apply to no cluster"}
	for name := range rsp.Spec.Clusters {
		if name != federation.WildcardCluster && !known[name] {
			r.names = append(r.names, name)
		}
	}
	slices.Sort(r.names)
	for _, name := range r.names {
		r.paths = append(r.paths, specPath.Child("clusters").Key(name))
	}
	if len(r.names) > 0 {
		out = append(out, r)
	}
	return out
}

// unknownClustersError is the error Reconcile records and returns when
// Options.RejectUnknownClusters is set: one *federation.InvalidError per object at fault
// (the federated object, its preference), each field error naming the path and the cluster.
func unknownClustersError(kind string, key federation.Key, fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster) error {
	var errs []error
	for _, u := range unknownClusters(fed, rsp, clusters) {
		list := make(field.ErrorList, len(u.names))
		for i, name := range u.names {
			list[i] = field.NotFound(u.paths[i], name)
			list[i].Detail = "no such Cluster"
		}
		k := kind
		if u.kind != "" {
			k = u.kind
		}
		errs = append(errs, federation.NewInvalidError(k, key, list))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%w; %w", errs[0], errs[1])
}

// ignoredMembership returns, when rsp set the object's membership rules aside (it has no
// intersectWithClusterSelector and the placement has clusters or a clusterSelector), the
// selected clusters those rules would have left out, and which rule it is ("clusters" or
// "clusterSelector"). Only membership is checked: the placement's other rules applied to the
// decision anyway.
func ignoredMembership(p federation.Placement, rsp *federation.ReplicaSchedulingPreference, clusters []federation.Cluster, selected []placement.Candidate) (string, []string) {
	if rsp == nil || rsp.Spec.IntersectWithClusterSelector || len(selected) == 0 {
		return "", nil
	}
	rule, name := placement.ClusterSelector, "clusterSelector"
	switch {
	case p.Clusters != nil:
		rule, name = placement.NotListed, "clusters"
	case p.ClusterSelector == nil:
		return "", nil // no membership rule: the preference alone was meant to choose
	}
	chosen := make(map[string]bool, len(selected))
	for _, c := range selected {
		chosen[c.Name] = true
	}
	var among []federation.Cluster
	for _, c := range clusters {
		if chosen[c.Name] {
			among = append(among, c)
		}
	}
	// Membership alone: every taint tolerated, so readiness and taints cannot be the reason.
	only := federation.Placement{Clusters: p.Clusters, ClusterSelector: p.ClusterSelector,
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}
	d, err := placement.Evaluate(only, among)
	if err != nil {
		return "", nil // the placement was validated before; nothing sensible to add
	}
	var left []string
	for _, c := range selected {
		if why, ok := d.Why(c.Name); ok && why.Rule == rule {
			left = append(left, c.Name)
		}
	}
	return name, left
}

// quoted returns names as "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
