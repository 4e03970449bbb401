package sync

import "github.com/fedkit/fedkit/federation"

// What the Syncer remembers between passes is an optimisation and a courtesy, never a source
// of truth: after a restart every member object is rendered and compared once, and every
// conflicting name is tried once more.

// verification is what sync knows about a member object it wrote or checked: its
// resourceVersion then, and the key of the render input it was checked against (see
// inputKey). While both still hold, the cluster needs neither a render nor a comparison.
// dropped are the owned paths the member's server did not keep when sync last wrote the
// object (fields its types do not have): see MemberState.Dropped.
type verification struct {
	rv, input string
	dropped   []string
}

// verifiedAt returns what sync last wrote or verified for key in cluster.
func (s *Syncer) verifiedAt(key federation.Key, cluster string) verification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.verified[key][cluster]
}

// setVerified records v for key in cluster; a zero v forgets it.
func (s *Syncer) setVerified(key federation.Key, cluster string, v verification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	put(s.verified, key, cluster, v, v.rv != "")
}

// conflicted reports whether key's name was found taken by someone else in cluster.
func (s *Syncer) conflicted(key federation.Key, cluster string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conflicts[key][cluster]
}

// setConflicted records (or clears) that key's name is someone else's in cluster.
func (s *Syncer) setConflicted(key federation.Key, cluster string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	put(s.conflicts, key, cluster, true, on)
}

// revisionMemo is the revision sync found for one generation of a federated object.
type revisionMemo struct {
	uid        string
	generation int64
	revision   int64
}

// knownRevision returns the revision recorded for key's uid and generation, if any.
func (s *Syncer) knownRevision(key federation.Key, uid string, generation int64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
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

// writing marks a write of sync's own in progress for key in cluster: the member cache's
// notification of it (which the fake sends before the write returns) is not a change to react
// to.
func (s *Syncer) writing(key federation.Key, cluster string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	put(s.inFlight, key, cluster, true, on)
}

// ownWrite reports whether a member object notified by the member cache is sync's own doing:
// a write in progress, or the version sync last wrote or verified.
func (s *Syncer) ownWrite(key federation.Key, cluster, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[key][cluster] {
		return true
	}
	v := s.verified[key][cluster]
	return v.rv != "" && v.rv == rv
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
