package sync_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

var deploymentsGR = schema.GroupResource{Group: "apps", Resource: "deployments"}

func TestConflictStormConverges(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	for _, c := range clusterNames {
		// Every update fails twice with a Conflict, as if a member controller kept writing.
		e.cluster(t, c).FailOn(fake.VerbUpdate, apierrors.NewConflict(deploymentsGR, key.Name, nil), 2)
	}
	e.reconcile(t) // three attempts per cluster: two Conflicts, then success
	for _, c := range clusterNames {
		require.Equal(t, "nginx:1.22", image(t, e.member(t, c)), c)
	}
	require.EqualValues(t, 2, e.fed(t).Status.SyncedRevision)
}

func TestConflictsBeyondRetriesAreRetriedLater(t *testing.T) {
	e := newEnv(t, fedsync.Options{ConflictRetries: 1})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	e.cluster(t, "aws").FailOn(fake.VerbUpdate, apierrors.NewConflict(deploymentsGR, key.Name, nil), 5)
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err, "the key must be retried with backoff")
	require.True(t, apierrors.IsConflict(err))
	require.Equal(t, plan.ReasonUpdateFailed+"@1", propagation(e.fed(t))["aws"])
	require.Equal(t, "@2", propagation(e.fed(t))["gcp"])
	e.converge(t, 5)
	require.Equal(t, "nginx:1.22", image(t, e.member(t, "aws")))
	require.Equal(t, "@2", propagation(e.fed(t))["aws"])
}

func TestConcurrentWriterFieldsSurviveAConflict(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	aws := e.cluster(t, "aws")
	// Between sync's read and its write, a member controller adds an annotation.
	var once bool
	aws.SetHooks(fake.Hooks{Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if !once {
			once = true
			_ = aws.Drift(gvr, obj.GetNamespace(), obj.GetName(), func(u *unstructured.Unstructured) {
				a := u.GetAnnotations()
				a["autoscaler/last-scale"] = "now"
				u.SetAnnotations(a)
			})
		}
		return next.Update(ctx, gvr, obj)
	}})
	e.reconcile(t)
	m := e.member(t, "aws")
	require.Equal(t, "nginx:1.22", image(t, m))
	require.Equal(t, "now", m.GetAnnotations()["autoscaler/last-scale"], "the concurrent writer's field is kept")
}

func TestInjectedErrorsConverge(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	for i, c := range clusterNames {
		e.cluster(t, c).SetErrorRate(fake.VerbAll, 0.2, uint64(i+1))
	}
	e.host.SetErrorRate(fake.VerbAll, 0.2, 99)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	for round := 0; round < 3; round++ {
		e.edit(t, setImage("nginx:1."+string(rune('0'+round))))
		converged := false
		for i := 0; i < 50 && !converged; i++ {
			_, err := e.s.Reconcile(ctx, key)
			converged = err == nil && propagated(e.fed(t)).Status == "True" && e.fed(t).Status.ObservedGeneration == e.fed(t).Generation
		}
		require.True(t, converged, "round %d", round)
		for _, c := range clusterNames {
			require.Equal(t, "nginx:1."+string(rune('0'+round)), image(t, e.member(t, c)))
		}
	}
}

func TestPartitionedClusterGetsNoWritesAndRecovers(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host)) // the cluster monitor marks it not ready
	e.edit(t, setImage("nginx:1.22"))
	e.cluster(t, "azure").ClearActions()
	e.reconcile(t)
	require.Empty(t, e.cluster(t, "azure").Actions(), "no call at all to a cluster that is not ready")
	fed := e.fed(t)
	require.Equal(t, plan.ReasonClusterNotReady+"@1", propagation(fed)["azure"])
	require.Equal(t, "@2", propagation(fed)["aws"])
	require.EqualValues(t, 2, fed.Status.SyncedRevision, "every reachable cluster runs revision 2")
	require.Equal(t, "False", string(propagated(fed).Status))

	require.NoError(t, e.fleet.Heal("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.reconcile(t)
	require.Equal(t, "nginx:1.22", image(t, e.member(t, "azure")))
	require.Equal(t, "True", string(propagated(e.fed(t)).Status))
}

func TestUnreachableDuringWriteIsRetried(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	require.NoError(t, e.fleet.Partition("azure")) // not yet noticed by the monitor: still Ready
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err)
	require.Equal(t, plan.ReasonClusterUnreachable+"@1", propagation(e.fed(t))["azure"])
	require.NoError(t, e.fleet.Heal("azure"))
	e.converge(t, 3)
	require.Equal(t, "nginx:1.22", image(t, e.member(t, "azure")))
}

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
		{err: federation.ErrClusterNotFound, reason: plan.ReasonClusterNotFound},
		{err: federation.ErrClusterNotReady, reason: plan.ReasonClusterNotReady},
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
