package status

import (
	"sync"
	"time"

	"github.com/fedkit/fedkit/federation"
)

// freshness is the Collector's memory of its successful member reads: per federated object
// and cluster, when the member was last read and whether it was ready then. It is what makes
// freshness a judgement in memory rather than a timestamp in the API: lastObserved is written
// only with a change, so a status that says nothing new costs no write, and the memory still
// knows the data was confirmed a moment ago.
//
// A record is small on purpose (at 10,000 objects in 100 clusters the memory holds a million
// of them): the observed values themselves live in the federated object's status.
//
// The memory starts empty, so after a restart an entry is stale until its first successful
// read, which the first pass makes.
type freshness struct {
	mu    sync.Mutex
	byKey map[federation.Key]map[string]record
}

// record is one successful read.
type record struct {
	at      time.Time
	ready   bool
	message string
}

func newFreshness() *freshness {
	return &freshness{byKey: map[federation.Key]map[string]record{}}
}

// get returns the last successful read of key's member in cluster.
func (f *freshness) get(key federation.Key, cluster string) (record, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.byKey[key][cluster]
	return r, ok
}

// set records a successful read.
func (f *freshness) set(key federation.Key, cluster string, r record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.byKey[key]
	if m == nil {
		m = map[string]record{}
		f.byKey[key] = m
	}
	m[cluster] = r
}

// retain forgets key's clusters that are not in placed.
func (f *freshness) retain(key federation.Key, placed []federation.MemberStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.byKey[key]
	if len(m) <= len(placed) {
		keep := 0
		for i := range placed {
			if _, ok := m[placed[i].Name]; ok {
				keep++
			}
		}
		if keep == len(m) {
			return
		}
	}
	names := make(map[string]bool, len(placed))
	for i := range placed {
		names[placed[i].Name] = true
	}
	for c := range m {
		if !names[c] {
			delete(m, c)
		}
	}
}

// forget drops everything about key (the object is gone).
func (f *freshness) forget(key federation.Key) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byKey, key)
}
