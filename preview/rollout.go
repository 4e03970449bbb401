package preview

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// Rollout is how a revision of an object with spec.rollout reaches its clusters: which
// clusters change in which stage, and what each stage waits for before the next one starts.
// The stages are sync's own (plan.RolloutStages over the clusters plan.Decide places the
// object in), so they are numbered and named as status.rollout and sync's events will name
// them.
type Rollout struct {
	// Staged reports whether sync takes the object's revision (Object.Revision) through the
	// stages. It does not for the object's first revision, nor for one whose rollout has
	// completed (sync.StableRevisionOf): every placed cluster then gets it at once, and
	// Note says so. The stages are listed all the same: the next revision goes through them.
	Staged bool `json:"staged"`
	// StableRevision is the revision the clusters keep until their stage starts, when
	// Staged.
	StableRevision int64 `json:"stableRevision,omitempty"`
	// Note says in a sentence what happens to the revision.
	Note string `json:"note"`
	// AutoRollback is spec.rollout.autoRollback: a failed rollout restores StableRevision.
	AutoRollback bool `json:"autoRollback"`
	// Paused reports that the object carries federation.RolloutPausedAnnotation "true": no
	// stage starts, the first one included, until it is removed.
	Paused bool `json:"paused"`
	// Stages in order, the implicit last one (the placed clusters no stage selects)
	// included.
	Stages []RolloutStage `json:"stages"`
	// Status is status.rollout as the object carries it (read from the host): where the
	// rollout stood when sync last wrote it. Its revision may be an older one than
	// Object.Revision, when the spec changed since.
	Status *federation.RolloutStatus `json:"status,omitempty"`
}

// RolloutStage is one stage: the clusters that move to the new revision when it starts,
// split by what that does to their member object, and its gate.
type RolloutStage struct {
	// Name is the stage's name (spec.rollout.stages[].name, "stage-<n>" by default), or
	// sync.FinalStageName for the implicit last stage.
	Name string `json:"name"`
	// Implicit marks the last stage that spec.rollout does not list: the placed clusters no
	// declared stage takes (absent when the declared stages take them all).
	Implicit bool `json:"implicit,omitempty"`
	// Clusters are the clusters whose member object the new revision changes (created, or
	// updated in owned fields: the cluster's Change). Without live objects, or for a cluster
	// that was not read, that is every placed cluster of the stage.
	Clusters []string `json:"clusters,omitempty"`
	// Unchanged are the stage's clusters whose member object already is as the new revision
	// renders it: sync only moves their revision annotation, which is how their stage is
	// seen to run the revision.
	Unchanged []string `json:"unchanged,omitempty"`
	// Blocked are the stage's clusters sync cannot bring to the new revision (their Change
	// has a Reason: ClusterNotReady, AlreadyExists, RenderFailed ...). The stage cannot
	// become ready while they are: it waits, its deadline paused, and never fails for them
	// (sync's status.rollout names them with the reason).
	Blocked []string `json:"blocked,omitempty"`
	// MinReadySeconds is how long every cluster of the stage must report the revision ready
	// before the next stage starts; ProgressDeadlineSeconds how long the stage may take to
	// get there before the rollout fails.
	MinReadySeconds         int32 `json:"minReadySeconds"`
	ProgressDeadlineSeconds int32 `json:"progressDeadlineSeconds"`
}

