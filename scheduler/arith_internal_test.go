package scheduler

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedkit/fedkit/internal/fedtest"
)

// bigSeatsAbove is seatsAbove in exact rational arithmetic: #{k >= 0 : 2k+1 < w·x}.
func bigSeatsAbove(w uint64, x float64) *big.Int {
	p := new(big.Rat).Mul(new(big.Rat).SetInt(new(big.Int).SetUint64(w)), new(big.Rat).SetFloat64(x))
	// Odd numbers below p: floor(ceil(p)/2).
	c := new(big.Int).Quo(p.Num(), p.Denom()) // floor
	if new(big.Rat).SetInt(c).Cmp(p) < 0 {
		c.Add(c, big.NewInt(1))
	}
	return c.Rsh(c, 1)
}

func TestSeatsAboveExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const huge = uint64(1) << 63 // seatsAbove only promises "at least 2^63" beyond it
	hugeBig := new(big.Int).SetUint64(huge)
	ws := []uint64{1, 2, 3, 7, 1000, 1 << 31, 1<<63 - 1, math.MaxUint64}
	xs := []float64{1e-300, 1e-20, 0.1, 0.5, 1, 1.5, 2, 3, 1 << 52, 1 << 53, 1e18, 1e30, 1e300, math.SmallestNonzeroFloat64}
	check := func(w uint64, x float64) {
		got := min(divisor(x).seatsAbove(w), huge)
		want := bigSeatsAbove(w, x)
		if want.Cmp(hugeBig) > 0 {
			want = hugeBig
		}
		if want.Uint64() != got {
			t.Fatalf("seatsAbove(%d, %g) = %d; want %s", w, x, got, want)
		}
	}
	for _, w := range ws {
		for _, x := range xs {
			check(w, x)
		}
	}
	for range fedtest.Iterations(200000) {
		w := r.Uint64() >> r.IntN(64)
		x := math.Ldexp(r.Float64()+0.5, r.IntN(140)-70)
		check(w, x)
	}
	if got := divisor(0).seatsAbove(5); got != 0 {
		t.Errorf("seatsAbove(5, 0) = %d; want 0", got)
	}
	if got := divisor(math.Inf(1)).seatsAbove(5); got < huge {
		t.Errorf("seatsAbove(5, +Inf) = %d; want max", got)
	}
}

// TestSeatsAboveFloat checks the floating-point count against exact arithmetic wherever it
// says it is sure, on random weights and scales and on products right at an odd number,
// where it must defer to the exact count.
func TestSeatsAboveFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	sure := 0
	check := func(w uint64, x float64) {
		got, ok := seatsAboveFloat(w, x)
		if !ok {
			return
		}
		sure++
		if want := bigSeatsAbove(w, x); !want.IsUint64() || want.Uint64() != got {
			t.Fatalf("seatsAboveFloat(%d, %g) = %d; want %s", w, x, got, want)
		}
	}
	for _, w := range []uint64{1, 2, 3, 7, 100, 1000, 1<<53 - 1, 1 << 53, 1<<53 + 1, 1<<62 + 12345, 1<<63 - 1} {
		for _, x := range []float64{0, 1e-300, 0.1, 0.5, 1, 1.5, 2, 3, 1 << 20, 1 << 52, math.Inf(1), math.NaN()} {
			check(w, x)
		}
	}
	n := fedtest.Iterations(60000)
	for range n {
		w := r.Uint64() >> (1 + r.IntN(63)) // up to math.MaxInt64, as weights are
		x := math.Ldexp(r.Float64()+0.5, r.IntN(120)-80)
		check(w, x)
		// x near (2k+1)/w, so that w·x is near an odd number: below, at and above it.
		if w > 0 {
			k := r.Uint64N(1 << 40)
			x0 := float64(2*k+1) / float64(w)
			check(w, x0)
			check(w, math.Nextafter(x0, 0))
			check(w, math.Nextafter(x0, math.Inf(1)))
		}
	}
	if sure < n/3 {
		t.Errorf("the float path was sure only %d times in %d draws: it no longer saves anything", sure, n)
	}
}

func TestCeilMulDiv(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for range fedtest.Iterations(100000) {
		a, b, c := r.Uint64()>>r.IntN(64), r.Uint64()>>r.IntN(64), r.Uint64()>>r.IntN(64)|1
		want := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
		want.Add(want, new(big.Int).SetUint64(c-1))
		want.Quo(want, new(big.Int).SetUint64(c))
		if want.Cmp(big.NewInt(math.MaxInt64)) > 0 {
			want = big.NewInt(math.MaxInt64)
		}
		if got := ceilMulDiv(a, b, c); got != want.Int64() {
			t.Fatalf("ceilMulDiv(%d, %d, %d) = %d; want %s", a, b, c, got, want)
		}
	}
}

