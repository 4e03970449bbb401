package plan

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// Propagation reasons, written to status.clusters[].propagation ("" means in sync). Those
// that say sync cannot write in the cluster (federation.PropagationBlocked) make the scheduler
// give that cluster no new replicas; those of package federation are federation's constants.
const (
	// ReasonClusterNotReady: the Cluster's Ready condition is not True; sync writes nothing
	// there (and deletes nothing) until it is. Also when the Cluster says Ready but the
	// cluster set says its client is not (it could not build it yet): the object is then
	// retried with backoff.
	ReasonClusterNotReady = federation.PropagationClusterNotReady
	// ReasonClusterUnreachable: the member's API server could not be reached.
	ReasonClusterUnreachable = federation.PropagationClusterUnreachable
	// ReasonClusterNotFound: the cluster set has no client for the cluster (a set builds its
	// clients on its own watch, so a pass can come first); the object is retried with backoff.
	ReasonClusterNotFound = federation.PropagationClusterNotFound
	// ReasonCreationFailed, ReasonUpdateFailed, ReasonDeletionFailed: the member's API
	// server refused the write; the message has its answer.
	ReasonCreationFailed = federation.PropagationCreationFailed
	ReasonUpdateFailed   = federation.PropagationUpdateFailed
	ReasonDeletionFailed = "DeletionFailed"
	// ReasonRefused: the gate refused the write (a delete, an orphaning, an adoption, a
	// Secret's placement) because it breaks one of its invariants (package gate); the
	// message names the object, the cluster and the invariant. Nothing was sent; the object
	// is looked at again after a while (not retried with backoff: only a change can help).
	ReasonRefused = gate.ReasonRefused
	// ReasonAlreadyExists: an object of the same name exists in the member and the
	// federation did not create it; sync leaves it alone unless adoption is allowed.
	ReasonAlreadyExists = federation.PropagationAlreadyExists
	// ReasonManagedByOther: the member object belongs to another federation (its managed-by
	// label has another value); sync never takes it over.
	ReasonManagedByOther = federation.PropagationManagedByOther
	// ReasonRenderFailed: the template and overrides cannot be rendered for the cluster (an
	// override path that does not exist, a value of the wrong type).
	ReasonRenderFailed = federation.PropagationRenderFailed
	// ReasonWaitingForRemoval: the member object is being deleted (it has a
	// deletionTimestamp and finalizers); sync waits until it is gone, and lists the cluster
	// in status.clusters until then (federation.PropagationWaitingForRemoval).
	ReasonWaitingForRemoval = federation.PropagationWaitingForRemoval
	// ReasonTypeNotServed: the member's API server does not serve the target type (its CRD
	// is not installed there).
	ReasonTypeNotServed = federation.PropagationTypeNotServed
	// ReasonNamespaceTerminating: the member namespace is being deleted and refuses new
	// objects.
	ReasonNamespaceTerminating = federation.PropagationNamespaceTerminating
	// ReasonWaitingForNamespace: the member namespace does not exist and a FederatedNamespace
	// governs it; sync waits for that to create it.
	ReasonWaitingForNamespace = "WaitingForNamespace"
	// ReasonPlacementRefused: the object is not in the cluster and its placement refuses the
	// cluster now (excludeClusters, clusterAffinity.required, a NoExecute taint it does not
	// tolerate: placement.Refused), though the schedule, written before, lists it. Sync
	// creates nothing there until the scheduler has decided again.
	ReasonPlacementRefused = "PlacementRefused"
	// ReasonNamespaceNotPlaced: the member namespace does not exist and a FederatedNamespace
	// governs it, but does not place it in this cluster (or is being deleted, or its placement
	// is invalid): the namespace will not come until its placement changes.
	ReasonNamespaceNotPlaced = federation.PropagationNamespaceNotPlaced
	// ReasonNamespaceInUse: a FederatedNamespace leaves the cluster (or is deleted), but
	// objects the federation placed there still live in the member namespace: deleting it
	// would delete them too, behind their own federated objects (a Deployment that graceful
	// eviction keeps running). The namespace is kept until they have left; the message names
	// one.
	ReasonNamespaceInUse = "NamespaceInUse"
	// ReasonNamespaceCheckFailed: a FederatedNamespace leaves the cluster (or is deleted), but
	// sync could not tell whether the member namespace may go: a read it needs failed (the
	// list of what lives in the namespace, or the host's namespace of that name, to tell
	// whether it is the host's own). The namespace is kept, the message names the read and
	// its error, and the pass fails so the object is retried with backoff.
	ReasonNamespaceCheckFailed = "NamespaceCheckFailed"
	// ReasonSystemNamespace: the member object is a system namespace, one every cluster has
	// and its own components live in (default, kube-node-lease, kube-public, kube-system),
	// and would have been deleted. A FederatedNamespace may adopt one
	// (federation.AdoptAnnotation), but sync never deletes one: it orphans it instead
	// (ActionOrphan) and warns.
	ReasonSystemNamespace = "SystemNamespace"
	// ReasonHostNamespace: the member object is a namespace of the host itself, the host
	// being also a member (the member Namespace has the uid of the host's: see
	// [MemberState].Host), and would have been deleted, with the federation's own objects in
	// it. Sync orphans it instead (ActionOrphan) and warns, as for ReasonSystemNamespace.
	ReasonHostNamespace = "HostNamespace"
)

