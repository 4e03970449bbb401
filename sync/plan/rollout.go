package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonvalue"
)

// Revision is one entry of a federated object's revision history, as sync keeps it in a
// ControllerRevision.
type Revision struct {
	// Number is the revision number. It changes when the snapshot comes back (a rollback
	// renumbers its ControllerRevision to the next number).
	Number int64
	// Name is the ControllerRevision's name, a hash of the snapshot: fixed for a snapshot.
	Name string
	// Spec holds the snapshot: template, overrides, placement and retainReplicas.
	Spec federation.FederatedSpec
}

// RolloutInput is everything [DecideRollout] decides from: plain data, no clients.
type RolloutInput struct {
	// Object is the federated object, defaulted: its spec (rollout, and the snapshot fields
	// that make its revision), federation.RolloutPausedAnnotation, and its status:
	// status.rollout (where the rollout stood), status.clusters[] (sync's revision and
	// propagation, the Collector's ready, observedRevision and stale) and syncedRevision. Its
	// apiVersion and kind, as read from the host, are part of its ControllerRevisions' names.
	Object *federation.FederatedObject
	// Revision is the number of the object's current spec.
	Revision int64
	// History is the revision history, in any order. Only the stable revision is looked up
	// in it; nil is fine when status.rollout says the rollout of Revision is complete.
	History []Revision
	// Placed are the clusters the object is placed in, ready or not.
	Placed []string
	// Clusters are the Cluster objects: their labels (stage selectors) and Ready condition
	// (a cluster that is not Ready has no fresh data, whatever its entry says).
	Clusters []federation.Cluster
	// Now is the time of the decision.
	Now time.Time
	// Type is the object's type: its ReplicasPath is a replica count, not what runs, so a
	// change of it alone is not staged. Its zero value compares the whole template.
	Type federation.TypeConfig
}

// RolloutDecision is what [DecideRollout] decided: plain data that the Syncer carries out.
type RolloutDecision struct {
	// Status is the new status.rollout; nil when the object has no spec.rollout.
	Status *federation.RolloutStatus
	// Stages are the rollout's stages over the placed clusters ([RolloutStages]).
	Stages []RolloutStage
	// Assign maps every placed cluster to the revision it is to run: Revision, or the
	// stable revision's number.
	Assign map[string]int64
	// Stable is the revision the clusters outside the started stages keep; nil when every
	// placed cluster runs Revision. Its template carries the current template's replica
	// count: how many replicas run is never held back, nor rolled back.
	Stable *Revision
	// Continues reports that Revision goes on with the rollout status.rollout records for an
	// older revision number: the two differ only in placement or replica counts, which are
	// not staged, so the stage and its clocks carry over.
	Continues bool
	// Failed reports that the rollout failed in this decision, in FailedClusters, for
	// Status.Reason and Status.Message. Rollback asks for the stable revision to be restored
	// (spec.rollout.autoRollback).
	Failed         bool
	Rollback       bool
	FailedClusters []string
	// RequeueAfter is when time alone can change the decision (a stage's minReadySeconds
	// end, its deadline); 0 when only new data can.
	RequeueAfter time.Duration
}

