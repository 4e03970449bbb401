package dnsrecord_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

func TestNewRejectsAnInvalidShard(t *testing.T) {
	_, err := dnsrecord.New(fake.NewHost("host"), fake.NewFleet(), dnsrecord.Options{Shard: federation.Shard{Index: 5, Count: 4}})
	require.ErrorIs(t, err, dnsrecord.ErrInvalidOptions)
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "dnsrecord: New: dnsrecord: invalid options: Options.Shard")
}
