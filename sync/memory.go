package sync

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// What the Syncer remembers between passes is an optimisation and a courtesy, never a source
// of truth: after a restart every member object is rendered and compared once, every
// conflicting name is tried once more, every history is read once. It is one record per
// federated object, under the Syncer's one lock, and forget drops the record whole when the
// object is gone. What plan.Decide needs of it is plan.Input.Memory (memoryOf).

// record is what the Syncer remembers of one federated object.
type record struct {
	// members is what it knows of each member object, by cluster.
	members map[string]*memberRecord
	// decoded is the object decoded and defaulted, for its resourceVersion (see decode).
	decoded *federation.FederatedObject
	// revision is the revision found for the object's uid and generation, so a pass over an
	// unchanged spec reads no history; historyStale marks a history to read again: Run saw
	// one of its ControllerRevisions deleted (historyDeleted).
	revision     revisionMemo
	historyStale bool
	// host is what sync knows of its own writes to the object and its history (hostWrite).
	host hostWrites
	// nsWaits are the clusters whose member namespace the object's last pass waited for
	// (noteNamespaceWaits): Run passes over it again when the namespace appears there.
	nsWaits []string
	// lagSince is when sync first saw a change of the object (a generation it had not
	// recorded in status.observedGeneration) that has not reached every placed cluster yet:
	// the start of its propagation lag; zero when none is running.
	lagSince time.Time
}

// memberRecord is what the Syncer knows of one member object.
type memberRecord struct {
	// verified is what sync last wrote, or found in line with the render, so an unchanged
	// object is not compared field by field (plan.Verified).
	verified plan.Verified
	// conflicted: an object of the same name is someone else's, so later passes read it
	// live instead of trying a create that must fail.
	conflicted bool
	// writing is set while a write of sync's own is under way (startWrite), with the versions
	// the member cache notified meanwhile.
	writing *inFlightWrite
}

// empty reports whether m remembers nothing: it is dropped.
func (m *memberRecord) empty() bool {
	return m.verified.ResourceVersion == "" && !m.conflicted && m.writing == nil
}

// recordOf returns key's record, made when there is none. The caller holds s.mu for writing.
func (s *Syncer) recordOf(key federation.Key) *record {
	r := s.objects[key]
	if r == nil {
		r = &record{}
		s.objects[key] = r
	}
	return r
}

// memberOf returns key's record of its member object in cluster, made when there is none.
// The caller holds s.mu for writing, and calls tidy after changing it.
func (s *Syncer) memberOf(key federation.Key, cluster string) *memberRecord {
	r := s.recordOf(key)
	if r.members == nil {
		r.members = map[string]*memberRecord{}
	}
	m := r.members[cluster]
	if m == nil {
		m = &memberRecord{}
		r.members[cluster] = m
	}
	return m
}

// tidy drops key's record of its member object in cluster when it remembers nothing. The
// caller holds s.mu for writing.
func (s *Syncer) tidy(key federation.Key, cluster string) {
	if r := s.objects[key]; r != nil {
		if m := r.members[cluster]; m != nil && m.empty() {
			delete(r.members, cluster)
		}
	}
}

// member returns what the Syncer knows of key's member object in cluster (zero when
// nothing). The caller holds s.mu.
func (s *Syncer) member(key federation.Key, cluster string) memberRecord {
	if r := s.objects[key]; r != nil {
		if m := r.members[cluster]; m != nil {
			return *m
		}
	}
	return memberRecord{}
}

// forget drops what the Syncer remembers about an object that is gone.
func (s *Syncer) forget(key federation.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.objects[key]; r != nil {
		s.unindexNamespaceWaits(key, r)
	}
	delete(s.objects, key)
}

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
	return s.member(key, cluster).verified
}

// setVerified records v for key in cluster; a zero v forgets it.
func (s *Syncer) setVerified(key federation.Key, cluster string, v plan.Verified) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memberOf(key, cluster).verified = v
	s.tidy(key, cluster)
}

// setConflicted records (or clears) that key's name is someone else's in cluster.
func (s *Syncer) setConflicted(key federation.Key, cluster string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memberOf(key, cluster).conflicted = on
	s.tidy(key, cluster)
}

