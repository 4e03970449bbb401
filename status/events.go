package status

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// EventClustersStale is the reason of the Collector's Warning when clusters of a federated
// object go stale while its Ready condition keeps its status and reason (a transition of Ready
// is an event of its own, with the condition's reason).
const EventClustersStale = "ClustersStale"

// report records the transitions a status write of u made, comparing the status before (old)
// with agg: Ready changing status or reason is an event with the condition's reason (Normal
// when it turned True, Warning otherwise); otherwise, clusters going stale are a Warning
// naming them. A write that changed neither (new numbers during a rollout) records nothing,
// nor does a new object's first Ready=False NotReady.
func (c *Collector) report(ctx context.Context, u runtime.Object, old *federation.FederatedStatus, agg *Aggregation) {
	prev := meta.FindStatusCondition(old.Conditions, federation.ConditionReady)
	if prev == nil && agg.Ready.Reason == ReasonNotReady {
		// A new object's members not ready yet (or not observed yet) is where every object
		// starts, not a transition to warn about: one Warning per new object would be one
		// more host write each. Ready turning True is recorded.
		return
	}
	if prev == nil || prev.Status != agg.Ready.Status || prev.Reason != agg.Ready.Reason {
		typ := federation.EventTypeWarning
		if agg.Ready.Status == metav1.ConditionTrue {
			typ = federation.EventTypeNormal
		}
		event(ctx, c.opts.Events, u, typ, agg.Ready.Reason, agg.Ready.Message)
		return
	}
	was := staleIn(old.Clusters)
	var gone []string
	for name := range staleIn(agg.Clusters) {
		if !was[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		event(ctx, c.opts.Events, u, federation.EventTypeWarning, EventClustersStale, "no fresh data from: "+strings.Join(gone, ", "))
	}
}

// readinessEvent records a Cluster's Ready transition: Normal when it turned True, Warning
// otherwise, with the condition's reason and message.
func (m *ClusterMonitor) readinessEvent(ctx context.Context, u runtime.Object, ready metav1.Condition) {
	typ := federation.EventTypeWarning
	if ready.Status == metav1.ConditionTrue {
		typ = federation.EventTypeNormal
	}
	event(ctx, m.opts.Events, u, typ, ready.Reason, ready.Message)
}

// failoverEvent records a change of a Cluster's failover stage: Normal when it recovered,
// Warning otherwise, with the Failover condition's reason and message.
func (m *ClusterMonitor) failoverEvent(ctx context.Context, u runtime.Object, stage metav1.Condition) {
	typ := federation.EventTypeWarning
	if stage.Reason == ReasonFailoverRecovered {
		typ = federation.EventTypeNormal
	}
	event(ctx, m.opts.Events, u, typ, stage.Reason, stage.Message)
}

// credentialsEvent records a change of a Cluster's CredentialsExpiring condition: Warning
// while it is True (expiring, expired), Normal once renewed.
func (m *ClusterMonitor) credentialsEvent(ctx context.Context, u runtime.Object, c metav1.Condition) {
	typ := federation.EventTypeNormal
	if c.Status == metav1.ConditionTrue {
		typ = federation.EventTypeWarning
	}
	event(ctx, m.opts.Events, u, typ, c.Reason, c.Message)
}

// staleIn returns the names of the entries marked stale.
func staleIn(entries []federation.MemberStatus) map[string]bool {
	var out map[string]bool
	for i := range entries {
		if entries[i].Stale {
			if out == nil {
				out = map[string]bool{}
			}
			out[entries[i].Name] = true
		}
	}
	return out
}

// event records an event on obj through rec (nil: none) and logs it (loop.Event).
func event(ctx context.Context, rec federation.EventRecorder, obj runtime.Object, typ, reason, msg string) {
	loop.Event(ctx, rec, obj, typ, reason, msg)
}
