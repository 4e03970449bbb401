package sync

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonvalue"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
	"github.com/fedkit/fedkit/sync/plan"
)

// Sync owns status.clusters[].propagation, .message and .revision, which clusters the list
// holds, status.syncedRevision, status.observedGeneration, status.rollout and the Propagated
// and RolledBack conditions, which plan.Report decides. Every other field (the scheduler's
// schedule, the collector's observed fields and aggregate) is carried over untouched: a
// status write is the object as read with sync's fields replaced, locked on its
// resourceVersion, and re-done on a fresh read after a Conflict.

// statusRetries bounds how often a status write is re-done after a Conflict in one pass.
const statusRetries = 3

// writeStatus writes st (plan.Result.Status) over u's status when that changes it, and
// reports whether it wrote. A nil st writes nothing.
func (s *Syncer) writeStatus(ctx context.Context, u *unstructured.Unstructured, st *plan.Status) (bool, error) {
	if st == nil {
		return false, nil
	}
	return s.updateStatus(ctx, u, func(status map[string]any) error { return s.applyStatus(status, st) })
}

// applyStatus sets sync's fields of status (unstructured) that st writes.
func (s *Syncer) applyStatus(status map[string]any, st *plan.Status) error {
	if st.ObservedGeneration > 0 {
		status["observedGeneration"] = st.ObservedGeneration
	}
	if st.SyncedRevision > 0 {
		status["syncedRevision"] = st.SyncedRevision
	}
	if st.SetClusters {
		setMemberEntries(status, st.Clusters)
	}
	if st.SetRollout {
		if err := setRollout(status, st.Rollout); err != nil {
			return err
		}
	}
	for _, c := range st.Conditions {
		if err := s.setCondition(status, c); err != nil {
			return err
		}
	}
	return nil
}

// setRollout writes status.rollout, removing it for nil.
func setRollout(status map[string]any, r *federation.RolloutStatus) error {
	if r == nil {
		delete(status, "rollout")
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
	if err != nil {
		return fmt.Errorf("encode status.rollout: %w", err)
	}
	status["rollout"] = m
	return nil
}

// record records events on obj: those of OnChange, or the others.
func (s *Syncer) record(obj *unstructured.Unstructured, events []plan.Event, onChange bool) {
	for _, e := range events {
		if e.OnChange == onChange {
			s.event(obj, e.Type, e.Reason, "%s", e.Message)
		}
	}
}

// setMemberEntries writes entries (sorted by name) into status.clusters: sync's three fields
// of each entry are replaced, the other loops' fields kept; entries sync does not list are
// dropped.
func setMemberEntries(status map[string]any, entries []plan.ClusterStatus) {
	old, _ := status["clusters"].([]any)
	byName := map[string]map[string]any{}
	for _, x := range old {
		if m, ok := x.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				byName[n] = m
			}
		}
	}
	list := make([]any, 0, len(entries))
	for _, e := range entries {
		n := e.Name
		if prev, ok := byName[n]; ok && sameEntry(prev, e) {
			list = append(list, prev) // unchanged: the same map, which compares at once
			continue
		}
		m := map[string]any{}
		for k, v := range byName[n] {
			m[k] = v
		}
		m["name"] = n
		setOrDelete(m, "propagation", e.Propagation)
		setOrDelete(m, "message", e.Message)
		if e.Revision > 0 {
			m["revision"] = e.Revision
		} else {
			delete(m, "revision")
		}
		list = append(list, m)
	}
	if len(list) == 0 {
		delete(status, "clusters")
		return
	}
	status["clusters"] = list
}

// sameEntry reports whether an existing status.clusters[] entry already holds e's fields.
func sameEntry(m map[string]any, e plan.ClusterStatus) bool {
	p, _ := m["propagation"].(string)
	msg, _ := m["message"].(string)
	rev, hasRev := m["revision"]
	if p != e.Propagation || msg != e.Message {
		return false
	}
	if e.Revision <= 0 {
		return !hasRev
	}
	return jsonvalue.Equal(rev, e.Revision)
}

