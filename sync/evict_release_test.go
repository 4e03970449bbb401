package sync_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
)

// When a graceful eviction with purge mode Never ends, the scheduler drops the cluster from
// the schedule and marks the eviction Release: sync then releases the copy there (it stays,
// without fedkit's marks) instead of deleting it, and once status.clusters no longer lists
// the cluster the scheduler drops the eviction. With Graciously the copy is deleted then.
func TestEvictionEndReleasesOrDeletes(t *testing.T) {
	for _, tc := range []struct {
		mode    federation.PurgeMode
		release bool
	}{{federation.PurgeNever, true}, {federation.PurgeGraciously, false}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			sched, err := scheduler.New(e.host, e.typ, scheduler.Options{Clock: e.clock})
			require.NoError(t, err)
			pass := func() {
				t.Helper()
				_, err := sched.Reconcile(ctx, key)
				require.NoError(t, err)
				_, err = e.s.Reconcile(ctx, key)
				require.NoError(t, err)
			}
			e.apply(t, e.typ.FederatedGVR(), frontend)
			e.edit(t, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, string(tc.mode), "spec", "placement", "failover", "purgeMode")
			})
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}
`)
			pass()
			require.NotNil(t, e.member(t, "azure"))

			// azure is drained: its 2 replicas move to aws and gcp, and it keeps them meanwhile.
			cl, err := e.host.Get(ctx, federation.ClusterGVR, "", "azure")
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(cl.Object, []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}, "spec", "taints"))
			_, err = e.host.Update(ctx, federation.ClusterGVR, cl)
			require.NoError(t, err)
			pass()
			s := e.fed(t).Status.Schedule
			require.Len(t, s.Evictions, 1, "%+v", s)
			require.Contains(t, schedule(t, e), "azure", "azure keeps its replicas while the eviction lasts")
			require.NotNil(t, e.member(t, "azure"))

			// No member reports its replicas available here: the grace period ends it.
			e.clock.Step(time.Duration(federation.DefaultGracePeriodSeconds) * time.Second)
			pass()
			m := e.member(t, "azure")
			if !tc.release {
				require.Nil(t, m, "Graciously: the copy is deleted once the eviction ends")
				require.Empty(t, e.fed(t).Status.Schedule.Evictions)
				return
			}
			require.NotNil(t, m, "Never: the copy stays")
			require.NotContains(t, m.GetLabels(), federation.ManagedByLabel, "and is no longer the federation's")
			pass()
			fed := e.fed(t)
			require.NotContains(t, schedule(t, e), "azure")
			for _, c := range fed.Status.Clusters {
				require.NotEqual(t, "azure", c.Name, "released: no longer listed")
			}
			require.Empty(t, fed.Status.Schedule.Evictions, "nothing of the eviction is left")
			require.NotNil(t, e.member(t, "azure"))
		})
	}
}
