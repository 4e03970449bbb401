package sync

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// What the Syncer remembers between passes is an optimisation and a courtesy, never a source
// of truth: after a restart every member object is rendered and compared once, and every
// conflicting name is tried once more.

// memoryOf is what the Syncer remembers of key's member objects, as plan.Decide reads it
// (plan.Input.Memory).
func (s *Syncer) memoryOf(key federation.Key) plan.Memory { return objectMemory{s, key} }

// objectMemory is the Syncer's memory of one federated object's member objects.
type objectMemory struct {
	s   *Syncer
	key federation.Key
}

func (m objectMemory) Verified(cluster string) plan.Verified { return m.s.verifiedAt(m.key, cluster) }

// verifiedAt returns what sync last wrote or verified for key in cluster.
func (s *Syncer) verifiedAt(key federation.Key, cluster string) plan.Verified {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.verified[key][cluster]
}

// setVerified records v for key in cluster; a zero v forgets it.
func (s *Syncer) setVerified(key federation.Key, cluster string, v plan.Verified) {
	s.mu.Lock()
	defer s.mu.Unlock()
	put(s.verified, key, cluster, v, v.ResourceVersion != "")
}

// setConflicted records (or clears) that key's name is someone else's in cluster.
func (s *Syncer) setConflicted(key federation.Key, cluster string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	put(s.conflicts, key, cluster, true, on)
}

// wrote records a successful write for key in cluster in one locked step: the name is sync's
// (no conflict), and, when set, v is what sync verified (a zero v forgets it). The write's
// in-flight mark ends after (endWrite), once the version is known.
func (s *Syncer) wrote(key federation.Key, cluster string, v plan.Verified, set bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	put(s.conflicts, key, cluster, true, false)
	if set {
		put(s.verified, key, cluster, v, v.ResourceVersion != "")
	}
}

// recall returns what sync verified for key in cluster and whether the name is someone
// else's there, with one read lock.
func (s *Syncer) recall(key federation.Key, cluster string) (plan.Verified, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.verified[key][cluster], s.conflicts[key][cluster]
}

// revisionMemo is the revision sync found for one generation of a federated object.
type revisionMemo struct {
	uid        string
	generation int64
	revision   int64
}

// knownRevision returns the revision recorded for key's uid and generation, if any.
func (s *Syncer) knownRevision(key federation.Key, uid string, generation int64) (int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.revisions[key]
	if !ok || m.uid != uid || m.generation != generation {
		return 0, false
	}
	return m.revision, true
}

func (s *Syncer) setKnownRevision(key federation.Key, uid string, generation, revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revisions[key] = revisionMemo{uid: uid, generation: generation, revision: revision}
}

// startWrite marks a write of sync's own in progress for key in cluster: the member cache's
// notifications meanwhile (the fake sends the write's own before the write returns) are
// judged when it ends (endWrite), once the version it leaves is known.
func (s *Syncer) startWrite(key federation.Key, cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight[memberKey{key, cluster}] = inFlightWrite{}
}

// endWrite ends the write startWrite marked, which left the member at resourceVersion
// written ("" when it failed or deleted the object), and passes over key again when a
// notification seen meanwhile was of another version: someone else changed the object
// while sync wrote (a hand edit right after a create), and nothing else would bring sync
// back to it before the resync.
func (s *Syncer) endWrite(key federation.Key, cluster, written string) {
	s.mu.Lock()
	mk := memberKey{key, cluster}
	w := s.inFlight[mk]
	delete(s.inFlight, mk)
	enqueue := s.enqueue
	s.mu.Unlock()
	if written == "" || enqueue == nil || !w.other(written) {
		return
	}
	enqueue(key)
}

// inFlightWrite is what the member cache notified while one write was under way: up to two
// versions (a write's own notification and one more), and how many there were.
type inFlightWrite struct {
	seen [2]string
	n    int
}

// other reports whether a notified version was not written, or too many came to tell.
func (w inFlightWrite) other(written string) bool {
	if w.n > len(w.seen) {
		return true
	}
	for _, rv := range w.seen[:w.n] {
		if rv != written {
			return true
		}
	}
	return false
}