// DecideRollout decides, for a federated object with spec.rollout, which revision each
// placed cluster runs, which stage the rollout is in and whether its gate opens, and
// whether it failed. It is pure: the same input gives the same decision, and a decision
// taken on status it wrote itself takes no further step until time or data move.
//
// The rules:
//
//  1. The stable revision is the last one whose rollout completed (status.rollout, or for
//     a first rollout status.syncedRevision), found in the history by its ControllerRevision
//     name. Without one (a new object), or when the new revision changes nothing but the
//     placement or replica counts (in.Type's replicas path of the template), or when the
//     stable snapshot is gone from the history, every cluster runs the new revision at once
//     and the rollout is complete. The clusters held back run the stable revision's template
//     with the current replica count.
//  2. A new revision starts at the first stage; a revision that replaces one still rolling
//     out starts over, and the clusters outside its started stages return to the stable
//     revision. But a revision that differs from the one rolling out only in placement or
//     replica counts is not a new rollout: it goes on at its stage, with its clocks, and a
//     cluster on either counts as on it (Decision.Continues). A cluster that runs the new
//     revision keeps it (stages shift when placement changes; a cluster never moves back and
//     forth). The stages are laid over the placed clusters only: one that left the placement
//     left the rollout.
//  3. A stage is ready when every one of its clusters has fresh data (status.clusters[]:
//     not stale, its Cluster Ready) saying it runs the new revision (revision and
//     observedRevision) and is ready. After minReadySeconds ready, the next stage starts,
//     unless the object carries federation.RolloutPausedAnnotation "true" (which holds the
//     first stage too). After the last stage the rollout is complete: the revision is the
//     new stable one.
//  4. Stale data never advances nor fails a stage: a stage with clusters whose data is stale
//     waits with its clocks paused (status.rollout.deadlinePausedSince); when the data is
//     fresh they resume where they stood, never from zero. With fresh data from no more than
//     half of the placed clusters (the quorum rule of status aggregation) nothing moves at
//     all, clocks included.
//  5. The rollout fails when the current stage is not ready within its deadline (naming its
//     clusters that are not), or when a cluster of a stage that was ready reports not ready
//     with fresh data for as long (status.rollout.notReadySince; meanwhile no stage starts:
//     a member that scales or loses a node is not ready for a moment, and that must not
//     revert a good revision). That cluster, once its data is stale, still counts as not
//     ready since then, its clock paused. Then with autoRollback the decision asks for the
//     stable revision to be restored; without, the rollout stops where it is. A failed
//     revision is never retried: only a change of what runs starts a new rollout.
//  6. A cluster of the current stage that sync cannot bring to the revision (its
//     status.clusters[].propagation is set: AlreadyExists, a refused write, a missing
//     namespace ...) holds the stage as stale data does, with reason NotPropagated naming
//     it and the propagation reason. It is not the revision's health: it never fails it.
func DecideRollout(in RolloutInput) (RolloutDecision, error) {
	obj := in.Object
	d := RolloutDecision{Assign: make(map[string]int64, len(in.Placed))}
	if obj.Spec.Rollout == nil {
		for _, c := range in.Placed {
			d.Assign[c] = in.Revision
		}
		return d, nil
	}
	stages, err := RolloutStages(obj.Spec.Rollout, in.Placed, in.Clusters)
	if err != nil {
		return RolloutDecision{}, err
	}
	d.Stages = stages
	r := newRolloutRun(in, &d)
	r.decide()
	return d, nil
}

// rolloutRun is one DecideRollout call's working state.
type rolloutRun struct {
	in      RolloutInput
	d       *RolloutDecision
	st      *federation.RolloutStatus
	prev    *federation.RolloutStatus
	entries map[string]*federation.MemberStatus
	ready   map[string]bool // the Clusters' Ready condition
	equiv   map[int64]bool  // revisions that run what Revision runs (rule 2)
	now     metav1.Time
}

func newRolloutRun(in RolloutInput, d *RolloutDecision) *rolloutRun {
	r := &rolloutRun{in: in, d: d, prev: in.Object.Status.Rollout,
		entries: make(map[string]*federation.MemberStatus, len(in.Object.Status.Clusters)),
		ready:   readyClusters(in.Clusters),
		now:     metav1.NewTime(in.Now.Truncate(time.Second)),
	}
	for i := range in.Object.Status.Clusters {
		e := &in.Object.Status.Clusters[i]
		r.entries[e.Name] = e
	}
	r.st = &federation.RolloutStatus{Revision: in.Revision, Stages: int32(len(d.Stages))}
	d.Status = r.st
	r.equiv = map[int64]bool{in.Revision: true}
	for i := range in.History {
		if h := &in.History[i]; h.Number != in.Revision && r.sameRendering(h.Spec, in.Object.Spec) {
			r.equiv[h.Number] = true
		}
	}
	return r
}

