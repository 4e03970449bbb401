package scheduler_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/scheduler"
)

// planView is what a caller can see of a plan.
type planView struct {
	Replicas, Overflow map[string]int64
	Unplaced           int64
	Clusters           []scheduler.Allocation
	Summary            string
}

func viewOf(p scheduler.Plan) planView {
	return planView{p.Replicas, p.Overflow, p.Unplaced, p.Clusters(), p.Summary()}
}

// TestDivideConcurrent runs Divide from several goroutines at once, on requests of very
// different sizes in a different order in each, and checks every plan against the one
// Divide gave alone: divisions share working memory through a pool (run it with -race), and
// none may see another's, nor an earlier one's.
func TestDivideConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var reqs []scheduler.Request
	for i := range 60 {
		switch i % 3 {
		case 0:
			reqs = append(reqs, randomRequest(r, genOptions{maxClusters: 12, maxTotal: 300, maxWeight: 20}))
		case 1:
			reqs = append(reqs, minMaxWorkload(r, 1+r.IntN(400), r.Int64N(5000)))
		default:
			reqs = append(reqs, reschedWorkload(scheduler.Webster, 1)(r, 1+r.IntN(400), r.Int64N(5000)))
		}
	}
	want := make([]planView, len(reqs))
	for i, req := range reqs {
		p, err := scheduler.Divide(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		want[i] = viewOf(p)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(reqs))
	for g := range 8 {
		order := rand.New(rand.NewPCG(uint64(g), 33)).Perm(len(reqs))
		wg.Go(func() {
			for _, i := range order {
				p, err := scheduler.Divide(reqs[i])
				if err != nil {
					errs <- err.Error()
					continue
				}
				if diff := cmp.Diff(want[i], viewOf(p)); diff != "" {
					errs <- diff
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Divide differs from Divide alone (-want +got):\n%s", e)
	}
}