// Reasons of the Propagated condition.
const (
	// ReasonPropagated: every placed cluster runs the current revision.
	ReasonPropagated = "Propagated"
	// ReasonNotPropagated: some placed clusters do not run the current revision; the message
	// names them and status.clusters[] has each one's reason.
	ReasonNotPropagated = "NotPropagated"
	// ReasonInvalidObject: the federated object cannot be decoded or fails validation.
	ReasonInvalidObject = "InvalidObject"
	// ReasonInvalidPlacement: spec.placement is invalid.
	ReasonInvalidPlacement = "InvalidPlacement"
	// ReasonWaitingForSchedule: with Options.WaitForScheduler, the scheduler has not yet
	// scheduled the object's current generation; sync waits rather than push the template's
	// replica count for a moment. Only an object sync has not propagated yet says so: one
	// that runs keeps its condition while the scheduler catches up with a new generation.
	ReasonWaitingForSchedule = "WaitingForSchedule"
	// ReasonNotScheduled: with Options.WaitForScheduler, the scheduler looked at the object's
	// current generation and wrote no schedule (Scheduled=False: an invalid preference,
	// placement or template, and no earlier schedule to keep). Nothing is propagated and the
	// member objects are left as they are until a schedule comes; the message names the
	// scheduler's reason and message.
	ReasonNotScheduled = "NotScheduled"
	// ReasonHistoryWriteFailed: the host refused a write of the revision history (RBAC, a
	// quota, an admission webhook). Nothing is propagated until the write goes through; the
	// message names the write and the host's error, and the pass is retried with backoff.
	ReasonHistoryWriteFailed = "HistoryWriteFailed"
)

// Reasons of the RolledBack condition.
const (
	// ReasonRolloutFailed: the condition is True; its message says which revision failed,
	// where and why, and which one was restored.
	ReasonRolloutFailed = "RolloutFailed"
	// ReasonRolloutStarted: the condition is False again; a newer revision rolls out.
	ReasonRolloutStarted = "RolloutStarted"
)

// Reasons of status.rollout.reason.
const (
	// RolloutReasonComplete: every placed cluster runs the revision.
	RolloutReasonComplete = "Complete"
	// RolloutReasonWaitingForReady: the current stage's clusters do not all report the
	// revision ready yet.
	RolloutReasonWaitingForReady = "WaitingForReady"
	// RolloutReasonMinReady: the current stage is ready and waits out its minReadySeconds.
	RolloutReasonMinReady = "MinReadySeconds"
	// RolloutReasonStaleData: some clusters of the current stage have no fresh data (or a
	// cluster that had turned not ready has none); the stage neither advances nor fails
	// until they do, and its deadline is paused meanwhile.
	RolloutReasonStaleData = "StaleData"
	// RolloutReasonNotPropagated: sync cannot bring some clusters of the current stage to
	// the revision (their status.clusters[].propagation says why: AlreadyExists, a refused
	// write, a missing namespace ...). That is not the revision's health: the stage holds,
	// its deadline paused, and never fails for it.
	RolloutReasonNotPropagated = "NotPropagated"
	// RolloutReasonNoQuorum: fewer than half of the placed clusters have fresh data; nothing
	// advances or fails, and the deadline is paused.
	RolloutReasonNoQuorum = "NoQuorum"
	// RolloutReasonPaused: federation.RolloutPausedAnnotation holds the next stage.
	RolloutReasonPaused = "Paused"
	// RolloutReasonProgressDeadlineExceeded: the current stage was not ready within its
	// progressDeadlineSeconds (a failure).
	RolloutReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// RolloutReasonNotReadyAgain: a cluster that had reported the revision ready reports it
	// not ready, with fresh data; the rollout waits for it (status.rollout.notReadySince).
	RolloutReasonNotReadyAgain = "NotReadyAgain"
	// RolloutReasonClusterNotReady: such a cluster stayed not ready for the current stage's
	// progressDeadlineSeconds (a failure).
	RolloutReasonClusterNotReady = "ClusterNotReady"
)

// maxMessage bounds status messages well below the API's limits.
const maxMessage = 1024

// condition builds a condition of type typ for the object's generation.
func condition(typ string, status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: fedcond.Truncate(message, maxMessage), ObservedGeneration: generation}
}

// ReasonInvalidMember: the member object is one the member's API server refuses on every
// create or update (federation.ValidateMember: a workload's selector, pod labels,
// containers); sync does not send it and does not retry until the object changes.
const ReasonInvalidMember = "InvalidMember"
