package fake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// TestCacheHealth: a member's caches are in contact until it is partitioned; then they are
// cut off since the partition began, with the partition's error, until Heal.
func TestCacheHealth(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	fleet := fake.NewFleet()
	fleet.SetClock(clk)
	fleet.Add("eu", nil)
	gvr := federation.DeploymentType.TargetGVR()
	_, err := fleet.CachedReader("eu", gvr)
	require.NoError(t, err)

	tests := []struct {
		name      string
		act       func()
		wantSince time.Time
		wantErr   bool
	}{
		{name: "in contact", act: func() {}, wantSince: t0},
		{name: "partitioned a minute later", act: func() { clk.Step(time.Minute); require.NoError(t, fleet.Partition("eu")) }, wantSince: t0.Add(time.Minute), wantErr: true},
		{name: "still cut off an hour later", act: func() { clk.Step(time.Hour) }, wantSince: t0.Add(time.Minute), wantErr: true},
		{name: "healed", act: func() { require.NoError(t, fleet.Heal("eu")) }, wantSince: t0.Add(time.Hour + time.Minute)},
	}
	for _, tt := range tests {
		tt.act()
		since, err := fleet.CacheHealth("eu", gvr)
		require.True(t, since.Equal(tt.wantSince), "%s: since %s, want %s", tt.name, since, tt.wantSince)
		require.Equal(t, tt.wantErr, err != nil, "%s: %v", tt.name, err)
		if err != nil {
			require.ErrorIs(t, err, federation.ErrUnreachable, tt.name)
		}
	}
	_, err = fleet.CacheHealth("nowhere", gvr)
	require.True(t, errors.Is(err, federation.ErrClusterNotFound), "%v", err)
}