func (r *rolloutRun) decide() {
	stable, note := r.stable()
	if r.prev != nil {
		r.st.FailedRevision = r.prev.FailedRevision
	}
	if stable == nil || r.sameRendering(stable.Spec, r.in.Object.Spec) {
		r.complete(note)
		return
	}
	held := *stable
	held.Spec.Template.Object = withReplicasOf(stable.Spec.Template.Object, r.in.Object.Spec.Template.Object, r.in.Type.ReplicasFields())
	r.d.Stable = &held
	r.st.StableRevision, r.st.StableRevisionName = stable.Number, stable.Name
	same := r.prev != nil && r.equiv[r.prev.Revision]
	if same {
		r.d.Continues = r.prev.Revision != r.in.Revision
		r.st.Stage, r.st.StageName = r.prev.Stage, r.prev.StageName
		r.st.StageStartTime, r.st.ReadySince, r.st.NotReadySince = r.prev.StageStartTime, r.prev.ReadySince, r.prev.NotReadySince
		r.st.DeadlinePausedSince = r.prev.DeadlinePausedSince
		if r.prev.Phase == federation.RolloutFailed || r.prev.Phase == federation.RolloutRolledBack {
			// Stopped: nothing moves until the spec changes (a rollback's restore does).
			r.st.Phase, r.st.Reason, r.st.Message = r.prev.Phase, r.prev.Reason, r.prev.Message
			r.assign()
			return
		}
	}
	r.st.Phase = federation.RolloutProgressing
	r.step()
	r.assign()
}

// stable finds the stable revision (rule 1); note says why there is none when one was
// expected.
func (r *rolloutRun) stable() (*Revision, string) {
	if len(r.in.Placed) == 0 {
		return nil, "" // nothing to roll out
	}
	name, number, ok := StableRevisionOf(r.in.Object, r.in.Revision)
	if !ok {
		return nil, ""
	}
	for i := range r.in.History {
		h := &r.in.History[i]
		if (name != "" && h.Name == name) || (name == "" && h.Number == number) {
			return h, ""
		}
	}
	return nil, fmt.Sprintf("; the stable revision %d is no longer in the history, so nothing held the other clusters back", number)
}

// sameRendering reports whether two specs run the same wherever they are placed: the same
// template (but for its replica count), overrides and retainReplicas.
func (r *rolloutRun) sameRendering(a, b federation.FederatedSpec) bool {
	fields := r.in.Type.ReplicasFields()
	enc := func(s federation.FederatedSpec) []byte {
		tmpl := withReplicasOf(s.Template.Object, nil, fields)
		data, _ := json.Marshal(Snapshot{Template: tmpl, Overrides: s.Overrides, RetainReplicas: s.RetainReplicas})
		return data
	}
	return jsonvalue.EqualJSON(enc(a), enc(b))
}

// withReplicasOf returns tmpl with the replica count (at fields) of from, or without one
// when from has none. It copies only the maps on the way; tmpl and from are not modified.
func withReplicasOf(tmpl, from map[string]any, fields []string) map[string]any {
	if len(fields) == 0 || tmpl == nil {
		return tmpl
	}
	v, found, _ := unstructured.NestedFieldNoCopy(from, fields...) // false under a non-object
	return withNested(tmpl, fields, v, found)
}

// withNested is obj with fields set to v (or removed, when !set), copying the maps on the
// path.
func withNested(obj map[string]any, fields []string, v any, set bool) map[string]any {
	out := make(map[string]any, len(obj)+1)
	for k, x := range obj {
		out[k] = x
	}
	f := fields[0]
	if len(fields) == 1 {
		if set {
			out[f] = v
		} else {
			delete(out, f)
		}
		return out
	}
	next, ok := obj[f].(map[string]any)
	if !ok {
		if !set {
			return obj
		}
		next = map[string]any{}
	}
	out[f] = withNested(next, fields[1:], v, set)
	return out
}

// complete ends the rollout: every placed cluster runs the revision, the stable one now.
func (r *rolloutRun) complete(note string) {
	name := ""
	if data, err := SnapshotOf(r.in.Object); err == nil {
		name = RevisionName(r.in.Object.GroupVersionKind().GroupKind(), r.in.Object.Name, data)
	}
	r.d.Stable = nil
	*r.st = federation.RolloutStatus{
		Revision: r.in.Revision, StableRevision: r.in.Revision, StableRevisionName: name,
		Phase: federation.RolloutComplete, Stage: r.st.Stages, Stages: r.st.Stages,
		Reason: RolloutReasonComplete, FailedRevision: r.st.FailedRevision,
		Message: fmt.Sprintf("revision %d runs in every placed cluster%s", r.in.Revision, note),
	}
	if p := r.prev; p != nil && p.Revision == r.in.Revision && p.Phase == federation.RolloutComplete && p.Message != "" {
		r.st.Message = p.Message // as it was said when it completed
	}
	r.assign()
}

// start opens stage k (1-based).
func (r *rolloutRun) start(k int) {
	r.st.Stage, r.st.StageName = int32(k), r.d.Stages[k-1].Name
	r.st.StageStartTime, r.st.ReadySince, r.st.NotReadySince = r.now.DeepCopy(), nil, nil
	r.st.DeadlinePausedSince = nil
}

