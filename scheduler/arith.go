package scheduler

import (
	"math"
	"math/bits"
)

// Exact arithmetic and the small heap the selection uses.

// scale is a positive float64 x split exactly as m·2^e, m an integer of at most 53 bits.
type scale struct {
	m   uint64
	e   int
	inf bool
}

// divisor splits x (NaN and non-positive values count as 0).
func divisor(x float64) scale {
	if !(x > 0) {
		return scale{}
	}
	if math.IsInf(x, 1) {
		return scale{inf: true}
	}
	frac, exp := math.Frexp(x)
	return scale{m: uint64(frac * (1 << 53)), e: exp - 53}
}

// seatsAbove returns the number of seats k >= 0 with w/(2k+1) > 1/x, that is 2k+1 < w·x,
// exactly: w·x is the rational w·m·2^e. Counts of 2^63 and more (more than any int64 bound)
// come back as some value of at least 2^63.
func (x scale) seatsAbove(w uint64) uint64 {
	if w == 0 || x.m == 0 {
		if x.inf && w > 0 {
			return math.MaxUint64
		}
		return 0
	}
	e := x.e
	hi, lo := bits.Mul64(w, x.m) // P = w·m < 2^117
	if e >= 0 {
		// Seats: odd numbers below the integer P·2^e, floor(P·2^e / 2).
		if hi != 0 || e >= 64 || bits.Len64(lo)+e > 64 {
			return math.MaxUint64
		}
		return (lo << uint(e)) >> 1
	}
	sh := uint(-e)
	if sh >= 118 {
		return 0 // P/2^sh < 1/2: not even seat 0
	}
	// Seats: odd numbers below P/2^sh, floor(ceil(P/2^sh) / 2).
	var carry uint64
	addLo, addHi := ^uint64(0), ^uint64(0) // 2^sh - 1
	if sh < 64 {
		addLo, addHi = (uint64(1)<<sh)-1, 0
	} else {
		addHi = (uint64(1) << (sh - 64)) - 1
	}
	lo, carry = bits.Add64(lo, addLo, 0)
	hi, _ = bits.Add64(hi, addHi, carry)
	var q uint64
	if sh < 64 {
		if hi>>sh != 0 {
			return math.MaxUint64
		}
		q = lo>>sh | hi<<(64-sh) // sh >= 1 here
	} else {
		q = hi >> (sh - 64)
	}
	return q >> 1
}

// seatsAboveFloat is seatsAbove(w) at the scale x in floating point: the odd numbers below
// W = w·x are ceil((W-1)/2). It returns false, and the caller counts exactly, when W is 2^52
// or more (or NaN) or lies so close to an odd number that the rounding of the product
// could change the count. The product v is W rounded twice (w to a float, then v), each time
// by at most 2^-53 relatively, and v-1 and the halving are exact below 2^52; so a t more
// than v·2^-48 from every integer has the ceiling of the exact (W-1)/2.
func seatsAboveFloat(w uint64, x float64) (uint64, bool) {
	v := float64(int64(w)) * x // weights never exceed math.MaxInt64
	switch {
	case !(v < 1<<52):
		return 0, false
	case v < 1-0x1p-40:
		return 0, true // W < 1: not even seat 0
	}
	t := (v - 1) / 2       // more than -2^-41
	f := float64(int64(t)) // its floor when t >= 0; when t < 0, the margin test fails
	if margin := v * 0x1p-48; t-f <= margin || f+1-t <= margin {
		return 0, false
	}
	return uint64(int64(f)) + 1, true
}

// siftUp moves element i up to its place.
func siftUp(h []int32, i int, less func(x, y int32) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func heapify(h []int32, less func(x, y int32) bool) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, less)
	}
}

// siftDown restores the heap below i; the first element is the one less puts first.
func siftDown(h []int32, i int, less func(x, y int32) bool) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// satAdd adds two non-negative int64s, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// nthElement reorders h so that its first n elements are the n that come first under less
// (in no particular order). It is quickselect with a median-of-three pivot, O(len(h)) on
// average; when partitioning stops shrinking the range quickly it finishes with a heap, so
// the worst case stays O(len(h) log len(h)).
func nthElement(h []int32, n int, less func(x, y int32) bool) {
	lo, hi := 0, len(h) // the n-th element's final place is in [lo, hi)
	budget := 2*bits.Len(uint(len(h))) + 8
	for hi-lo > 16 {
		if budget--; budget < 0 {
			heapSelect(h[lo:hi], n-lo, less)
			return
		}
		mid := lo + (hi-lo)/2
		// Median of three to h[lo].
		if less(h[mid], h[lo]) {
			h[mid], h[lo] = h[lo], h[mid]
		}
		if less(h[hi-1], h[lo]) {
			h[hi-1], h[lo] = h[lo], h[hi-1]
		}
		if less(h[hi-1], h[mid]) {
			h[hi-1], h[mid] = h[mid], h[hi-1]
		}
		h[lo], h[mid] = h[mid], h[lo] // pivot (the median) at lo
		p := h[lo]
		i, j := lo+1, hi-1
		for {
			for i <= j && less(h[i], p) {
				i++
			}
			for i <= j && less(p, h[j]) {
				j--
			}
			if i >= j {
				break
			}
			h[i], h[j] = h[j], h[i]
			i++
			j--
		}
		h[lo], h[j] = h[j], h[lo] // the pivot at its final place j
		switch {
		case j == n:
			return
		case j < n:
			lo = j + 1
		default:
			hi = j
		}
	}
	// Few left: insertion sort settles them.
	for i := lo + 1; i < hi; i++ {
		for k := i; k > lo && less(h[k], h[k-1]); k-- {
			h[k], h[k-1] = h[k-1], h[k]
		}
	}
}

// heapSelect moves the n first elements of h under less to its front.
func heapSelect(h []int32, n int, less func(x, y int32) bool) {
	if n <= 0 || n >= len(h) {
		return
	}
	after := func(x, y int32) bool { return less(y, x) }
	top := h[:n] // a heap with the last of the kept ones at the root
	heapify(top, after)
	for i := n; i < len(h); i++ {
		if less(h[i], top[0]) {
			top[0], h[i] = h[i], top[0]
			siftDown(top, 0, after)
		}
	}
}
