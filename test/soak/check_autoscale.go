package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/federation"
)

// autoscaleWatch is what the autoscaling rules remember from one check to the next.
type autoscaleWatch struct {
	totals map[federation.Key]*totalHistory
	// cutSince is, for each member cut off, the first check that found it so.
	cutSince map[string]time.Time
	// noMetrics is the member that never serves metrics.k8s.io.
	noMetrics string
}

// totalHistory is one autoscaled preference's fleet total as the checks saw it.
type totalHistory struct {
	last      int64       // status.autoscale.desiredReplicas at the last check; -1: none yet
	changes   int         // the changes the checks saw
	held      int         // the checks that found no quorum after one that found none
	dir       int         // the direction of the last change: 1 up, -1 down, 0 none yet
	turns     []time.Time // the checks that saw the direction change
	scheduled []string    // the clusters the schedule gave replicas at the last check
	lost      bool        // a majority of them had only stale data then
}

// checkAutoscale checks the autoscaling rules after a step (RuleNoThrash, RuleNeverZero).
func (w *World) checkAutoscale() {
	a := w.autoscale
	if a == nil {
		return
	}
	now := w.Clock.Now()
	w.mu.Lock()
	cut := maps.Clone(w.partition)
	w.mu.Unlock()
	for c := range a.cutSince {
		if !cut[c] {
			delete(a.cutSince, c)
		}
	}
	for c, on := range cut {
		if _, seen := a.cutSince[c]; on && !seen {
			a.cutSince[c] = now
		}
	}
	// A member cut off since before staleBy has nothing fresh: the autoscaler read it last
	// before it was cut, and that read is older than its freshness now.
	staleBy := now.Add(-autoscale.StaleAfter(autoscale.DefaultResyncPeriod) - w.Config.RoundStep)
	for _, key := range a.keys() {
		w.checkTotal(key, a.totals[key], now, staleBy)
	}
}

// checkTotal checks one preference's fleet total against what the last check saw.
func (w *World) checkTotal(key federation.Key, h *totalHistory, now, staleBy time.Time) {
	rsp, err := w.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	if err != nil {
		return
	}
	total, found, _ := unstructured.NestedInt64(rsp.Object, "status", "autoscale", "desiredReplicas")
	if !found {
		return // before the autoscaler's first decision
	}
	scheduled := w.scheduledClusters(key)
	lost := 0
	for _, c := range scheduled {
		if since, ok := w.autoscale.cutSince[c]; ok && !since.After(staleBy) {
			lost++
		}
	}
	noQuorum := len(scheduled) > 0 && 2*lost >= len(scheduled)
	obj := "ReplicaSchedulingPreference " + key.String()
	if total < scaledMin {
		w.violate(RuleNeverZero, obj, "status.autoscale.desiredReplicas is %d, below minReplicas %d", total, scaledMin)
	}
	if h.lost && noQuorum {
		h.held++
	}
	if h.last >= 0 && total != h.last {
		h.changes++
		if h.lost && noQuorum && slices.Equal(h.scheduled, scheduled) {
			w.violate(RuleNeverZero, obj, "the total moved %d -> %d without a quorum: %d of %v cut off for longer than their data stays fresh",
				h.last, total, lost, scheduled)
		}
		dir := 1
		if total < h.last {
			dir = -1
		}
		if h.dir != 0 && dir != h.dir {
			h.turns = append(h.turns, now)
			// The checks see a change up to a round after it happened.
			window := scaledWindow*time.Second - w.Config.RoundStep
			if n := len(h.turns); n >= 2 && h.turns[n-1].Sub(h.turns[n-2]) < window {
				w.violate(RuleNoThrash, obj, "the total changed direction twice within its %ds window (%d -> %d): turns at %s and %s",
					scaledWindow, h.last, total, h.turns[n-2].Format(time.TimeOnly), h.turns[n-1].Format(time.TimeOnly))
			}
		}
		h.dir = dir
	}
	h.last, h.scheduled, h.lost = total, scheduled, noQuorum
}

// scheduledClusters lists the clusters key's FederatedDeployment's schedule gives replicas,
// sorted.
func (w *World) scheduledClusters(key federation.Key) []string {
	u, err := w.Host.Peek(federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return nil
	}
	clusters, _, _ := unstructured.NestedSlice(u.Object, "status", "schedule", "clusters")
	var out []string
	for _, c := range clusters {
		m, _ := c.(map[string]any)
		if n, _, _ := unstructured.NestedInt64(m, "replicas"); n > 0 {
			out = append(out, fmt.Sprint(m["name"]))
		}
	}
	slices.Sort(out)
	return out
}

// summary says, for -soak.v, what the autoscaling rules saw of each total.
func (a *autoscaleWatch) summary() string {
	var out []string
	for _, key := range a.keys() {
		h := a.totals[key]
		out = append(out, fmt.Sprintf("%s: %d changes, %d turns, %d checks without a quorum, last %d", key, h.changes, len(h.turns), h.held, h.last))
	}
	return strings.Join(out, "; ")
}

// keys are the autoscaled preferences' keys, sorted: the checks run in a fixed order.
func (a *autoscaleWatch) keys() []federation.Key {
	return slices.SortedFunc(maps.Keys(a.totals), func(x, y federation.Key) int { return strings.Compare(x.String(), y.String()) })
}
