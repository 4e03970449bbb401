package plan

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// refusedMember is Plan's last rule for one cluster: a create or update whose member object
// the member's API server would refuse whatever the retry (federation.ValidateMember) is not
// sent. The change becomes ActionNone with ReasonInvalidMember, a message naming the cluster,
// the object and every field, and the field errors in Change.Invalid. It runs after
// withRevision, which may turn an unchanged member into an update.
func refusedMember(ch Change) Change {
	if ch.Desired == nil || (ch.Action != ActionCreate && ch.Action != ActionUpdate) {
		return ch
	}
	errs := federation.ValidateMember(ch.Desired)
	if len(errs) == 0 {
		return ch
	}
	ch.Action, ch.Drift, ch.Invalid = ActionNone, nil, errs
	ch.Reason = ReasonInvalidMember
	ch.Message = fedcond.Truncate(fmt.Sprintf("cluster %q: the member's API server would refuse the %s: %v",
		ch.Cluster, describe(ch.Desired), errs.ToAggregate()), maxMessage)
	return ch
}

// withUnknownFields is Plan's note on a create or update that goes out: the fields of
// Desired that the member's type does not have, found from the type's schema (fields: the Go
// type of every built-in kind; nil for a custom resource, whose schema is its CRD's), in
// Change.Unknown. A member's API server drops them and warns (its field validation "Warn",
// the default), so the change is sent as it is, and the warnings reach the cluster's
// status.clusters[].message. Only what is sent is looked at: an unchanged member costs
// nothing.
func withUnknownFields(ch Change, fields *Schema) Change {
	if ch.Desired != nil && (ch.Action == ActionCreate || ch.Action == ActionUpdate) {
		ch.Unknown = fields.unknownFields(ch.Desired.Object)
	}
	return ch
}
