package federation

import (
	"errors"
	"fmt"
	"hash/fnv"
)

// ErrInvalidShard is wrapped by [Shard.Validate] when a Shard's Index or Count is out of range.
var ErrInvalidShard = errors.New("federation: invalid shard")

// Shard is one part of a federation's work when several processes split it: the loops of a
// process started with Shard{Index: i, Count: n} reconcile only the keys that [Shard.Owns],
// and n processes with the indexes 0 to n-1 together reconcile every key exactly once.
//
// The zero Shard (and any Shard with Count 1) owns every key: a single process needs no
// sharding. Every process of one deployment must use the same Count; changing it means
// restarting them all (internal/lease's Shards refuses to claim shards while a peer with
// another Count holds any).
//
// Keys are assigned by [ShardOf], a hash of the key's "namespace/name" form that never
// changes between fedkit versions, so processes of different versions agree on who owns what.
//
// +kubebuilder:object:generate=false
type Shard struct {
	// Index is this process's part, from 0 to Count-1.
	Index int
	// Count is how many parts the keys are split into; 0 and 1 both mean "not sharded".
	Count int
}

// Sharded reports whether s splits the keys at all (Count > 1).
func (s Shard) Sharded() bool { return s.Count > 1 }

// Owns reports whether the key belongs to s: always when s is not sharded, otherwise when
// ShardOf(key, s.Count) == s.Index. A loop's Run calls it for every key before queueing it;
// for the cluster monitor the key is a Cluster (Name only), so clusters split the same way.
func (s Shard) Owns(key Key) bool {
	if !s.Sharded() {
		return true
	}
	return ShardOf(key, s.Count) == s.Index
}

// Validate returns an error wrapping [ErrInvalidShard] when Count is negative, or Index is not
// in [0, Count) (0 when Count is 0 or 1).
func (s Shard) Validate() error {
	switch {
	case s.Count < 0:
		return fmt.Errorf("%w: Count must not be negative, got %d", ErrInvalidShard, s.Count)
	case !s.Sharded() && s.Index != 0:
		return fmt.Errorf("%w: Index must be 0 when Count is %d, got %d", ErrInvalidShard, s.Count, s.Index)
	case s.Sharded() && (s.Index < 0 || s.Index >= s.Count):
		return fmt.Errorf("%w: Index must be in [0, %d), got %d", ErrInvalidShard, s.Count, s.Index)
	}
	return nil
}

// String returns "index/count", or "all" for a Shard that is not sharded.
func (s Shard) String() string {
	if !s.Sharded() {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ShardOf returns the shard, in [0, count), that owns key; 0 when count < 2.
//
// The function is part of fedkit's compatibility promise and never changes: processes of
// different fedkit versions may run side by side during an upgrade, and two of them that
// computed different owners for one key would both reconcile it. It is:
//
//  1. h = the 64-bit FNV-1a hash of the bytes of key.String() ("namespace/name", or "name"
//     for a cluster-scoped key such as a Cluster), as hash/fnv.New64a computes it;
//  2. the shard = Jump Consistent Hash (Lamping and Veach, 2014) of h into count buckets.
//
// Jump hashing spreads keys as evenly as a modulo does, and when Count grows from n to n+1
// only about 1/(n+1) of the keys change owner (a modulo would move nearly all of them), which
// keeps caches warm and rebalancing small when a deployment is resized.
func ShardOf(key Key, count int) int {
	if count < 2 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key.String())) // a hash.Hash never fails to write
	return jumpHash(h.Sum64(), count)
}

// jumpHash is Jump Consistent Hash as published (arXiv:1406.2294, figure 1). Its floating-point
// steps are one division and one multiplication, each rounded as IEEE 754 prescribes (no fused
// multiply-add applies), so the result is the same on every platform.
func jumpHash(key uint64, buckets int) int {
	var b, j int64 = -1, 0
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}
