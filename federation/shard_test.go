package federation_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
)

// TestShardOfIsStable pins ShardOf: these owners are part of fedkit's compatibility promise
// (processes of two versions must agree on them), so this table is never updated to follow a
// change of the function; the change is what is wrong.
func TestShardOfIsStable(t *testing.T) {
	counts := [5]int{2, 3, 4, 7, 16}
	for _, tc := range []struct {
		key  federation.Key
		want [5]int // the owner among counts[i] shards
	}{
		{federation.Key{Namespace: "production", Name: "app-frontend"}, [5]int{1, 1, 1, 5, 5}},
		{federation.Key{Namespace: "production", Name: "app-backend"}, [5]int{0, 0, 0, 4, 4}},
		{federation.Key{Namespace: "default", Name: "web"}, [5]int{1, 2, 3, 3, 3}},
		{federation.Key{Name: "cluster-aws-us-east"}, [5]int{1, 1, 1, 6, 15}},
		{federation.Key{Name: "cluster-gcp-eu-west"}, [5]int{0, 0, 0, 0, 12}},
		{federation.Key{Namespace: "kube-system", Name: "dns"}, [5]int{0, 0, 0, 0, 0}},
	} {
		for i, n := range counts {
			if got := federation.ShardOf(tc.key, n); got != tc.want[i] {
				t.Errorf("ShardOf(%s, %d) = %d; want %d", tc.key, n, got, tc.want[i])
			}
		}
	}
}

// TestShardOwnsEveryKeyOnce checks that the shards of one Count partition the keys, evenly,
// and that growing Count by one moves only the keys the new shard takes.
func TestShardOwnsEveryKeyOnce(t *testing.T) {
	const keys = 20000
	for _, n := range []int{0, 1, 2, 3, 7, 16} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			per := make([]int, max(n, 1))
			moved := 0
			for i := range keys {
				key := federation.Key{Namespace: fmt.Sprintf("ns-%d", i%37), Name: fmt.Sprintf("object-%d", i)}
				owners := 0
				for idx := range max(n, 1) {
					if (federation.Shard{Index: idx, Count: n}).Owns(key) {
						owners++
						per[idx]++
					}
				}
				require.Equal(t, 1, owners, "key %s among %d shards", key, n)
				if n >= 2 && federation.ShardOf(key, n) != federation.ShardOf(key, n-1) {
					require.Equal(t, n-1, federation.ShardOf(key, n), "a key that moves goes to the new shard")
					moved++
				}
			}
			// As even as independent uniform draws: within 4.5 standard deviations of the mean.
			p := 1 / float64(len(per))
			mean, sigma := keys*p, math.Sqrt(keys*p*(1-p))
			for idx, c := range per {
				require.InDelta(t, mean, float64(c), 4.5*sigma, "shard %d of %d owns %d keys; mean %.0f", idx, n, c, mean)
			}
			if n >= 2 {
				require.InDelta(t, float64(keys)/float64(n), float64(moved), float64(keys)/float64(n)*0.1,
					"growing from %d to %d shards moved %d keys", n-1, n, moved)
			}
		})
	}
}

func TestShardValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shard federation.Shard
		ok    bool
	}{
		{"zero", federation.Shard{}, true},
		{"one", federation.Shard{Count: 1}, true},
		{"first of three", federation.Shard{Index: 0, Count: 3}, true},
		{"last of three", federation.Shard{Index: 2, Count: 3}, true},
		{"index past count", federation.Shard{Index: 3, Count: 3}, false},
		{"negative index", federation.Shard{Index: -1, Count: 3}, false},
		{"negative count", federation.Shard{Count: -2}, false},
		{"index without count", federation.Shard{Index: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.shard.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, federation.ErrInvalidShard)
		})
	}
}

func ExampleShard_Owns() {
	key := federation.Key{Namespace: "production", Name: "app-frontend"}
	for i := range 3 {
		s := federation.Shard{Index: i, Count: 3}
		fmt.Printf("shard %s owns %s: %v\n", s, key, s.Owns(key))
	}
	fmt.Printf("shard %s owns %s: %v\n", federation.Shard{}, key, federation.Shard{}.Owns(key))
	// Output:
	// shard 0/3 owns production/app-frontend: false
	// shard 1/3 owns production/app-frontend: true
	// shard 2/3 owns production/app-frontend: false
	// shard all owns production/app-frontend: true
}