// rollout previews spec.rollout for a valid object from plan.Decide's decision d: its stages
// are the rollout's (d.Rollout.Stages, over the clusters sync places the object in, ready or
// not). It adds to ps the stages' names that place nothing, which sync ignores without a word.
func (r *run) rollout(fed *federation.FederatedObject, revision int64, d plan.Decision, changes map[string]plan.Change, what string, ps *problems) *Rollout {
	spec := fed.Spec.Rollout
	if spec == nil {
		return nil
	}
	placed := d.Targets.RolloutClusters()
	var stages []plan.RolloutStage
	if d.Rollout != nil {
		stages = d.Rollout.Stages
	} else {
		// Waiting for the scheduler, sync decides nothing: the stages place no cluster yet.
		var err error
		if stages, err = plan.RolloutStages(spec, placed, r.clusters); err != nil {
			ps.addError(what, err)
			return nil
		}
	}
	out := &Rollout{
		AutoRollback: spec.AutoRollback,
		Paused:       fed.GetAnnotations()[federation.RolloutPausedAnnotation] == "true",
		Status:       fed.Status.Rollout.DeepCopy(),
	}
	for i, s := range stages {
		st := RolloutStage{Name: s.Name, Implicit: i >= len(spec.Stages),
			MinReadySeconds: int32(s.MinReady / time.Second), ProgressDeadlineSeconds: int32(s.Deadline / time.Second)}
		for _, c := range s.Clusters {
			switch r.stageChange(c, changes) {
			case changed:
				st.Clusters = append(st.Clusters, c)
			case unchanged:
				st.Unchanged = append(st.Unchanged, c)
			default:
				st.Blocked = append(st.Blocked, c)
			}
		}
		out.Stages = append(out.Stages, st)
	}
	_, stable, ok := plan.StableRevisionOf(fed, revision)
	done := fed.Status.Rollout != nil && fed.Status.Rollout.Revision == revision && fed.Status.Rollout.Phase == federation.RolloutComplete
	switch {
	case len(placed) == 0:
		out.Note = "the object is placed in no cluster: nothing rolls out"
	case !ok && done:
		out.Note = fmt.Sprintf("revision %d has completed its rollout: every placed cluster runs it; the next revision goes stage by stage", revision)
	case !ok:
		out.Note = fmt.Sprintf("revision %d is the object's first: sync sends it to every placed cluster at once; the revisions after it go stage by stage", revision)
	default:
		out.Staged, out.StableRevision = true, stable
		out.Note = fmt.Sprintf("revision %d goes stage by stage; each cluster keeps revision %d until its stage starts", revision, stable)
		if out.Paused {
			out.Note += fmt.Sprintf(" (%s holds the next stage)", federation.RolloutPausedAnnotation)
		}
	}
	ps.add(stageWarnings(spec, stages, placed, what)...)
	return out
}

// lot is what starting a stage does to one of its clusters' member object.
type lot int

const (
	changed lot = iota
	unchanged
	blocked
)

// stageChange classifies a cluster of a stage by its Change, the decision plan.Decide took for
// the new revision there.
func (r *run) stageChange(cluster string, changes map[string]plan.Change) lot {
	ch, ok := changes[cluster]
	_, read := r.in.Live[cluster]
	switch {
	case ok && ch.Reason != "":
		return blocked
	case !ok || ch.Action == plan.ActionCreate || ch.Action == plan.ActionUpdate:
		return changed
	case r.in.Live != nil && !read:
		return changed // not read: it may change, as without live objects
	}
	return unchanged
}

// stageWarnings points out stages that do not do what they seem to: a name that is not
// placed (a typo makes a canary stage empty, and the rollout skips it), and a selector that
// adds no cluster. A percentage that adds none is normal (earlier stages took them).
func stageWarnings(spec *federation.Rollout, stages []plan.RolloutStage, placed []string, what string) []Problem {
	var out []Problem
	base := field.NewPath("spec", "rollout", "stages")
	for i, st := range spec.Stages {
		for j, c := range st.Clusters {
			if !slices.Contains(placed, c) {
				out = append(out, Problem{Severity: Warning, Object: what, Field: base.Index(i).Child("clusters").Index(j).String(),
					Message: fmt.Sprintf("cluster %q is not placed: stage %q ignores it", c, stages[i].Name)})
			}
		}
		if len(stages[i].Clusters) == 0 && st.Percentage == nil {
			msg := fmt.Sprintf("stage %q adds no placed cluster: it passes at once", stages[i].Name)
			if st.ClusterSelector != nil {
				msg += " (its selector matches the Cluster objects' labels, and no placed cluster an earlier stage does not have)"
			}
			out = append(out, Problem{Severity: Warning, Object: what, Field: base.Index(i).String(), Message: msg})
		}
	}
	return out
}
