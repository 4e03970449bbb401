package controlplane_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// holdLists makes the host's informer lists of gvr (not the check before a loop starts, which
// lists with Limit 1) wait until the returned func is called, as a large host's first list
// takes its time.
func holdLists(host *fake.Cluster, gvr schema.GroupVersionResource) (release func()) {
	ch := make(chan struct{})
	host.SetHooks(fake.Hooks{List: func(ctx context.Context, next federation.ClusterClient, g schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		if g == gvr && opts.Limit != 1 {
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return next.List(ctx, g, ns, opts)
	}})
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// readiness is Ready's error as a string ("" for nil).
func readiness(cp *controlplane.ControlPlane) string {
	if err := cp.Ready(); err != nil {
		return err.Error()
	}
	return ""
}

// A single control plane is ready once every loop it runs has synced its caches: not before
// Run, not while the first list of FederatedDeployments is under way (the message names the
// loops and the resource), and no longer once Run returned. A type whose CRD is missing
// (FederatedJob: its loops failed) does not hold it back.
func TestReadyOnceTheCachesSynced(t *testing.T) {
	e := newEnv(t)
	e.deleteCRD(t, jobs)
	release := holdLists(e.host, deployments)
	defer release()
	opts := e.options(federation.DeploymentType, jobs)
	opts.Disable.DNS = true
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	require.ErrorIs(t, cp.Ready(), controlplane.ErrNotReady)
	require.ErrorContains(t, cp.Ready(), "Run is not running")

	stop := run(cp)
	const waiting = "scheduler/FederatedDeployment: caches of federateddeployments.types.federation.k8s.io not synced"
	stepUntilf(t, e.clock, time.Second, func() string { return "waiting for the FederatedDeployments' list: " + readiness(cp) }, func() bool {
		r := readiness(cp)
		// Only the loops that watch FederatedDeployments wait: the others synced, and
		// FederatedJob's failed (their CRD is missing).
		return strings.Contains(r, waiting) && strings.Contains(r, "sync/FederatedDeployment: caches of") &&
			!strings.Contains(r, "FederatedJob") && !strings.Contains(r, "not started yet") &&
			!strings.Contains(r, controlplane.MonitorLoop) && !strings.Contains(r, controlplane.DependenciesLoop)
	})
	require.ErrorIs(t, cp.Ready(), controlplane.ErrNotReady)

	release()
	stepUntilf(t, e.clock, time.Second, func() string { return "ready: " + readiness(cp) }, func() bool { return cp.Ready() == nil })
	require.Equal(t, controlplane.StateFailed, loopStatus(t, cp, "sync/FederatedJob").State)
	require.NoError(t, stop())
	require.ErrorContains(t, cp.Ready(), "Run is not running")
}

// With leader election a standby is ready at once: it has nothing to sync. Once it leads,
// it is ready when its loops' caches synced; the Lease it holds carries Options.Version.
func TestReadyWithLeaderElection(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lease := fastLease()
	lease.Name = "ready"
	// A peer holds the Lease, renewed just now, for a minute.
	peer := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"namespace": "default", "name": "ready"},
		"spec": map[string]any{"holderIdentity": "peer", "leaseDurationSeconds": int64(60),
			"acquireTime": metav1.NowMicro().UTC().Format(metav1.RFC3339Micro), "renewTime": metav1.NowMicro().UTC().Format(metav1.RFC3339Micro)},
	}}
	_, err := e.host.Create(ctx, leasesGVR, peer)
	require.NoError(t, err)
	release := holdLists(e.host, deployments)
	defer release()

	opts := e.options(federation.DeploymentType)
	opts.Disable.DNS = true
	opts.LeaderElection = &lease
	opts.Version = "v1.2.3"
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	require.Eventually(t, func() bool { return cp.Ready() == nil }, 10*time.Second, time.Millisecond, "a standby is ready: %s", readiness(cp))
	require.Equal(t, controlplane.StateStandby, loopStatus(t, cp, "sync/FederatedDeployment").State)

	// The peer lets the Lease go, as a graceful shutdown does: this replica leads, and waits
	// for its caches.
	u, err := e.host.Get(ctx, leasesGVR, "default", "ready")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, "", "spec", "holderIdentity"))
	_, err = e.host.Update(ctx, leasesGVR, u)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(readiness(cp), "sync/FederatedDeployment: caches of") }, 20*time.Second, time.Millisecond,
		"the leader waits for its caches: %s", readiness(cp))
	u, err = e.host.Get(ctx, leasesGVR, "default", "ready")
	require.NoError(t, err)
	require.Equal(t, "v1.2.3", u.GetAnnotations()[federation.ControlPlaneVersionAnnotation], "the leader's version on its Lease")

	release()
	stepUntilf(t, e.clock, time.Second, func() string { return "the leader ready: " + readiness(cp) }, func() bool { return cp.Ready() == nil })
}

