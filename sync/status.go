package sync

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/jsonvalue"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Sync owns status.clusters[].propagation, .message and .revision, which clusters the list
// holds, status.syncedRevision, status.observedGeneration, status.rollout and the Propagated
// and RolledBack conditions. Every
// other field (the scheduler's schedule, the collector's observed fields and aggregate) is
// carried over untouched: a status write is the object as read with sync's fields replaced,
// locked on its resourceVersion, and re-done on a fresh read after a Conflict.

// statusRetries bounds how often a status write is re-done after a Conflict in one pass.
const statusRetries = 3

// memberEntry is sync's part of one status.clusters[] entry.
type memberEntry struct {
	propagation, message string
	revision             int64
}

// writeStatus computes sync's fields from the pass's results and writes them when they
// changed. It reports whether it wrote.
func (s *Syncer) writeStatus(ctx context.Context, u *unstructured.Unstructured, fed *federation.FederatedObject, rev int64, t Targets, results []result, ro *rolloutPass) (bool, error) {
	entries := s.entries(fed, rev, results)
	synced := fed.Status.SyncedRevision
	var waiting, warned []string
	placed := 0
	for _, r := range results {
		if !r.Placed {
			continue
		}
		placed++
		switch e := entries[r.Cluster]; {
		case e.propagation != "":
			waiting = append(waiting, fmt.Sprintf("%s: %s", r.Cluster, e.propagation))
		case e.message != "":
			warned = append(warned, r.Cluster)
		}
	}
	if reachableInSync(results, entries) && ro.complete() {
		synced = rev
	}
	cond := condition(federation.ConditionPropagated, metav1.ConditionTrue, ReasonPropagated,
		fmt.Sprintf("revision %d runs in %d cluster(s)", rev, placed), fed.Generation)
	if len(waiting) > 0 {
		slices.Sort(waiting)
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNotPropagated
		cond.Message = fedcond.Truncate(fmt.Sprintf("revision %d runs in %d of %d cluster(s); waiting: %s",
			rev, placed-len(waiting), placed, summarize(waiting)), maxMessage)
	}
	if len(warned) > 0 {
		slices.Sort(warned)
		cond.Message = fedcond.Truncate(fmt.Sprintf("%s; the members of %s warned (status.clusters[].message)", cond.Message, summarize(warned)), maxMessage)
	}
	if note := ro.note(); note != "" {
		cond.Message = fedcond.Truncate(cond.Message+note, maxMessage)
	}
	if t.Unsatisfiable != "" {
		cond.Message = fedcond.Truncate(cond.Message+"; "+t.Unsatisfiable, maxMessage)
	}
	if placed == 0 {
		cond.Message = "placed in no cluster"
	}
	return s.updateStatus(ctx, u, func(status map[string]any) error {
		status["observedGeneration"] = fed.Generation
		if synced > 0 {
			status["syncedRevision"] = synced
		}
		setMemberEntries(status, entries)
		if err := s.setRollout(status, fed.Generation, ro); err != nil {
			return err
		}
		return s.setCondition(status, cond)
	})
}

// entries computes sync's status.clusters[] entries: every cluster where the object is
// placed, where it still is (waiting for removal, or a cluster that is not ready), or where
// something went wrong.
func (s *Syncer) entries(fed *federation.FederatedObject, rev int64, results []result) map[string]memberEntry {
	prev := make(map[string]federation.MemberStatus, len(fed.Status.Clusters))
	for _, c := range fed.Status.Clusters {
		prev[c.Name] = c
	}
	out := make(map[string]memberEntry, len(results))
	for _, r := range results {
		old := prev[r.Cluster]
		switch {
		case r.Reason != "":
			e := memberEntry{propagation: r.Reason, message: r.Message, revision: old.Revision}
			if r.Live != nil && managedBy(r.Live, s.opts.Identity) {
				e.revision = annotationRevision(r.Live)
			}
			out[r.Cluster] = e
		case r.Placed:
			// Placed clusters are always read (or known unchanged): no reason is in sync.
			out[r.Cluster] = memberEntry{revision: cmp.Or(r.Revision, rev), message: warnedMessage(r, old)}
		}
	}
	return out
}

// warnedText says what the member warned about r's write.
func warnedText(r result) string {
	return fmt.Sprintf("cluster %q warned: %s", r.Cluster, strings.Join(r.warnings, "; "))
}

// warnedMessage is the message of a cluster in sync: the warnings of the last write there
// (see result.warnings), kept while nothing is written there, replaced by the next write's.
func warnedMessage(r result, old federation.MemberStatus) string {
	switch {
	case r.wrote && len(r.warnings) > 0:
		return fedcond.Truncate(warnedText(r), maxMessage)
	case !r.wrote && old.Propagation == "":
		return old.Message
	}
	return ""
}

// reachableInSync reports whether every placed cluster that could be reached runs the current
// revision (then it is status.syncedRevision).
func reachableInSync(results []result, entries map[string]memberEntry) bool {
	for _, r := range results {
		if !r.Placed {
			continue
		}
		switch e := entries[r.Cluster]; e.propagation {
		case "", ReasonClusterNotReady, ReasonClusterUnreachable:
		default:
			return false
		}
	}
	return true
}

// summarize lists up to five items and counts the rest.
func summarize(items []string) string {
	const n = 5
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// setMemberEntries writes entries into status.clusters: sync's three fields of each entry
// are replaced, the other loops' fields kept; entries sync does not list are dropped; the list
// is sorted by name.
func setMemberEntries(status map[string]any, entries map[string]memberEntry) {
	old, _ := status["clusters"].([]any)
	byName := map[string]map[string]any{}
	for _, x := range old {
		if m, ok := x.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				byName[n] = m
			}
		}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	list := make([]any, 0, len(names))
	for _, n := range names {
		e := entries[n]
		if prev, ok := byName[n]; ok && sameEntry(prev, e) {
			list = append(list, prev) // unchanged: the same map, which compares at once
			continue
		}
		m := map[string]any{}
		for k, v := range byName[n] {
			m[k] = v
		}
		m["name"] = n
		setOrDelete(m, "propagation", e.propagation)
		setOrDelete(m, "message", e.message)
		if e.revision > 0 {
			m["revision"] = e.revision
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
func sameEntry(m map[string]any, e memberEntry) bool {
	p, _ := m["propagation"].(string)
	msg, _ := m["message"].(string)
	rev, hasRev := m["revision"]
	if p != e.propagation || msg != e.message {
		return false
	}
	if e.revision <= 0 {
		return !hasRev
	}
	return equalScalar(rev, e.revision)
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
			if m["reason"] == cond.Reason && m["message"] == cond.Message && equalScalar(m["observedGeneration"], cond.ObservedGeneration) {
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

// writeCondition writes only the Propagated condition and observedGeneration.
func (s *Syncer) writeCondition(ctx context.Context, u *unstructured.Unstructured, cond metav1.Condition) (bool, error) {
	return s.updateStatus(ctx, u, func(status map[string]any) error {
		status["observedGeneration"] = u.GetGeneration()
		return s.setCondition(status, cond)
	})
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

// normalizeJSON round-trips m through JSON so numbers compare alike (int vs int64 vs float64).
func normalizeJSON(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		return m
	}
	return toInt64(out).(map[string]any)
}

// toInt64 turns json.Numbers into int64 (or float64), as the API machinery decodes them.
func toInt64(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = toInt64(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = toInt64(e)
		}
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
