package sync

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
