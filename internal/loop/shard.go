package loop

import (
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/fedkit/fedkit/federation"
)

// Sharding. A Loop with Options.Shard set reconciles only the keys its shard owns
// (federation.Shard.Owns). The filter sits in front of the work queue, the one place every
// key passes through on its way to a worker: the keys of informer events (a source's own
// objects, Keys, Referrers), every key of a Broadcast (a Cluster change fans out to every
// object, and each shard takes only its own), Loop.Enqueue (member caches), and requeues.
// A key the shard does not own is dropped before it is queued, so it is never reconciled,
// not even on a resync, and costs one hash, not a reconcile.
//
// The informers still list and watch every object: a shard's reconciles read other objects
// (a Cluster, a preference) and shards are claimed and moved at run time, so each process
// keeps the whole cache. What sharding divides is the work, not the memory.
//
// The Reconciler itself is not filtered: a loop type's exported Reconcile, called directly
// by an embedder that drives its own queue, handles whatever key it is given. Sharding is a
// property of Run; an embedder with its own queue filters with Shard.Owns itself.

// ownedQueue is a work queue that drops the keys its shard does not own.
type ownedQueue struct {
	workqueue.TypedRateLimitingInterface[federation.Key]
	shard federation.Shard
}

// ownedOnly returns q itself when shard is not sharded, and q behind the shard's filter
// otherwise.
func ownedOnly(q workqueue.TypedRateLimitingInterface[federation.Key], shard federation.Shard) workqueue.TypedRateLimitingInterface[federation.Key] {
	if !shard.Sharded() {
		return q
	}
	return ownedQueue{TypedRateLimitingInterface: q, shard: shard}
}

func (q ownedQueue) Add(key federation.Key) {
	if q.shard.Owns(key) {
		q.TypedRateLimitingInterface.Add(key)
	}
}

func (q ownedQueue) AddAfter(key federation.Key, d time.Duration) {
	if q.shard.Owns(key) {
		q.TypedRateLimitingInterface.AddAfter(key, d)
	}
}

func (q ownedQueue) AddRateLimited(key federation.Key) {
	if q.shard.Owns(key) {
		q.TypedRateLimitingInterface.AddRateLimited(key)
	}
}

// ValidateShard checks a loop's Options.Shard, the one way every loop's New does: nil, or an
// error wrapping invalid (the loop package's ErrInvalidOptions) and federation.ErrInvalidShard
// that names the field.
func ValidateShard(invalid error, s federation.Shard) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%w: Options.Shard: %w", invalid, err)
	}
	return nil
}