// pause stops the stage's clocks (rule 4): from now until resume, no time counts against
// its deadline nor against a cluster that turned not ready.
func (r *rolloutRun) pause() {
	if r.st.DeadlinePausedSince == nil {
		r.st.DeadlinePausedSince = r.now.DeepCopy()
	}
}

// resume runs the clocks again: StageStartTime and NotReadySince move later by the time
// they stood still.
func (r *rolloutRun) resume() {
	p := r.st.DeadlinePausedSince
	if p == nil {
		return
	}
	r.st.DeadlinePausedSince = nil
	span := r.now.Sub(p.Time)
	if span <= 0 {
		return
	}
	for _, t := range []**metav1.Time{&r.st.StageStartTime, &r.st.NotReadySince} {
		if *t != nil {
			moved := metav1.NewTime((*t).Add(span))
			*t = &moved
		}
	}
}

// step takes the rollout as far as the data allows in this decision (rules 2 to 5): stage
// after stage, each held by the first rule that holds it.
func (r *rolloutRun) step() {
	paused := r.in.Object.GetAnnotations()[federation.RolloutPausedAnnotation] == "true"
	fresh := 0
	for _, c := range r.in.Placed {
		if r.fresh(c) {
			fresh++
		}
	}
	for {
		if r.st.Stage == 0 {
			if paused {
				r.wait(federation.RolloutPaused, RolloutReasonPaused, fmt.Sprintf(
					"revision %d waits before its first stage: the object carries %s", r.in.Revision, federation.RolloutPausedAnnotation))
				return
			}
			r.start(1)
			continue
		}
		stage := r.current()
		if r.noQuorum(fresh) || r.notReadyAgain(stage) || r.held(stage) || r.minReady(stage) {
			return
		}
		k := int(r.st.Stage)
		if k == len(r.d.Stages) {
			r.complete("")
			return
		}
		if paused {
			r.wait(federation.RolloutPaused, RolloutReasonPaused, fmt.Sprintf(
				"%s: ready; the next stage waits: the object carries %s", r.stageLabel(), federation.RolloutPausedAnnotation))
			return
		}
		r.start(k + 1)
	}
}

// current is the stage the rollout is in, its name and start time recorded in the status.
func (r *rolloutRun) current() RolloutStage {
	if int(r.st.Stage) > len(r.d.Stages) { // spec.rollout lost stages on the way
		r.st.Stage = int32(len(r.d.Stages))
	}
	stage := r.d.Stages[r.st.Stage-1]
	r.st.StageName = stage.Name
	if r.st.StageStartTime == nil {
		r.st.StageStartTime = r.now.DeepCopy()
	}
	return stage
}

// noQuorum holds everything, clocks included, while no more than half of the placed clusters
// have fresh data (rule 4); fresh is how many have.
func (r *rolloutRun) noQuorum(fresh int) bool {
	if 2*fresh > len(r.in.Placed) {
		return false
	}
	r.st.ReadySince = nil
	r.pause()
	r.wait(federation.RolloutProgressing, RolloutReasonNoQuorum, fmt.Sprintf(
		"%s: fresh data from %d of %d placed clusters, not a majority: nothing advances or fails", r.stageLabel(), fresh, len(r.in.Placed)))
	return true
}

// notReadyAgain is rule 5's second half: a cluster of a stage that was ready turns not
// ready, and the rollout waits for it, failing when that lasts the stage's deadline; one
// whose data went stale meanwhile is taken as not ready still, its clock paused. It reports
// whether the rollout holds for it.
func (r *rolloutRun) notReadyAgain(stage RolloutStage) bool {
	turned, unheard := r.turnedNotReady()
	if len(turned) > 0 {
		r.resume()
		if r.st.NotReadySince == nil {
			r.st.NotReadySince = r.now.DeepCopy()
		}
		end := r.st.NotReadySince.Add(stage.Deadline)
		if !r.in.Now.Before(end) {
			r.fail(RolloutReasonClusterNotReady, turned, fmt.Sprintf(
				"%s reported revision %d ready, then not ready for %s", clusterList(turned), r.in.Revision, stage.Deadline))
			return true
		}
		r.d.RequeueAfter = end.Sub(r.in.Now)
		r.wait(federation.RolloutProgressing, RolloutReasonNotReadyAgain, fmt.Sprintf(
			"%s: %s reported revision %d ready, then not ready: waiting for it (the rollout fails when that lasts %s)",
			r.stageLabel(), clusterList(turned), r.in.Revision, stage.Deadline))
		return true
	}
	if r.st.NotReadySince == nil {
		return false
	}
	if len(unheard) > 0 {
		r.pause()
		r.wait(federation.RolloutProgressing, RolloutReasonStaleData, fmt.Sprintf(
			"%s: a cluster reported revision %d not ready again; waiting for fresh data from %s (until then it counts as not ready, its clock paused)",
			r.stageLabel(), r.in.Revision, clusterList(unheard)))
		return true
	}
	// Ready again: minReadySeconds count again from now.
	r.st.NotReadySince = nil
	if r.st.ReadySince != nil {
		r.st.ReadySince = r.now.DeepCopy()
	}
	return false
}

