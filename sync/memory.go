package sync

import "github.com/fedkit/fedkit/federation"

// What the Syncer remembers between passes is an optimisation and a courtesy, never a source
// of truth: after a restart every member object is rendered and compared once, and every
// conflicting name is tried once more.

// verification is what sync knows about a member object it wrote or checked: its
// resourceVersion then, and the key of the render input it was checked against (see
// inputKey). While both still hold, the cluster needs neither a render nor a comparison.
type verification struct {
	rv, input string
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
	m := s.verified[key]
	if v.rv == "" {
		delete(m, cluster)
		return
	}
	if m == nil {
		m = map[string]verification{}
		s.verified[key] = m
	}
	m[cluster] = v
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