// wrote records a successful write for key in cluster in one locked step: the name is sync's
// (no conflict), and, when set, v is what sync verified (a zero v forgets it). The write's
// in-flight mark ends after (endWrite), once the version is known.
func (s *Syncer) wrote(key federation.Key, cluster string, v plan.Verified, set bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.memberOf(key, cluster)
	m.conflicted = false
	if set {
		m.verified = v
	}
	s.tidy(key, cluster)
}

// recall returns what sync verified for key in cluster and whether the name is someone
// else's there, with one read lock.
func (s *Syncer) recall(key federation.Key, cluster string) (plan.Verified, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.member(key, cluster)
	return m.verified, m.conflicted
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
	r := s.objects[key]
	if r == nil || r.revision.uid != uid || r.revision.generation != generation {
		return 0, false
	}
	return r.revision.revision, true
}

func (s *Syncer) setKnownRevision(key federation.Key, uid string, generation, revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordOf(key).revision = revisionMemo{uid: uid, generation: generation, revision: revision}
}

// markHistoryStale makes the next pass over key read its history again, and counts one more
// deletion seen (see historyDeleted).
func (s *Syncer) markHistoryStale(key federation.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.historyEpoch++
	s.recordOf(key).historyStale = true
}

// historyCheck reports whether key's history must be read again (historyDeleted), with the
// count of deletions seen so far.
func (s *Syncer) historyCheck(key federation.Key) (bool, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.objects[key]
	return r != nil && r.historyStale, s.historyEpoch
}

// historyChecked clears key's mark once a pass has read its history, unless another
// ControllerRevision was deleted after the pass began: the cache it read may not have
// shown that deletion yet.
func (s *Syncer) historyChecked(key federation.Key, epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.objects[key]; r != nil && s.historyEpoch == epoch {
		r.historyStale = false
	}
}

// decoded returns key's object as decoded for its last resourceVersion, nil when none.
func (s *Syncer) decoded(key federation.Key) *federation.FederatedObject {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.objects[key]; r != nil {
		return r.decoded
	}
	return nil
}

// keepDecoded remembers fed, key's object decoded and defaulted.
func (s *Syncer) keepDecoded(key federation.Key, fed *federation.FederatedObject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordOf(key).decoded = fed
}