// turnedNotReady are the clusters of the stages that were ready (the current one once it
// was) that run the revision and report it not ready with fresh data (turned), and those
// without fresh data (unheard).
func (r *rolloutRun) turnedNotReady() (turned, unheard []string) {
	k := int(r.st.Stage)
	for i := range k {
		if i == k-1 && r.st.ReadySince == nil {
			break
		}
		for _, c := range r.d.Stages[i].Clusters {
			switch {
			case !r.fresh(c):
				unheard = append(unheard, c)
			case r.onTarget(c) && !r.isReady(c):
				turned = append(turned, c)
			}
		}
	}
	return turned, unheard
}

// held holds the stage while some of its clusters cannot be brought to the revision (rule 6),
// have no fresh data (rule 4), or are not ready yet, failing it when its deadline passes
// (rule 5). It reports whether the stage holds.
func (r *rolloutRun) held(stage RolloutStage) bool {
	var stale, blocked, notReady []string
	for _, c := range stage.Clusters {
		switch {
		case !r.fresh(c):
			stale = append(stale, c)
		case r.entry(c).Propagation != "":
			blocked = append(blocked, c)
		case !r.onTarget(c) || !r.isReady(c):
			notReady = append(notReady, c)
		}
	}
	switch {
	case len(blocked) > 0:
		// Rule 6: not the revision's health; the stage holds and never fails for it.
		r.st.ReadySince = nil
		r.pause()
		msg := fmt.Sprintf("%s: sync cannot bring %s to revision %d: the stage holds, its deadline paused, until it can",
			r.stageLabel(), r.describe(blocked), r.in.Revision)
		if len(stale) > 0 {
			msg += "; waiting for fresh data from " + clusterList(stale)
		}
		r.wait(federation.RolloutProgressing, RolloutReasonNotPropagated, msg)
		return true
	case len(stale) > 0:
		r.st.ReadySince = nil
		r.pause()
		r.wait(federation.RolloutProgressing, RolloutReasonStaleData, fmt.Sprintf(
			"%s: waiting for fresh data from %s", r.stageLabel(), clusterList(stale)))
		return true
	}
	r.resume()
	if len(notReady) == 0 {
		return false
	}
	deadline := r.st.StageStartTime.Add(stage.Deadline)
	if !r.in.Now.Before(deadline) {
		r.fail(RolloutReasonProgressDeadlineExceeded, notReady, fmt.Sprintf(
			"%s: %s did not report revision %d ready within %s", r.stageLabel(), clusterList(notReady), r.in.Revision, stage.Deadline))
		return true
	}
	r.d.RequeueAfter = deadline.Sub(r.in.Now)
	r.wait(federation.RolloutProgressing, RolloutReasonWaitingForReady, fmt.Sprintf(
		"%s: waiting for %s to report revision %d ready", r.stageLabel(), r.describe(notReady), r.in.Revision))
	return true
}

// minReady holds a ready stage for its minReadySeconds (rule 3). It reports whether it holds.
func (r *rolloutRun) minReady(stage RolloutStage) bool {
	if len(stage.Clusters) == 0 {
		return false
	}
	if r.st.ReadySince == nil {
		r.st.ReadySince = r.now.DeepCopy()
	}
	end := r.st.ReadySince.Add(stage.MinReady)
	if !r.in.Now.Before(end) {
		return false
	}
	r.d.RequeueAfter = end.Sub(r.in.Now)
	r.wait(federation.RolloutProgressing, RolloutReasonMinReady, fmt.Sprintf(
		"%s: ready; the next stage starts after %s ready", r.stageLabel(), stage.MinReady))
	return true
}

