package scheduler_test

import (
	"context"
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// When another loop writes the object between the scheduler's read and its status write (sync
// patches its finalizer, the collector writes its fields, as soon as the object appears), the
// write meets a Conflict; the pass decides again on a fresh read and writes, keeping the other
// loop's fields, instead of failing the pass into the queue's backoff (on real servers with
// 48 workers, 1.8 conflicting scheduler writes per new object).
func TestConflictIsDecidedAgainInThePass(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	var once gosync.Once
	e.host.SetHooks(fake.Hooks{
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			once.Do(func() {
				// The collector's write lands first.
				u, err := next.Get(ctx, gvr, obj.GetNamespace(), obj.GetName())
				require.NoError(t, err)
				require.NoError(t, unstructured.SetNestedField(u.Object, int64(7), "status", "aggregated", "replicas"))
				_, err = next.UpdateStatus(ctx, gvr, u)
				require.NoError(t, err)
			})
			return next.UpdateStatus(ctx, gvr, obj)
		},
	})
	e.host.ClearActions()
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	calls := map[fake.Verb]int{}
	for _, a := range e.host.Actions() {
		if a.Resource == federation.DeploymentType.FederatedGVR() {
			calls[a.Verb]++
		}
	}
	require.Equal(t, map[fake.Verb]int{fake.VerbGet: 2, fake.VerbUpdateStatus: 2}, calls,
		"the pass's read, the re-read after the Conflict, the conflicting write and the one that lands")
	obj := e.federated(t, federation.DeploymentType)
	require.NotNil(t, obj.Status.Schedule)
	require.NotEmpty(t, schedule(obj))
	require.NotNil(t, obj.Status.Aggregated)
	require.EqualValues(t, 7, obj.Status.Aggregated.Replicas, "the collector's field")
}
