package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A staged rollout takes a new revision of a federated object through the placed clusters
// stage by stage instead of everywhere at once, and stops (or reverts) it when it fails. In
// YAML:
//
//	spec:
//	  rollout:
//	    autoRollback: true
//	    stages:
//	    - name: canary
//	      clusters: [cluster-aws-us-east]
//	      minReadySeconds: 60
//	    - name: europe
//	      clusterSelector: {matchLabels: {region: eu}}
//	      progressDeadlineSeconds: 900
//	    - percentage: 100
//
// Sync carries it out and reports it in status.rollout (package sync documents the rules).
// The rules in short:
//
//   - A rollout gates what runs: the template, overrides and retainReplicas. A change of
//     placement or of replica counts alone is never staged and never restarts a rollout.
//   - A rollback, automatic or not, restores what ran and keeps the placement. Restoring
//     the old placement too is an explicit option of sync's Rollback (RestorePlacement).
//   - A cluster that leaves the placement leaves the rollout.
//   - A cluster sync cannot propagate to holds its stage, named in status.rollout; it never
//     fails the revision.
//   - Stale data pauses a stage's deadline and never resets it.

// RolloutPausedAnnotation, set to "true" on a federated object with spec.rollout, is a manual
// gate: no further stage of a rollout opens while it is there (the first one included, so a
// change can be prepared and released later). Removing it resumes the rollout where it stood.
// Sync still watches the open stages while paused and fails (or rolls back) a revision that
// fails there.
const RolloutPausedAnnotation = "federation.k8s.io/rollout-paused"

// ConditionRolledBack on a federated object: True when sync restored the last good revision
// automatically after a rollout failed (spec.rollout.autoRollback); its message names the
// failed revision, the clusters and the reason. It turns False once a newer revision rolls
// out.
const ConditionRolledBack = "RolledBack"

// RolledBackAnnotation on a Federated<Kind> a propagation policy generated (GeneratedByLabel:
// propagation) says that sync's automated rollback (spec.rollout.autoRollback) wrote the
// revision it names back into the object's spec. Such an object is rendered from a native
// object on every change, so the rollback lasts only once the native object holds it too:
// package propagation, which owns the writes of native objects, restores the object's
// template into the native object, then renders the object again from it, without the
// annotation. A native object changed since the object was rendered from it wins: its change
// is a new revision, and the annotation goes.
const RolledBackAnnotation = "federation.k8s.io/rolled-back-to"

// Defaults of a rollout stage.
const (
	// DefaultProgressDeadlineSeconds is how long a stage may take to become ready, as a
	// Deployment's progressDeadlineSeconds.
	DefaultProgressDeadlineSeconds int32 = 600
)

// Rollout stages the propagation of a new revision (a change of template, overrides or
// retainReplicas; not of placement or replica counts). Without it sync sends every revision
// to every placed cluster at once.
type Rollout struct {
	// Stages in order. Each adds clusters to the ones running the new revision; a stage
	// starts once the one before it is ready for its minReadySeconds. Placed clusters that
	// no stage selects come last, in an implicit final stage.
	// +optional
	// +listType=atomic
	Stages []RolloutStage `json:"stages,omitempty"`

	// AutoRollback restores the last good revision's template, overrides and
	// retainReplicas when a rollout fails, through the same path as a manual rollback (a new
	// revision); the placement and replica counts stay as they are. Without it a failed
	// rollout stops where it is and says so in status.rollout.
	// +optional
	AutoRollback bool `json:"autoRollback,omitempty"`
}