func (r *rolloutRun) wait(phase, reason, msg string) {
	r.st.Phase, r.st.Reason, r.st.Message = phase, reason, msg
}

func (r *rolloutRun) fail(reason string, clusters []string, msg string) {
	r.d.Failed, r.d.FailedClusters = true, clusters
	r.d.Rollback = r.in.Object.Spec.Rollout.AutoRollback
	r.st.FailedRevision = r.in.Revision
	r.st.ReadySince = nil
	if r.d.Rollback {
		r.wait(federation.RolloutRolledBack, reason, fmt.Sprintf("%s; rolled back to revision %d", msg, r.st.StableRevision))
		return
	}
	r.wait(federation.RolloutFailed, reason, fmt.Sprintf(
		"%s; the rollout stopped (spec.rollout.autoRollback is off): change the spec or roll back", msg))
}

// assign fills Decision.Assign and Status.Clusters: the started stages' clusters, and those
// already running it, run the revision; the others the stable one.
func (r *rolloutRun) assign() {
	stageOf := stageOf(r.d.Stages)
	byRev := map[int64][]string{}
	for _, c := range r.in.Placed {
		rev := r.in.Revision
		if r.d.Stable != nil && stageOf[c] > int(r.st.Stage) && !r.equiv[r.entry(c).Revision] {
			rev = r.d.Stable.Number
		}
		r.d.Assign[c] = rev
		byRev[rev] = append(byRev[rev], c)
	}
	revs := make([]int64, 0, len(byRev))
	for rev := range byRev {
		revs = append(revs, rev)
	}
	slices.Sort(revs)
	slices.Reverse(revs)
	r.st.Clusters = nil
	for _, rev := range revs {
		cs := byRev[rev]
		slices.Sort(cs)
		r.st.Clusters = append(r.st.Clusters, federation.RolloutRevisionClusters{Revision: rev, Clusters: cs})
	}
}

// fresh reports whether cluster c has fresh data: an entry the Collector observed, not
// stale, and a Ready Cluster.
func (r *rolloutRun) fresh(c string) bool {
	e, ok := r.entries[c]
	return ok && r.ready[c] && !e.Stale && e.LastObserved != nil && e.Ready != nil
}

// entry is cluster c's status.clusters[] entry, a zero one when it has none. Read-only.
func (r *rolloutRun) entry(c string) *federation.MemberStatus {
	if e, ok := r.entries[c]; ok {
		return e
	}
	return &federation.MemberStatus{Name: c}
}

// onTarget reports whether c runs the new revision: sync rendered it (revision, in sync) and
// the Collector saw it (observedRevision). A revision that differs from it only in
// placement or replica counts counts as it.
func (r *rolloutRun) onTarget(c string) bool {
	e := r.entry(c)
	return r.equiv[e.Revision] && e.Propagation == "" && r.equiv[e.ObservedRevision]
}

func (r *rolloutRun) isReady(c string) bool {
	e := r.entry(c)
	return e.Ready != nil && *e.Ready
}

// describe names clusters with what keeps each from counting, for status messages. It says
// nothing that changes with every observation (no replica counts), so the message changes
// only when a cluster's state does.
func (r *rolloutRun) describe(clusters []string) string {
	parts := make([]string, 0, len(clusters))
	for _, c := range clusters {
		e := r.entry(c)
		switch {
		case !r.equiv[e.Revision] || e.Propagation != "":
			why := "not updated yet"
			if e.Propagation != "" {
				why = e.Propagation
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", c, why))
		case !r.equiv[e.ObservedRevision]:
			parts = append(parts, fmt.Sprintf("%s (reports revision %d)", c, e.ObservedRevision))
		default:
			parts = append(parts, c+" (not ready)")
		}
	}
	return summarize(parts)
}

func (r *rolloutRun) stageLabel() string {
	return fmt.Sprintf("stage %d of %d (%s)", r.st.Stage, r.st.Stages, r.st.StageName)
}

// clusterList names clusters for a message: "cluster a", "clusters a, b".
func clusterList(cs []string) string {
	if len(cs) == 1 {
		return "cluster " + cs[0]
	}
	return "clusters " + strings.Join(cs, ", ")
}
