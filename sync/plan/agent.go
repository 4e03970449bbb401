package plan

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DecideApply is the change of one placed cluster for one rendered member object, desired,
// given the member object as it is, live (nil: absent), by the rules [Decide] applies to
// each read cluster: create what is absent; leave alone what another federation manages or
// the federation did not create (ReasonManagedByOther, ReasonAlreadyExists: a pull
// cluster's agent adopts nothing); wait for what is being deleted; update what the
// desired-state hash says changed, or what drifted from desired (Change.Drift). memo is
// what the caller remembers of live (zero: nothing, so live is compared). fields is the
// schema of desired's kind, which drift is compared with ([SchemaFor], built once per kind
// by the caller; nil: built here). Package agent calls it for every Assignment it applies,
// so a pull cluster follows the same rules as a push cluster.
func DecideApply(cluster, identity string, desired, live *unstructured.Unstructured, memo Verified, fields *Schema) Change {
	if fields == nil {
		fields = SchemaFor(desired.GroupVersionKind())
	}
	m := member{MemberState: MemberState{Object: live}, memo: memo, render: rendered{obj: desired},
		schema: fields, identity: identityOr(identity)}
	return decideMember(Change{Cluster: cluster, Placed: true, Live: live}, m)
}

// DecideRemoval is the change of one cluster a member object leaves, given the member
// object as it is (nil: absent), by [Decide]'s rules: delete it only when it carries the
// federation's identity (ActionDelete), or, with orphan, leave it without the federation's
// labels and annotations (ActionOrphan, Desired set); a system namespace is only orphaned;
// what is being deleted is waited for; anything else is left alone.
func DecideRemoval(cluster, identity string, live *unstructured.Unstructured, orphan bool) Change {
	m := member{MemberState: MemberState{Object: live}, identity: identityOr(identity), orphan: orphan}
	ch := decideMember(Change{Cluster: cluster, Live: live}, m)
	if ch.Action == ActionOrphan {
		ch.Desired = unlabelled(live)
	}
	return ch
}

// NamespaceMissing reports whether err is a member's answer to a create in namespace that
// does not exist (NotFound naming the namespace, not the object): the driver creates the
// namespace and tries again (sync, and a pull cluster's agent).
func NamespaceMissing(err error, namespace string) bool {
	var se apierrors.APIStatus
	if namespace == "" || !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == namespace
}
