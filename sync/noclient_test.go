package sync_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// lateSet has no client for "aws" until ready is set, as a kube.ClusterSet that has not yet
// built the client of a Cluster already Ready (it builds clients on its own watch), or is
// rebuilding it after a credentials change.
type lateSet struct {
	fleet *fake.Fleet
	err   error
	ready atomic.Bool
}

func (s *lateSet) Client(name string) (federation.ClusterClient, error) {
	if name == "aws" && !s.ready.Load() {
		return nil, fmt.Errorf("late: cluster %q: %w", name, s.err)
	}
	return s.fleet.Client(name)
}

// A Ready cluster the set has no client for yet: the pass says so for that cluster, places
// the object everywhere else, and returns an error to be retried with backoff (no Cluster
// change will come to bring the object back; before, it waited for the 10-minute resync).
// Once the set has the client, the retry creates the object there.
func TestSetWithoutClientIsRetried(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{err: federation.ErrClusterNotFound, reason: fedsync.ReasonClusterNotFound},
		{err: federation.ErrClusterNotReady, reason: fedsync.ReasonClusterNotReady},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			set := &lateSet{fleet: e.fleet, err: tc.err}
			s, err := fedsync.New(e.host, set, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
			require.NoError(t, err)
			e.apply(t, e.typ.FederatedGVR(), frontend)

			_, err = s.Reconcile(ctx, key)
			require.Error(t, err, "retried with backoff")
			require.False(t, federation.IsTerminal(err), "%v", err)
			require.ErrorIs(t, err, tc.err)
			got := map[string]string{}
			for _, c := range e.fed(t).Status.Clusters {
				got[c.Name] = c.Propagation
			}
			require.Equal(t, map[string]string{"aws": tc.reason, "gcp": "", "azure": ""}, got)
			require.Nil(t, e.member(t, "aws"))
			require.NotNil(t, e.member(t, "gcp"))

			set.ready.Store(true)
			_, err = s.Reconcile(ctx, key)
			require.NoError(t, err)
			require.NotNil(t, e.member(t, "aws"))
		})
	}
}
