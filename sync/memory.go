package sync

import "github.com/fedkit/fedkit/federation"

// What the Syncer remembers between passes is an optimisation and a courtesy, never a source
// of truth: after a restart every member object is compared once field by field, and every
// conflicting name is tried once more.

// verifiedVersion returns the resourceVersion sync last wrote or verified for key in cluster.
func (s *Syncer) verifiedVersion(key federation.Key, cluster string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.verified[key][cluster]
}

// setVerified records rv for key in cluster; "" forgets it.
func (s *Syncer) setVerified(key federation.Key, cluster, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.verified[key]
	if rv == "" {
		delete(m, cluster)
		return
	}
	if m == nil {
		m = map[string]string{}
		s.verified[key] = m
	}
	m[cluster] = rv
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
	m := s.conflicts[key]
	if !on {
		delete(m, cluster)
		return
	}
	if m == nil {
		m = map[string]bool{}
		s.conflicts[key] = m
	}
	m[cluster] = true
}
