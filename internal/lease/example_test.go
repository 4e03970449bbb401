package lease_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/lease"
)

// Elect runs the work while this process holds the Lease; here the work ends by itself, so
// Elect releases the Lease and returns the work's result.
func ExampleElect() {
	host := fake.NewCluster("host")
	opts := lease.Options{Namespace: "default", Name: "fedkit-controlplane", Identity: "replica-a"}
	err := lease.Elect(context.Background(), host, opts, func(ctx context.Context) error {
		fmt.Println("leading: the loops run here until ctx is done")
		return nil
	})
	fmt.Println("Elect returned:", err)
	// Output:
	// leading: the loops run here until ctx is done
	// Elect returned: <nil>
}

// Shards runs the work once per shard this process holds; alone, it holds them all. Each
// shard's work would run the loops with Options.Shard set to it.
func ExampleShards() {
	host := fake.NewCluster("host")
	opts := lease.Options{
		Namespace: "default", Name: "fedkit-shards", Identity: "replica-a", Count: 3,
		LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		held []string
	)
	err := lease.Shards(ctx, host, opts, func(ctx context.Context, s federation.Shard) error {
		mu.Lock()
		held = append(held, s.String())
		if len(held) == opts.Count {
			cancel() // every shard runs: stop the example
		}
		mu.Unlock()
		<-ctx.Done()
		return nil
	})
	sort.Strings(held)
	fmt.Println(held, err)
	// Output:
	// [0/3 1/3 2/3] <nil>
}