func TestFNV(t *testing.T) {
	// hash/fnv values for the same input, so no import of hash/fnv is needed in the code.
	if got := fnv1Pair("eu", "ns/web"); got != 2233506949 {
		t.Errorf("fnv1Pair = %d; want 2233506949", got)
	}
	if got := fnv1a("default/app") % 2; got != 0 {
		t.Errorf("fnv1a(default/app) parity = %d; want 0", got)
	}
}

// BenchmarkCore measures the Webster division alone (steps 2 to 4 and the bounds), without
// validation and without building the plan's map and allocations, to show that its cost
// depends on the number of clusters and not on the number of replicas.
func BenchmarkCore(b *testing.B) {
	for _, c := range []int{100, 1000, 5000} {
		for _, total := range []int64{1000, 100000, 1 << 40} {
			b.Run(fmt.Sprintf("C=%d/R=%d", c, total), func(b *testing.B) {
				r := rand.New(rand.NewPCG(uint64(c), 1))
				clusters := make([]ClusterState, c)
				template := make([]cand, c)
				for i := range template {
					clusters[i].Name = fmt.Sprintf("cluster-%05d", i)
					template[i] = cand{idx: int32(i), w: 1 + r.Uint64N(1000), hi: math.MaxInt64, max: math.MaxInt64}
				}
				cs := make([]cand, c)
				d := divider{clusters: clusters}
				b.ReportAllocs()
				for b.Loop() {
					copy(cs, template)
					d.bounds(cs, d.webster(cs, total, true))
				}
			})
		}
	}
}

func TestNthElement(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for range fedtest.Iterations(3000) {
		size := 1 + r.IntN(300)
		keys := r.Perm(size)
		h := make([]int32, size)
		for i := range h {
			h[i] = int32(i)
		}
		if r.IntN(3) == 0 { // sorted and reversed inputs too
			for i := range keys {
				keys[i] = i
				if r.IntN(2) == 0 {
					keys[i] = size - i
				}
			}
		}
		less := func(x, y int32) bool { return keys[x] < keys[y] || (keys[x] == keys[y] && x < y) }
		n := r.IntN(size + 1)
		nthElement(h, n, less)
		// Every one of the first n comes before every one of the rest.
		for _, a := range h[:n] {
			for _, b := range h[n:] {
				if !less(a, b) {
					t.Fatalf("size %d n %d: %d (key %d) kept, %d (key %d) not", size, n, a, keys[a], b, keys[b])
				}
			}
		}
	}
}

// TestFewestExact checks fewest's float filter against the definition: the at most n
// eligible clusters that come first under the exact order, on requests made to fool a float
// key (weights and seat counts near 2^62 that differ in the last bits, exact ties, equal
// weights) as well as ordinary ones. Every 40th request has hundreds of clusters, most of
// them tied, for fewestKeyed to note more than fewestNoted of them and read them all again.
func TestFewestExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range fedtest.Iterations(20000) {
		c, ties := 1+r.IntN(40), 0
		if i%40 == 0 {
			c, ties = fewestNoted+r.IntN(2*fewestNoted), 9 // of 10 clusters
		}
		cs := make([]cand, c)
		bigW := uint64(1)<<62 + r.Uint64N(1<<20)
		for j := range cs {
			x := &cs[j]
			x.idx = int32(j)
			kind := r.IntN(4)
			if r.IntN(10) < ties {
				kind = 1
			}
			switch kind {
			case 0: // near ties at the top of the range
				x.w = bigW - r.Uint64N(3)
				x.s = 1<<61 + r.Int64N(3)
			case 1: // exact ties
				x.w, x.s = 6, 2
			case 2:
				x.w, x.s = 2*uint64(1+r.IntN(3)), int64(r.IntN(4))
			default:
				x.w, x.s = r.Uint64N(10), r.Int64N(10)
			}
			x.base = max(0, x.s-r.Int64N(3))
			x.lim = x.s + r.Int64N(3)
		}
		d := &divider{names: make([]string, c), desc: r.IntN(2) == 0}
		for j := range d.names {
			d.names[j] = fmt.Sprintf("%c%03d", 'a'+j%26, j)
		}
		n := 1 + r.Int64N(fewestSmall+8)
		for _, growing := range []bool{true, false} {
			less := func(x, y int32) bool { return d.before(&cs[x], cs[x].s, &cs[y], cs[y].s) }
			if !growing {
				less = func(x, y int32) bool { return d.before(&cs[y], cs[y].s-1, &cs[x], cs[x].s-1) }
			}
			var want []int32
			for j := range cs {
				if eligible(&cs[j], growing) {
					want = append(want, int32(j))
				}
			}
			slices.SortFunc(want, func(x, y int32) int {
				if less(x, y) {
					return -1
				}
				return 1
			})
			want = want[:min(int64(len(want)), n)]
			var small [fewestSmall]int32
			got := slices.Clone(d.fewest(cs, n, growing, less, &small))
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("case %d (n=%d, growing=%v): fewest = %v; want %v\n%+v", i, n, growing, got, want, cs)
			}
		}
	}
}