func setOrDelete(m map[string]any, k, v string) {
	if v == "" {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// setCondition sets cond in status.conditions, keeping lastTransitionTime when the status did
// not change, and the entry untouched when nothing did. It works on the unstructured list, so
// an unchanged condition costs no conversion.
func (s *Syncer) setCondition(status map[string]any, cond metav1.Condition) error {
	list, _ := status["conditions"].([]any)
	idx := -1
	for i, x := range list {
		if m, ok := x.(map[string]any); ok && m["type"] == cond.Type {
			idx = i
			break
		}
	}
	if idx >= 0 {
		m := list[idx].(map[string]any)
		if m["status"] == string(cond.Status) {
			if m["reason"] == cond.Reason && m["message"] == cond.Message && jsonvalue.Equal(m["observedGeneration"], cond.ObservedGeneration) {
				return nil
			}
			if t, ok := m["lastTransitionTime"].(string); ok {
				if parsed, err := time.Parse(time.RFC3339, t); err == nil {
					cond.LastTransitionTime = metav1.NewTime(parsed)
				}
			}
		}
	}
	if cond.LastTransitionTime.IsZero() {
		cond.LastTransitionTime = metav1.NewTime(s.opts.Clock.Now().Truncate(time.Second))
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cond)
	if err != nil {
		return fmt.Errorf("encode condition: %w", err)
	}
	out := slices.Clone(list)
	if idx >= 0 {
		out[idx] = m
	} else {
		out = append(out, m)
	}
	status["conditions"] = out
	return nil
}

// updateStatus applies mutate to a copy of u's status and writes it when it changed, locked on
// u's resourceVersion; after a Conflict it reads the object again and re-applies mutate.
func (s *Syncer) updateStatus(ctx context.Context, u *unstructured.Unstructured, mutate func(map[string]any) error) (bool, error) {
	gvr := s.typ.FederatedGVR()
	for attempt := 0; ; attempt++ {
		// The mutations replace values, never change a map or slice of old in place, so a
		// shallow copy is enough.
		old, _ := u.Object["status"].(map[string]any)
		if old == nil {
			old = map[string]any{}
		}
		status := maps.Clone(old)
		if err := mutate(status); err != nil {
			return false, fmt.Errorf("sync: status of %s %s: %w", s.typ.Federated.Kind, keyOf(u), err)
		}
		// Most passes change nothing. Numbers compare by value: what was read was decoded
		// from JSON, what mutate set comes from Go.
		if jsonvalue.Equal(old, status) {
			return false, nil
		}
		if w := s.opts.StatusWriter; w != nil {
			// Handed to the shared writer, merged with the other loops' changes.
			if err := w.WriteStatus(fedmetrics.LoopSync, gvr, u, mutate); err != nil {
				return false, fmt.Errorf("sync: status of %s %s: %w", s.typ.Federated.Kind, keyOf(u), err)
			}
			return true, nil
		}
		// The object as read with the new status: the client encodes it and keeps nothing,
		// so the rest is shared with u rather than copied.
		out := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
		out.Object["status"] = status
		_, err := s.hostWrite(keyOf(u), func() (*unstructured.Unstructured, error) {
			return s.host.UpdateStatus(ctx, gvr, out)
		})
		if err == nil {
			return true, nil
		}
		if !apierrors.IsConflict(err) || attempt >= statusRetries {
			return false, fmt.Errorf("sync: write status of %s %s: %w", s.typ.Federated.Kind, keyOf(u), err)
		}
		fresh, err := s.host.Get(ctx, gvr, u.GetNamespace(), u.GetName())
		if err != nil {
			return false, fmt.Errorf("sync: write status of %s %s: %w", s.typ.Federated.Kind, keyOf(u), err)
		}
		u = fresh
	}
}
