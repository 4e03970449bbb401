package sync

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// refusedMember is the result of a create or update whose member object the member's API
// server would refuse whatever the retry, or ok=false when the object passes
// federation.ValidateMember. The message names the cluster, the object and every field.
func (s *Syncer) refusedMember(in PlanInput, ch Change) (result, bool) {
	if ch.Desired == nil || (ch.Action != ActionCreate && ch.Action != ActionUpdate) {
		return result{}, false
	}
	errs := federation.ValidateMember(ch.Desired)
	if len(errs) == 0 {
		return result{}, false
	}
	ch.Reason = ReasonInvalidMember
	ch.Message = fedcond.Truncate(fmt.Sprintf("cluster %q: the member's API server would refuse the %s: %v",
		ch.Cluster, describe(ch.Desired), errs.ToAggregate()), maxMessage)
	s.event(in.Object, eventWarning, ch.Reason, "%s", ch.Message)
	return result{Change: ch, err: fmt.Errorf("%s", ch.Message), transient: false}, true
}
