package override

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"reflect"
	"unsafe"

	"github.com/fedkit/fedkit/federation"
)

// The desired-state hash (federation.DesiredHashAnnotation) lets sync skip an update that
// would change nothing. It covers what the federation wants for one cluster and nothing the
// member owns:
//
//	hash = H(D), where D is the object Render returns for the cluster when no member object
//	exists (no retention), without the annotations federation.DesiredHashAnnotation and
//	federation.RevisionAnnotation.
//
// So the hash changes when the template, the overrides that apply to the cluster, the
// scheduled replicas, the identity, the TypeConfig or fedkit's bookkeeping labels change,
// and does not change when the member's resourceVersion, allocated clusterIP, member-added
// labels or HPA-driven replicas do. The revision is left out so that a new revision that
// renders the same object for a cluster does not force a write there (sync may record the
// new revision for that cluster without an update).
//
// H is a 128-bit structural hash over JSON values, defined here so it is stable across
// processes, Go versions and map iteration orders: an object hashes to the sum of its
// members' hashes (each mixing key and value), so no keys are sorted and nothing is
// allocated; arrays hash in order; numbers hash by their encoding/json text, so 1 and 1.0
// agree. It is not a cryptographic hash: it detects changes, and nobody gains anything by
// forging a collision with their own object. The value is "v1:" and 32 hex digits; compare
// it only for equality (a new encoding would change the prefix, costing one update).

// hashSeeds are the two lanes' seeds and multipliers (odd 64-bit constants from
// splitmix64 and xxhash).
const (
	seedA, seedB = 0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f
	mulA, mulB   = 0xbf58476d1ce4e5b9, 0x94d049bb133111eb
)

// h128 is a hash value: two independent 64-bit lanes.
type h128 struct{ a, b uint64 }

// hashCache holds the hashes of a template's containers, by identity, for rendering one
// object for many clusters: the objects rendered copy-on-write share the template's
// unchanged containers, whose hashes are then looked up instead of recomputed. It is only
// valid while the template is not changed, i.e. within one call.
type hashCache map[cacheKey]h128

// cacheKey identifies a map (by its header) or a slice (by its backing array and length).
type cacheKey struct {
	p unsafe.Pointer
	n int
}

func keyOfMap(m map[string]interface{}) cacheKey {
	return cacheKey{p: reflect.ValueOf(m).UnsafePointer(), n: -1}
}

func keyOfSlice(s []interface{}) cacheKey {
	return cacheKey{p: unsafe.Pointer(unsafe.SliceData(s)), n: len(s)}
}

// hasher computes hashes, reading from cache when use is set and writing every container's
// hash into it when fill is set.
type hasher struct {
	cache     hashCache
	use, fill bool
}

// newHashCache hashes every container of template into a new cache.
func newHashCache(template map[string]interface{}) (hashCache, error) {
	w := hasher{cache: make(hashCache, 64), fill: true}
	if _, err := w.object(template, levelRoot); err != nil {
		return nil, err
	}
	return w.cache, nil
}

// desiredHash returns the hash annotation value for root.
func desiredHash(root map[string]interface{}) (string, error) {
	return hasher{}.annotation(root)
}

// annotation returns the hash annotation value for root.
func (w hasher) annotation(root map[string]interface{}) (string, error) {
	h, err := w.object(root, levelRoot)
	if err != nil {
		return "", err
	}
	var sum [16]byte
	binary.BigEndian.PutUint64(sum[:8], h.a)
	binary.BigEndian.PutUint64(sum[8:], h.b)
	var out [3 + 32]byte
	copy(out[:], "v1:")
	hex.Encode(out[3:], sum[:])
	return string(out[:]), nil
}

// Where the walk is: the hash and revision annotations are skipped only at
// metadata.annotations of the root.
const (
	levelRoot = iota
	levelMetadata
	levelAnnotations
	levelOther
)

// Type tags keep values of different JSON types apart (the string "1" is not the number 1).
const (
	tagNull = iota + 1
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagArray
	tagObject
	tagMember
)