// With Sharding, a replica that holds no shard is a standby and ready; one that holds its
// shards is ready once their loops synced, and its shard Leases carry Options.Version.
func TestReadyWithSharding(t *testing.T) {
	e := newEnv(t)
	opts := e.options(federation.DeploymentType)
	opts.Disable.DNS = true
	lease := fastLease()
	lease.Name = "ready-shard"
	opts.Sharding = &controlplane.Sharding{Count: 2, Lease: lease}
	opts.Version = "v1.2.3"
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	require.Eventually(t, func() bool { return len(cp.Status()) > 1 }, 20*time.Second, time.Millisecond, "a shard claimed")
	stepUntilf(t, e.clock, time.Second, func() string { return "ready: " + readiness(cp) }, func() bool {
		return cp.Ready() == nil && holdsBoth(cp)
	})
	for _, name := range []string{"ready-shard-0", "ready-shard-1"} {
		u, err := e.host.Get(context.Background(), leasesGVR, "default", name)
		require.NoError(t, err)
		require.Equal(t, "v1.2.3", u.GetAnnotations()[federation.ControlPlaneVersionAnnotation], name)
	}
}

// holdsBoth reports whether cp runs the loops of both shards of 2.
func holdsBoth(cp *controlplane.ControlPlane) bool {
	held := map[int]bool{}
	for _, l := range cp.Status() {
		if l.Shard.Sharded() {
			held[l.Shard.Index] = true
		}
	}
	return len(held) == 2
}

// Each loop says what it watches, and the control plane waits for all of it: sync reads the
// revision history (apps/v1 ControllerRevisions) from the host cache, and the dependencies
// loop the host's ConfigMaps, so a replica where either has not listed yet does not do that
// loop's work and is not ready. Ready names the loop and the resource until the list comes.
func TestReadyWaitsForEveryResourceALoopWatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resource schema.GroupVersionResource
		waiting  string
	}{
		{name: "sync's revision history", resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"},
			waiting: "sync/FederatedDeployment: caches of controllerrevisions.apps not synced"},
		{name: "the dependencies' ConfigMaps", resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			waiting: controlplane.DependenciesLoop + ": caches of configmaps not synced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			release := holdLists(e.host, tc.resource)
			defer release()
			opts := e.options(federation.DeploymentType)
			opts.Disable.DNS = true
			cp, err := controlplane.New(e.host, e.fleet, opts)
			require.NoError(t, err)
			stop := run(cp)
			defer func() { require.NoError(t, stop()) }()

			// Until every other cache synced: then Ready waits for the one held, or nothing.
			held := tc.resource.GroupResource().String()
			stepUntilf(t, e.clock, time.Second, func() string { return "every other cache synced: " + readiness(cp) }, func() bool {
				_, waits, running := strings.Cut(readiness(cp), "not ready: ")
				if !running {
					return true // ready
				}
				for _, w := range strings.Split(waits, "; ") {
					if !strings.HasSuffix(w, "caches of "+held+" not synced") {
						return false
					}
				}
				return true
			})
			require.ErrorIs(t, cp.Ready(), controlplane.ErrNotReady, "ready while %s has not listed", tc.resource.GroupResource())
			require.ErrorContains(t, cp.Ready(), tc.waiting)

			release()
			stepUntilf(t, e.clock, time.Second, func() string { return "ready: " + readiness(cp) }, func() bool { return cp.Ready() == nil })
		})
	}
}
