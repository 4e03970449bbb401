package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// Run with a Shard is tested on real API servers in test/ha, with three processes splitting
// four shards; here only the option's validation.
func TestNewRejectsAnInvalidShard(t *testing.T) {
	_, err := fedsync.New(fake.NewHost("host"), fake.NewFleet(), federation.DeploymentType, fedsync.Options{Shard: federation.Shard{Index: 1}})
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "sync: New: Options.Shard")
}