// lagStarts starts key's propagation lag at now when fed has a generation sync has not
// recorded yet and no earlier change is still on its way: the lag of overlapping changes is
// measured from the oldest, as the fleet lags the spec since then.
func (s *Syncer) lagStarts(key federation.Key, fed *federation.FederatedObject, now time.Time) {
	if fed.Generation <= fed.Status.ObservedGeneration {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.recordOf(key); r.lagSince.IsZero() {
		r.lagSince = now
	}
}

// lagEnds ends key's propagation lag, and returns when it started; ok is false when none
// was running.
func (s *Syncer) lagEnds(key federation.Key) (since time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.objects[key]
	if r == nil || r.lagSince.IsZero() {
		return time.Time{}, false
	}
	since, r.lagSince = r.lagSince, time.Time{}
	return since, true
}

// startWrite marks a write of sync's own in progress for key in cluster: the member cache's
// notifications meanwhile (the fake sends the write's own before the write returns) are
// judged when it ends (endWrite), once the version it leaves is known.
func (s *Syncer) startWrite(key federation.Key, cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memberOf(key, cluster).writing = &inFlightWrite{}
}

// endWrite ends the write startWrite marked, which left the member at resourceVersion
// written ("" when it failed or deleted the object), and passes over key again when a
// notification seen meanwhile was of another version: someone else changed the object
// while sync wrote (a hand edit right after a create), and nothing else would bring sync
// back to it before the resync.
func (s *Syncer) endWrite(key federation.Key, cluster, written string) {
	s.mu.Lock()
	m := s.memberOf(key, cluster)
	w := m.writing
	m.writing = nil
	s.tidy(key, cluster)
	enqueue := s.enqueue
	s.mu.Unlock()
	if written == "" || enqueue == nil || w == nil || !w.other(written) {
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

// memberChange tells Run's member notification handler whether cluster is leaving the
// federation and, when owned, whether the member object's version rv is sync's own doing:
// the version sync last wrote or verified, or, while a write is in progress, possibly (the
// write's end judges it: endWrite). It read-locks the Syncer, and write-locks it only to note
// a version seen during a write.
func (s *Syncer) memberChange(cluster string, key federation.Key, owned bool, rv string) (leaving, own bool) {
	s.mu.RLock()
	leaving = s.leaving[cluster]
	m := s.member(key, cluster)
	if owned && m.writing == nil {
		own = m.verified.ResourceVersion != "" && m.verified.ResourceVersion == rv
	}
	s.mu.RUnlock()
	if !owned || m.writing == nil {
		return leaving, own
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m = s.member(key, cluster)
	if w := m.writing; w != nil {
		if w.n < len(w.seen) {
			w.seen[w.n] = rv
		}
		w.n++
		return leaving, true // judged when the write ends
	}
	// The write ended meanwhile.
	return leaving, m.verified.ResourceVersion != "" && m.verified.ResourceVersion == rv
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
	s.recordOf(key).host.writing = true
	s.mu.Unlock()
	out, err := write()
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &s.recordOf(key).host
	if err == nil && out != nil {
		w.rvs = [3]string{w.rvs[1], w.rvs[2], out.GetResourceVersion()}
	}
	for _, rv := range w.pending {
		w.missed = w.missed || !w.own(rv)
	}
	w.writing, w.pending = false, nil
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
	r, ok := s.objects[key]
	switch {
	case !ok:
		return true
	case r.host.own(rv):
		return false
	case r.host.writing:
		r.host.pending = append(r.host.pending, rv)
		return false
	}
	return true
}

// missedChange reports, once, whether a change that was not sync's own arrived for key while
// one of its writes was under way (see changedByOthers).
func (s *Syncer) missedChange(key federation.Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.objects[key]
	if !ok || !r.host.missed {
		return false
	}
	r.host.missed = false
	return true
}

// memberNamespace is a namespace in one member cluster.
type memberNamespace struct{ cluster, namespace string }

// waitForNamespaces records that key's last pass waited for its member namespace in
// clusters (none: it waits for none), in its record and in the Syncer's index of waits by
// namespace (nsWaiting); it returns the clusters where no object waited for that namespace
// before.
func (s *Syncer) waitForNamespaces(key federation.Key, clusters []string) (first []string) {
	s.mu.RLock()
	r, none := s.objects[key], len(s.nsWaiting) == 0
	idle := len(clusters) == 0 && (none || r == nil || len(r.nsWaits) == 0)
	s.mu.RUnlock()
	if idle {
		return nil // what almost every pass finds: no lock taken for writing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r = s.recordOf(key)
	s.unindexNamespaceWaits(key, r)
	r.nsWaits = clusters
	for _, cluster := range clusters {
		m := memberNamespace{cluster, key.Namespace}
		if s.nsWaiting[m] == nil {
			s.nsWaiting[m] = map[federation.Key]bool{}
			first = append(first, cluster)
		}
		s.nsWaiting[m][key] = true
	}
	return first
}

// unindexNamespaceWaits removes r's waits, key's, from the Syncer's index. The caller holds
// s.mu for writing.
func (s *Syncer) unindexNamespaceWaits(key federation.Key, r *record) {
	for _, cluster := range r.nsWaits {
		m := memberNamespace{cluster, key.Namespace}
		if set := s.nsWaiting[m]; set != nil {
			if delete(set, key); len(set) == 0 {
				delete(s.nsWaiting, m)
			}
		}
	}
	r.nsWaits = nil
}

// namespaceWaiters returns the objects waiting for namespace ns in cluster.
func (s *Syncer) namespaceWaiters(cluster, ns string) []federation.Key {
	s.mu.RLock()
	defer s.mu.RUnlock()
	set := s.nsWaiting[memberNamespace{cluster, ns}]
	out := make([]federation.Key, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	return out
}
