package plan

import (
	"slices"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
)

// GateWrite is the [gate.Write] of ch, a change of d, with the evidence Decide decided it on:
// what the driver sends through the gate, and what preview checks. ok is false for a change
// the gate has nothing to say about (a create or an update of what the federation manages,
// but for a Secret's: see gate.InvariantSecretPlacement).
func GateWrite(in Input, d Decision, ch Change) (w gate.Write, ok bool) {
	w = gate.Write{Cluster: ch.Cluster, Resource: in.Type.TargetGVR(), Object: ch.Live}
	switch {
	case ch.Action == ActionDelete:
		w.Verb = gate.Delete
	case ch.Action == ActionOrphan:
		w.Verb = gate.Orphan
	case ch.Action == ActionUpdate && ch.Live != nil && !managedBy(ch.Live, identityOr(in.Identity)):
		w.Verb = gate.Adopt
	case (ch.Action == ActionCreate || ch.Action == ActionUpdate) && isSecret(in.Type):
		w.Verb, w.Object = gate.Place, ch.Desired
	default:
		return gate.Write{}, false
	}
	w.Evidence = evidence(in, d, ch)
	return w, true
}

// evidence is what Decide knew of ch's cluster and object when it decided ch.
func evidence(in Input, d Decision, ch Change) gate.Evidence {
	e := gate.Evidence{
		Mark:         gate.ManagedBy(in.Identity),
		Adopted:      ch.Live != nil && mayAdopt(in, ch.Live),
		OwnerDeleted: in.Object.DeletionTimestamp != nil || (leaving(in, ch.Cluster) && in.DeleteFromLeavingClusters),
		RemovalAsked: in.Object.Annotations[federation.ClaimRemovalAnnotation] == federation.ClaimRemovalDelete,
		Unplaced:     !slices.ContainsFunc(d.Changes, func(c Change) bool { return c.Placed }),
		Replacement:  replacement(in, d, ch.Cluster),
		Placed:       ch.Placed,
	}
	if ns := in.Members[ch.Cluster].Namespace; ns != nil {
		e.NamespaceEmpty = ns.Err == nil && !ns.Host && ns.InUse == ""
	}
	return e
}

// leaving reports whether cluster is leaving the federation (its Cluster is being deleted).
func leaving(in Input, cluster string) bool {
	for i := range in.Clusters {
		if in.Clusters[i].Name == cluster {
			return in.Clusters[i].DeletionTimestamp != nil
		}
	}
	return false
}

// replacement names a cluster other than cluster where the object is placed and, as the
// status collector last saw it, runs available replicas (or is ready); "" when none.
func replacement(in Input, d Decision, cluster string) string {
	for _, ch := range d.Changes {
		if ch.Cluster == cluster || !ch.Placed {
			continue
		}
		for _, e := range in.Object.Status.Clusters {
			if e.Name == ch.Cluster && ((e.AvailableReplicas != nil && *e.AvailableReplicas > 0) || (e.Ready != nil && *e.Ready)) {
				return e.Name
			}
		}
	}
	return ""
}

func isSecret(typ federation.TypeConfig) bool {
	return typ.Target.Group == "" && typ.Target.Kind == "Secret"
}
