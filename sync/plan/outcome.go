package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// clusterResult is one cluster's Outcome as the status tells it: the change (the Outcome's,
// shared, not copied: a pass reports on every cluster) with the reason and message the
// cluster reports, which may not be the change's.
type clusterResult struct {
	*Change
	// Reason and Message are the propagation reason and message the cluster reports.
	Reason, Message string
	// wrote is true when a write succeeded.
	wrote bool
	// err is what keeps the cluster from being in sync, when a retry may help or the
	// member refused the write.
	err error
	// transient marks an error a later retry may not see (a network failure, a server
	// error, a Conflict that outlived the retries, a member that could not be read); the
	// object is then retried with backoff.
	transient bool
	// warnings are what the member answered a create or update that succeeded with (its
	// Warning headers), then the fields Decide found it would drop (Change.Unknown) that it
	// did not warn about itself.
	warnings []string
	// mayHold: see Outcome.MayHold.
	mayHold bool
}

// classify is what o says about its cluster, with the events it adds to events: a failure
// is one Warning of its own, so are a change not sent because every member would refuse it
// and a system or host namespace orphaned instead of deleted.
func classify(in Input, o *Outcome, events []Event) (clusterResult, []Event) {
	r := clusterResult{Change: &o.Change, Reason: o.Change.Reason, Message: o.Change.Message, wrote: o.Wrote, mayHold: o.MayHold}
	warn := func(reason, msg string) {
		events = append(events, Event{Type: federation.EventTypeWarning, Reason: reason, Message: msg})
	}
	switch {
	case o.Err != nil:
		r = failed(r, o.Err)
		warn(r.Reason, r.Message)
	case o.Governing != nil:
		r.Reason, r.Message = governedReason(o.Governing, r.Cluster, memberNamespace(in, *r.Change), in.Clusters, in.Now)
	case o.Wrote:
		r = written(r, o)
		if r.Action == ActionOrphan && protectedNamespace(r.Reason) {
			warn(r.Reason, r.Message)
		}
	case r.Reason == ReasonInvalidMember:
		// Decide did not send it (see refusedMember): it waits for the object to change.
		warn(r.Reason, r.Message)
	case r.Reason == ReasonClusterUnreachable || r.Reason == ReasonNamespaceCheckFailed || setHasNoClient(in, *r.Change):
		// The member (or what a namespace's deletion must check) could not be read: retry
		// the object with backoff.
		r.err, r.transient = readErr(in, *r.Change), true
	}
	return r, events
}

// written is a write that went through. A delete that went through and was read again
// reports what is still there: a copy its finalizers hold is not removed yet, and a read that
// failed does not show it gone.
func written(r clusterResult, o *Outcome) clusterResult {
	switch {
	case r.Action == ActionDelete && o.RecheckErr != nil:
		r.Reason, r.Message = readError(r.Cluster, o.RecheckErr)
		r.err, r.transient = o.RecheckErr, true
	case r.Action == ActionDelete && o.Remaining != nil:
		r.Reason = ReasonWaitingForRemoval
		r.Message = fmt.Sprintf("cluster %q: %s is being deleted; its finalizers hold it: %s", r.Cluster, describe(o.Remaining), strings.Join(o.Remaining.GetFinalizers(), ", "))
	case r.Action == ActionCreate || r.Action == ActionUpdate:
		r.warnings = warningsOf(o.Warnings, r.Unknown)
	}
	return r
}

// warningsOf are the warnings of a create or update: the member's, then those of the fields
// Decide found its type does not have (Change.Unknown) that the member did not give (an
// older server drops them without a word).
func warningsOf(member, unknown []string) []string {
	out := slices.Clone(member)
	for _, p := range unknown {
		if msg := federation.UnknownFieldWarning(p); !slices.Contains(out, msg) {
			out = append(out, msg)
		}
	}
	return out
}

// memberNamespace is the namespace of ch's member object.
func memberNamespace(in Input, ch Change) string {
	if ch.Desired != nil {
		return ch.Desired.GetNamespace()
	}
	return in.Object.Namespace
}

// readErr is the error of the member read (or namespace check) behind a change's reason.
func readErr(in Input, ch Change) error {
	ms := in.Members[ch.Cluster]
	switch {
	case ms.Err != nil:
		return ms.Err
	case ms.Namespace != nil && ms.Namespace.Err != nil:
		return ms.Namespace.Err
	}
	return errors.New(ch.Message)
}

// setHasNoClient reports whether ch is a member read that failed because the cluster set has
// no client for a cluster whose Cluster object says Ready (ErrClusterNotFound or
// ErrClusterNotReady from the set): a set builds its clients on its own watch of the Clusters
// and Secrets, so a pass can come before the client, or while it is rebuilt after a
// credentials change, and no Cluster change follows to bring the object back. The pass is
// retried with backoff, as for an unreachable member, rather than wait for the resync.
func setHasNoClient(in Input, ch Change) bool {
	return (ch.Reason == ReasonClusterNotFound || ch.Reason == ReasonClusterNotReady) && in.Members[ch.Cluster].Err != nil
}

// failed turns a failed change into its clusterResult: the propagation reason and message, and
// whether a retry could help.
func failed(r clusterResult, err error) clusterResult {
	r.err, r.transient = err, true
	r.Message = fedcond.Truncate(fmt.Sprintf("cluster %q: %v", r.Cluster, err), maxMessage)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		r.Reason = ReasonClusterUnreachable
	case errors.Is(err, federation.ErrUnreachable):
		r.Reason = ReasonClusterUnreachable
	case errors.Is(err, federation.ErrClusterNotFound):
		r.Reason = ReasonClusterNotFound // see setHasNoClient: retried with backoff
	case errors.Is(err, federation.ErrClusterNotReady):
		r.Reason = ReasonClusterNotReady
	case errors.Is(err, gate.ErrRefused):
		r.Reason, r.transient = ReasonRefused, false
	case errors.Is(err, ErrTypeNotServed), r.Action == ActionCreate && apierrors.IsNotFound(err):
		r.Reason, r.transient = ReasonTypeNotServed, false
	case isTerminating(err):
		r.Reason = ReasonNamespaceTerminating
	default:
		r.Reason = map[Action]string{
			ActionCreate: ReasonCreationFailed, ActionUpdate: ReasonUpdateFailed,
			ActionDelete: ReasonDeletionFailed, ActionOrphan: ReasonDeletionFailed,
		}[r.Action]
		if r.Reason == "" {
			r.Reason = ReasonClusterUnreachable
		}
		// The member refused the object itself: only a change to it can help.
		r.transient = !refused(err)
	}
	return r
}

// refused reports whether err is a member refusing the object itself (invalid, forbidden,
// too large ...): only a change to the object can help.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) ||
		apierrors.IsUnsupportedMediaType(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// isTerminating reports the NamespaceLifecycle refusal of a create in a namespace being deleted.
func isTerminating(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	return strings.Contains(err.Error(), "is being terminated") || apierrors.HasStatusCause(err, "NamespaceTerminating")
}

// retryable joins the errors of the results a retry may fix, as ClusterErrors.
func retryable(results []clusterResult) error {
	var errs []error
	for _, r := range results {
		if r.err != nil && r.transient {
			op := strings.ToLower(string(r.Action))
			if r.Action == ActionNone {
				op = "get" // the member could not be read
			}
			errs = append(errs, &federation.ClusterError{Cluster: r.Cluster, Op: op, Err: r.err})
		}
	}
	return errors.Join(errs...)
}