// memberKey names one federated object's member object in one cluster.
type memberKey struct {
	key     federation.Key
	cluster string
}

// memberChange tells Run's member notification handler whether cluster is leaving the
// federation and, when owned, whether the member object's version rv is sync's own doing:
// the version sync last wrote or verified, or, while a write is in progress, possibly (the
// write's end judges it: endWrite). It read-locks the Syncer, and write-locks it only to note
// a version seen during a write.
func (s *Syncer) memberChange(cluster string, key federation.Key, owned bool, rv string) (leaving, own bool) {
	mk := memberKey{key, cluster}
	s.mu.RLock()
	leaving = s.leaving[cluster]
	_, writing := s.inFlight[mk]
	if owned && !writing {
		v := s.verified[key][cluster]
		own = v.ResourceVersion != "" && v.ResourceVersion == rv
	}
	s.mu.RUnlock()
	if !owned || !writing {
		return leaving, own
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.inFlight[mk]; ok {
		if w.n < len(w.seen) {
			w.seen[w.n] = rv
		}
		w.n++
		s.inFlight[mk] = w
		return leaving, true // judged when the write ends
	}
	v := s.verified[key][cluster] // the write ended meanwhile
	return leaving, v.ResourceVersion != "" && v.ResourceVersion == rv
}

// hostWrites is what sync knows of its own writes to one federated object and its history.
type hostWrites struct {
	// rvs are the resourceVersions sync's last three writes left (a pass writes at most a
	// ControllerRevision, the object's metadata and its status).
	rvs [3]string
	// writing is set while a write is under way: the version it leaves is not known yet, so
	// the changes seen meanwhile wait in pending until it is.
	writing bool
	pending []string
	// missed is set when one of them was not sync's own: the pass under way may not have
	// seen it, and Run passes over the object again.
	missed bool
}

// hostWrite runs write, one of sync's own writes for the federated object key (to it, or to
// its history), and remembers the version it leaves (see changedByOthers).
func (s *Syncer) hostWrite(key federation.Key, write func() (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	w := s.hostWrites[key]
	w.writing = true
	s.hostWrites[key] = w
	s.mu.Unlock()
	out, err := write()
	s.mu.Lock()
	defer s.mu.Unlock()
	w = s.hostWrites[key]
	if err == nil && out != nil {
		w.rvs = [3]string{w.rvs[1], w.rvs[2], out.GetResourceVersion()}
	}
	for _, rv := range w.pending {
		w.missed = w.missed || !w.own(rv)
	}
	w.writing, w.pending = false, nil
	s.hostWrites[key] = w
	return out, err
}

func (w hostWrites) own(rv string) bool {
	return rv != "" && (rv == w.rvs[0] || rv == w.rvs[1] || rv == w.rvs[2])
}

// changedByOthers reports whether a change to the federated object key, or to its history,
// that left resourceVersion rv may be someone else's. Sync's writes are locked on the version
// its pass read (a ControllerRevision is new), so a version one of them left holds no one
// else's change: it brings nothing a pass has not seen, and Run does not pass over the object
// for it. A change seen while a write is under way is judged once that write is done.
func (s *Syncer) changedByOthers(key federation.Key, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.hostWrites[key]
	switch {
	case !ok:
		return true
	case w.own(rv):
		return false
	case w.writing:
		w.pending = append(w.pending, rv)
		s.hostWrites[key] = w
		return false
	}
	return true
}

// missedChange reports, once, whether a change that was not sync's own arrived for key while
// one of its writes was under way (see changedByOthers).
func (s *Syncer) missedChange(key federation.Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.hostWrites[key]
	if !ok || !w.missed {
		return false
	}
	w.missed = false
	s.hostWrites[key] = w
	return true
}

// put sets m[key][cluster] to v when keep, and deletes it otherwise, creating and dropping the
// inner map as needed. The caller holds s.mu.
func put[V any](m map[federation.Key]map[string]V, key federation.Key, cluster string, v V, keep bool) {
	inner := m[key]
	if !keep {
		delete(inner, cluster)
		if len(inner) == 0 {
			delete(m, key)
		}
		return
	}
	if inner == nil {
		inner = map[string]V{}
		m[key] = inner
	}
	inner[cluster] = v
}
