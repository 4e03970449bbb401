package scheduler_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// byteReader hands out fuzz bytes, and zeros once they run out.
type byteReader struct{ b []byte }

func (r *byteReader) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// num reads a small number; with the top bit of the flag byte it is sometimes huge or
// negative, to reach the validation and overflow paths.
func (r *byteReader) num() int64 {
	switch f := r.next(); {
	case f == 0xff:
		return -int64(r.next()) - 1
	case f >= 0xf0:
		return 1<<62 + int64(r.next())<<40 + int64(r.next())
	default:
		return int64(f)
	}
}

// decodeRequest turns fuzz bytes into a request (valid or not).
func decodeRequest(data []byte) scheduler.Request {
	r := &byteReader{b: data}
	flags := r.next()
	req := scheduler.Request{
		Key:           []string{"", "ns/web", "ns/api", "default/app"}[flags&3],
		TotalReplicas: int64(r.next())<<8 | int64(r.next()),
		Rebalance:     flags&4 != 0,
		Algorithm:     federation.Algorithms()[flags>>3&1],
		Strategy:      federation.Strategies()[flags>>4&3],
	}
	if flags&0x40 != 0 {
		req.TotalReplicas = r.num()
	}
	if flags&0x80 != 0 {
		req.Spread = &scheduler.Spread{MinDomains: int32(r.next() % 4), MaxSkew: int64(r.next() % 4)}
	}
	n := int(r.next() % 9)
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "a"} // the last one duplicates
	prefs := map[string]federation.ClusterPreferences{}
	opt := func(bit byte, f byte) *int64 {
		if f&bit == 0 {
			return nil
		}
		v := r.num()
		return &v
	}
	for i := range n {
		f := r.next()
		c := scheduler.ClusterState{Name: names[i], Current: opt(1, f), Capacity: opt(2, f), Cost: opt(4, f), Domain: []string{"x", "y", "z"}[f>>6%3]}
		req.Clusters = append(req.Clusters, c)
		if f&8 != 0 {
			pf := r.next()
			prefs[c.Name] = federation.ClusterPreferences{Weight: r.num(), MinReplicas: opt(1, pf), MaxReplicas: opt(2, pf)}
		}
	}
	if g := r.next(); g&1 != 0 {
		prefs["*"] = federation.ClusterPreferences{Weight: r.num(), MinReplicas: opt(2, g), MaxReplicas: opt(4, g)}
	}
	if len(prefs) > 0 {
		req.Preferences = prefs
	}
	return req
}

// FuzzDivide: Divide never panics; a bad request gets ErrInvalidRequest; a good one keeps
// the plan invariants (sum + unplaced = total, bounds, breakdown) and, where the reference
// is cheap enough, equals the seat-by-seat definition or KubeFed's transcription.
//
//	go test ./scheduler -run '^$' -fuzz FuzzDivide -fuzztime 60s
func FuzzDivide(f *testing.F) {
	f.Add([]byte{0, 0, 10, 3, 0, 0, 0})
	f.Add([]byte{4, 0, 50, 2, 9, 5, 1, 8, 2, 4, 9, 1})
	f.Add([]byte{8, 0, 91, 5, 8, 0, 200, 8, 0, 1, 8, 0, 1, 8, 0, 1, 8, 0, 1, 1, 1})
	f.Add([]byte{0x90, 1, 0, 4, 0x41, 0xf0, 1, 2, 0x88, 7, 9, 1, 1, 0xc2, 3, 1})
	f.Add([]byte{0x20, 0, 30, 3, 4, 1, 4, 2, 4, 3, 1, 1})
	f.Add([]byte{0x44, 0xff, 3, 2, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		req := decodeRequest(data)
		plan, err := scheduler.Divide(req)
		if err != nil {
			if !errors.Is(err, scheduler.ErrInvalidRequest) {
				t.Fatalf("Divide(%s) error %v does not wrap ErrInvalidRequest", describe(req), err)
			}
			return
		}
		if req.Strategy == federation.StrategyDuplicated {
			for _, a := range plan.Clusters() {
				if a.Preference != scheduler.NoPreference && a.Replicas > req.TotalReplicas {
					t.Fatalf("%s: duplicated %s got %d", describe(req), a.Name, a.Replicas)
				}
			}
			return
		}
		if msg := checkPlan(req, plan); msg != "" {
			t.Fatalf("%s: %s", describe(req), msg)
		}
		checkBounds(t, req, plan)
		if req.Spread != nil || !small(req) {
			return // the references walk every replica
		}
		switch req.Algorithm {
		case federation.AlgorithmWebster:
			want, unplaced := referenceWebster(req)
			if diff := cmp.Diff(want, plan.Replicas); diff != "" || unplaced != plan.Unplaced {
				t.Fatalf("%s: differs from the seat-by-seat definition (-want +got):\n%s\nunplaced %d want %d", describe(req), diff, plan.Unplaced, unplaced)
			}
		case federation.AlgorithmKubeFed:
			for _, p := range req.Preferences {
				if p.Weight > 1<<30 {
					return // KubeFed's own int64 products wrap around there
				}
			}
			want, overflow := referenceKubeFed(req)
			if diff := cmp.Diff(want, plan.Replicas); diff != "" {
				t.Fatalf("%s: differs from KubeFed (-want +got):\n%s", describe(req), diff)
			}
			if diff := cmp.Diff(overflow, plan.Overflow, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s: overflow differs from KubeFed (-want +got):\n%s", describe(req), diff)
			}
		}
	})
}

// small reports whether the references can walk every replica of req quickly.
func small(req scheduler.Request) bool {
	const limit = 5000
	if req.TotalReplicas > limit {
		return false
	}
	for _, c := range req.Clusters {
		if (c.Current != nil && *c.Current > limit) || (c.Capacity != nil && *c.Capacity > limit) {
			return false
		}
	}
	for _, p := range req.Preferences {
		if (p.MinReplicas != nil && *p.MinReplicas > limit) || (p.MaxReplicas != nil && *p.MaxReplicas > limit) {
			return false
		}
	}
	return true
}

// checkBounds checks that no cluster is above its maxReplicas or capacity and that Webster
// gave every minimum it could.
func checkBounds(t *testing.T, req scheduler.Request, plan scheduler.Plan) {
	t.Helper()
	prefs := req.Preferences
	if len(prefs) == 0 {
		prefs = map[string]federation.ClusterPreferences{"*": {Weight: 1}}
	}
	var minsWanted int64
	allocs := plan.Clusters()
	for i, c := range req.Clusters {
		p, ok := prefs[c.Name]
		if !ok {
			p = prefs["*"]
		}
		a := allocs[i]
		if p.MaxReplicas != nil && a.Replicas > *p.MaxReplicas {
			t.Fatalf("%s: %s has %d replicas, above maxReplicas %d", describe(req), c.Name, a.Replicas, *p.MaxReplicas)
		}
		if a.Preference != scheduler.NoPreference && p.MinReplicas != nil {
			lo := *p.MinReplicas
			if c.Capacity != nil {
				lo = min(lo, *c.Capacity)
			}
			minsWanted += lo
			if req.Algorithm == federation.AlgorithmWebster && a.Replicas < lo && plan.Unplaced > 0 {
				t.Fatalf("%s: %s has %d replicas, below its minimum %d, with %d unplaced", describe(req), c.Name, a.Replicas, lo, plan.Unplaced)
			}
		}
	}
	_ = fmt.Sprint(minsWanted)
}
