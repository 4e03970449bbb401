package status

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// Reasons of a federated object's Ready condition about propagation, written by the Collector.
const (
	// ReasonWaitingForPropagation: sync has not passed over the object's generation yet
	// (Ready is Unknown).
	ReasonWaitingForPropagation = "WaitingForPropagation"
	// ReasonNotPropagated: sync passed over the generation, but some placed clusters do not
	// run its revision (Ready is False).
	ReasonNotPropagated = "NotPropagated"
)

// propagation is what sync's fields say about generation N reaching the members.
type propagation struct {
	// waiting: sync has not written status for generation N yet; observed is the generation
	// it last wrote status for.
	waiting  bool
	observed int64
	// problems name what keeps generation N's revision from running everywhere.
	problems []string
}

// propagation reads sync's fields (status.observedGeneration, the Propagated condition,
// status.syncedRevision, status.rollout and each entry's propagation and revision) to judge
// whether generation runs in every placed cluster. It is pure; st is in.Status or its empty
// stand-in.
func (in *Input) propagation(st *federation.FederatedStatus) propagation {
	generation := in.Generation
	cond := meta.FindStatusCondition(st.Conditions, federation.ConditionPropagated)
	if st.ObservedGeneration < generation || cond == nil || cond.ObservedGeneration < generation {
		return propagation{waiting: true, observed: st.ObservedGeneration}
	}
	var p propagation
	blamed := false
	for i := range st.Clusters {
		if e := &st.Clusters[i]; e.Propagation != "" {
			p.problems = append(p.problems, joinNonEmpty(": ", e.Name, e.Propagation, e.Message))
			blamed = true
		}
	}
	if cond.Status != metav1.ConditionTrue && !blamed {
		p.problems = append(p.problems, fmt.Sprintf("Propagated is %s (%s): %s", cond.Status, cond.Reason, cond.Message))
	}
	// The revision of generation N: the rollout's, else the newest one sync synced or
	// rendered for a cluster without a propagation reason (revision numbers only grow; a
	// cluster that refused N keeps its older one, and is named above).
	target := st.SyncedRevision
	for i := range st.Clusters {
		if e := &st.Clusters[i]; e.Propagation == "" && e.Revision > target {
			target = e.Revision
		}
	}
	if r := st.Rollout; r != nil && r.Revision > 0 {
		target = r.Revision
		if r.Phase != federation.RolloutComplete {
			where := ""
			if r.Stages > 0 {
				where = fmt.Sprintf(" at stage %d of %d", r.Stage, r.Stages)
				if r.StageName != "" {
					where += " (" + r.StageName + ")"
				}
			}
			p.problems = append(p.problems, fmt.Sprintf("the rollout of revision %d is %s%s", r.Revision, cmpOr(r.Phase, "not complete"), where))
		}
	}
	if target <= 0 {
		return p
	}
	for i := range st.Clusters {
		// Sync writes an entry without a reason only once the member holds what it rendered,
		// so the entry's revision is what the member runs. The member's own revision
		// annotation is not compared: after a rollback sync leaves the members whose content
		// the restored revision keeps as they are, with the older number.
		if e := &st.Clusters[i]; e.Propagation == "" && e.Revision != 0 && e.Revision != target {
			p.problems = append(p.problems, fmt.Sprintf("%s: sync rendered revision %d, not %d", e.Name, e.Revision, target))
		}
	}
	return p
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