func (w hasher) object(m map[string]interface{}, level int) (h128, error) {
	if w.use && level == levelOther && len(m) > 0 {
		if h, ok := w.cache[keyOfMap(m)]; ok {
			return h, nil
		}
	}
	var sum h128
	n := uint64(0) // members hashed (the skipped annotations do not count)
	for k, v := range m {
		next := levelOther
		switch {
		case level == levelRoot && k == "metadata":
			next = levelMetadata
		case level == levelMetadata && k == "annotations":
			next = levelAnnotations
		case level == levelAnnotations && (k == federation.DesiredHashAnnotation || k == federation.RevisionAnnotation):
			continue
		}
		vh, err := w.value(v, next)
		if err != nil {
			return h128{}, err
		}
		kh := hashString(tagMember, k)
		e := combine(kh, vh)
		sum.a += e.a
		sum.b += e.b
		n++
	}
	h := finalize(h128{sum.a ^ tagObject ^ n<<8, sum.b ^ tagObject ^ n<<8})
	if w.fill && level == levelOther && len(m) > 0 {
		w.cache[keyOfMap(m)] = h
	}
	return h, nil
}

func (w hasher) value(v interface{}, level int) (h128, error) {
	switch x := v.(type) {
	case map[string]interface{}:
		return w.object(x, level)
	case []interface{}:
		if w.use && len(x) > 0 {
			if h, ok := w.cache[keyOfSlice(x)]; ok {
				return h, nil
			}
		}
		h := h128{seedA ^ tagArray, seedB ^ tagArray}
		for _, e := range x {
			eh, err := w.value(e, levelOther)
			if err != nil {
				return h128{}, err
			}
			h = combine(h, eh)
		}
		h = finalize(h128{h.a ^ uint64(len(x)), h.b ^ uint64(len(x))})
		if w.fill && len(x) > 0 {
			w.cache[keyOfSlice(x)] = h
		}
		return h, nil
	case string:
		return hashString(tagString, x), nil
	case bool:
		if x {
			return finalize(h128{seedA ^ tagTrue, seedB ^ tagTrue}), nil
		}
		return finalize(h128{seedA ^ tagFalse, seedB ^ tagFalse}), nil
	case nil:
		return finalize(h128{seedA ^ tagNull, seedB ^ tagNull}), nil
	case int64:
		if x >= 0 && x < 1<<53 { // the common case, without formatting
			return finalize(h128{seedA ^ tagNumber ^ uint64(x)*mulA, seedB ^ tagNumber ^ uint64(x)*mulB}), nil
		}
	}
	var buf [40]byte
	b, ok := appendNumber(buf[:0], v)
	if !ok {
		return h128{}, fmt.Errorf("%w: %T has no JSON form", ErrInvalidValue, v)
	}
	// Integral numbers below 2^53 hash as the int64 case above, whatever their Go type.
	if n, ok := smallInt(b); ok {
		return finalize(h128{seedA ^ tagNumber ^ n*mulA, seedB ^ tagNumber ^ n*mulB}), nil
	}
	return hashBytes(tagNumber, b), nil
}

// smallInt parses b as a decimal integer in [0, 2^53).
func smallInt(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < 1<<53
}

// combine mixes two hashes in order.
func combine(x, y h128) h128 {
	return h128{
		a: mix(x.a^y.a*mulB, mulA) + y.b,
		b: mix(x.b^y.b*mulA, mulB) + y.a,
	}
}

// mix is a multiply-xorshift step.
func mix(x, m uint64) uint64 {
	hi, lo := bits.Mul64(x, m)
	return hi ^ lo
}

// finalize avalanches both lanes (murmur3's fmix64).
func finalize(h h128) h128 {
	f := func(x uint64) uint64 {
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		x *= 0xc4ceb9fe1a85ec53
		x ^= x >> 33
		return x
	}
	return h128{f(h.a), f(h.b ^ h.a)}
}

// hashString hashes s, 8 bytes at a time.
func hashString(tag uint64, s string) h128 {
	a, b := seedA^tag^uint64(len(s))*mulA, seedB^tag^uint64(len(s))*mulB
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		a = mix(a^w, mulA)
		b = mix(b^w, mulB)
		s = s[8:]
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w |= uint64(s[i]) << (8 * i)
	}
	a = mix(a^w, mulA)
	b = mix(b^w^0xff, mulB)
	return finalize(h128{a, b})
}

func hashBytes(tag uint64, b []byte) h128 { return hashString(tag, string(b)) }