// RolloutStage is one step of a rollout: which clusters it adds and what must hold before
// the next step starts. Exactly one of Clusters, ClusterSelector and Percentage is set.
type RolloutStage struct {
	// Name identifies the stage in status and events. Default: "stage-<n>", n counting from 1.
	// +optional
	Name string `json:"name,omitempty"`

	// Clusters names the clusters the stage adds. A name that is not placed is ignored.
	// +optional
	// +listType=set
	Clusters []string `json:"clusters,omitempty"`

	// ClusterSelector adds the placed clusters whose labels match, unless an earlier stage
	// has them already.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// Percentage of the placed clusters that run the new revision once the stage has
	// started (rounded up), earlier stages included: the stage adds clusters in name order
	// until that many do. Percentages grow from stage to stage; 100 takes every cluster.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Percentage *int32 `json:"percentage,omitempty"`

	// MinReadySeconds is how long every cluster of the stage must report the new revision
	// ready (with fresh data) before the next stage starts. Default 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// ProgressDeadlineSeconds is how long the stage may take, from its start, until every
	// one of its clusters reports the new revision ready; past it the rollout fails. Time
	// spent waiting for stale data, or for a cluster sync cannot propagate to, does not
	// count: it pauses the deadline. Default 600.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// Rollout phases, in status.rollout.phase.
const (
	// RolloutProgressing: stages are opening; status.rollout.reason says what the current
	// one waits for.
	RolloutProgressing = "Progressing"
	// RolloutPaused: federation.k8s.io/rollout-paused holds the next stage.
	RolloutPaused = "Paused"
	// RolloutComplete: every placed cluster runs the revision.
	RolloutComplete = "Complete"
	// RolloutFailed: the revision failed and spec.rollout.autoRollback is off; nothing moves
	// until the spec changes.
	RolloutFailed = "Failed"
	// RolloutRolledBack: the revision failed and sync restored the last good one.
	RolloutRolledBack = "RolledBack"
)

// RolloutStatus is sync's account of a staged rollout: which revision goes out, which one
// the other clusters keep, where it stands and why it waits.
type RolloutStatus struct {
	// Revision is the revision being rolled out: the current spec's.
	Revision int64 `json:"revision"`

	// StableRevision is the revision the clusters outside the started stages run: the last
	// one whose rollout completed. It equals Revision once the rollout is complete.
	// +optional
	StableRevision int64 `json:"stableRevision,omitempty"`

	// StableRevisionName is the ControllerRevision holding StableRevision's snapshot. A
	// snapshot keeps its ControllerRevision when it comes back under a new number (after a
	// rollback), so the name finds it where the number may not.
	// +optional
	StableRevisionName string `json:"stableRevisionName,omitempty"`

	// Phase is Progressing, Paused, Complete, Failed or RolledBack.
	// +optional
	Phase string `json:"phase,omitempty"`

	// Stage is how many stages have started (1 = the first); Stages how many there are:
	// the declared ones, and the implicit final stage when some placed cluster is in no
	// declared stage.
	// +optional
	Stage int32 `json:"stage,omitempty"`
	// +optional
	Stages int32 `json:"stages,omitempty"`
	// StageName is the name of the current stage.
	// +optional
	StageName string `json:"stageName,omitempty"`

	// StageStartTime is when the current stage started, moved later by the time its clocks
	// stood still (DeadlinePausedSince): its progress deadline counts from it.
	// +optional
	StageStartTime *metav1.Time `json:"stageStartTime,omitempty"`

	// DeadlinePausedSince is set while the stage's clocks stand still: its data is stale,
	// fewer than half of the placed clusters have fresh data, or sync cannot propagate to
	// one of its clusters. When they run again, StageStartTime and NotReadySince move later
	// by that time: a wait pauses the deadline and never resets it.
	// +optional
	DeadlinePausedSince *metav1.Time `json:"deadlinePausedSince,omitempty"`

	// ReadySince is when every cluster of the current stage was first seen ready with the
	// new revision: its minReadySeconds count from it.
	// +optional
	ReadySince *metav1.Time `json:"readySince,omitempty"`

	// NotReadySince is when a cluster that had reported the revision ready was first seen
	// not ready again (with fresh data). No stage starts meanwhile, and the rollout fails
	// when that lasts the current stage's progressDeadlineSeconds: a member scaling or
	// losing a node is not ready for a moment, which must not revert a good revision. It
	// stays set while that cluster's data is stale: it counts as not ready still, its clock
	// paused (DeadlinePausedSince).
	// +optional
	NotReadySince *metav1.Time `json:"notReadySince,omitempty"`

	// Clusters lists which placed clusters run which revision.
	// +optional
	// +listType=atomic
	Clusters []RolloutRevisionClusters `json:"clusters,omitempty"`

	// Reason says in one word why the rollout waits, stopped or ended (WaitingForReady,
	// MinReadySeconds, StaleData, NoQuorum, Paused, Complete, ProgressDeadlineExceeded,
	// ClusterNotReady, ...); Message says it in a sentence, naming the clusters.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`

	// FailedRevision is the last revision whose rollout failed. It is not rolled out again
	// unless the spec changes to it again (which makes it a new revision).
	// +optional
	FailedRevision int64 `json:"failedRevision,omitempty"`
}

// RolloutRevisionClusters is one revision and the placed clusters that run it.
type RolloutRevisionClusters struct {
	Revision int64 `json:"revision"`
	// +listType=atomic
	Clusters []string `json:"clusters"`
}
