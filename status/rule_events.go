package status

import (
	"context"
	"errors"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/kinds"
)

// EventKindRulesFailed is the reason of the Collector's Warning when a kind's rules fail on a
// member object, or do not compile: the member is reported not ready with the same message
// in the Ready condition. One Event per object, cluster and message, not one per pass.
const EventKindRulesFailed = "KindRulesFailed"

// ruleEvents remembers, per object and cluster, the last rules error reported, so each new
// one is an Event once.
type ruleEvents struct {
	mu      sync.Mutex
	last    map[federation.Key]map[string]string
	pending map[federation.Key][]string
}

// observed records cluster's extraction error of key (nil: none, or not a rules error).
func (r *ruleEvents) observed(key federation.Key, cluster string, err error) {
	msg := ""
	if errors.Is(err, kinds.ErrRuleFailed) || errors.Is(err, kinds.ErrInvalidRules) {
		msg = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last[key][cluster] == msg {
		return
	}
	if r.last == nil {
		r.last, r.pending = map[federation.Key]map[string]string{}, map[federation.Key][]string{}
	}
	if msg == "" {
		delete(r.last[key], cluster)
		return
	}
	if r.last[key] == nil {
		r.last[key] = map[string]string{}
	}
	r.last[key][cluster] = msg
	r.pending[key] = append(r.pending[key], "cluster "+cluster+": "+msg)
}

// report records the pending Events of key on u.
func (r *ruleEvents) report(ctx context.Context, rec federation.EventRecorder, u runtime.Object, key federation.Key) {
	r.mu.Lock()
	msgs := r.pending[key]
	delete(r.pending, key)
	r.mu.Unlock()
	slices.Sort(msgs)
	for _, m := range msgs {
		event(ctx, rec, u, federation.EventTypeWarning, EventKindRulesFailed, m)
	}
}

func (r *ruleEvents) forget(key federation.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, key)
	delete(r.pending, key)
}
