package sync_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
)

// A template with cpu: 1, which a real member server stores as "1": after a restart, a new
// Syncer over members that already run the desired objects makes zero writes (it compared
// the number with the string and wrote every member once more). A hand edit of the cpu
// request is still put back.
func TestNewSyncerAfterRestartWritesNothingOnRealServers(t *testing.T) {
	f := start(t)
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: restart}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: cpu, namespace: restart}
spec:
  template:
    metadata: {labels: {app: cpu}}
    spec:
      replicas: 1
      selector: {matchLabels: {app: cpu}}
      template:
        metadata: {labels: {app: cpu}}
        spec:
          containers:
          - name: nginx
            image: "nginx:1.21"
            args: []
            resources: {requests: {cpu: 1, memory: 512Mi}, limits: {cpu: 2.0}}
  placement:
    clusters: [{name: m1}, {name: m2}]
`)
	key := federation.Key{Namespace: "restart", Name: "cpu"}
	eventually(t, func() bool {
		u, err := f.host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
		if err != nil {
			return false
		}
		obj, err := federation.FederatedObjectFromUnstructured(u)
		return err == nil && obj.Status.SyncedRevision == 1
	}, "synced revision 1")
	for _, m := range memberNames {
		require.Equal(t, "1", cpuRequest(t, f.memberIn(t, m, key.Namespace, key.Name)), "%s: the server stores cpu: 1 as \"1\"", m)
	}

	// The restart: a new Syncer, which knows nothing of the members yet.
	reg := prometheus.NewRegistry()
	restarted, err := fedsync.New(f.host, f.set, federation.DeploymentType, fedsync.Options{Registerer: reg, Logger: testr.New(t)})
	require.NoError(t, err)
	reconcileOnce(t, restarted, key)
	require.Zero(t, (&fixture{reg: reg}).memberWrites(t), "a new Syncer over members that run the desired objects writes nothing")

	// A hand edit of the cpu request is drift, put back.
	u := f.memberIn(t, "m1", key.Namespace, key.Name)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "1500m"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	_, err = f.members["m1"].Update(context.Background(), deployments, u)
	require.NoError(t, err)
	reconcileOnce(t, restarted, key)
	require.Equal(t, "1", cpuRequest(t, f.memberIn(t, "m1", key.Namespace, key.Name)), "the hand edit is put back")
	before := (&fixture{reg: reg}).memberWrites(t)
	reconcileOnce(t, restarted, key)
	require.Equal(t, before, (&fixture{reg: reg}).memberWrites(t), "and not written again")
}

// reconcileOnce runs one pass of s, again when it met a Conflict: the fixture's Syncer runs
// too, and may write the same objects meanwhile.
func reconcileOnce(t *testing.T, s *fedsync.Syncer, key federation.Key) {
	t.Helper()
	var err error
	for range 5 {
		if _, err = s.Reconcile(context.Background(), key); !apierrors.IsConflict(err) {
			break
		}
	}
	require.NoError(t, err)
}

func cpuRequest(t *testing.T, u *unstructured.Unstructured) any {
	t.Helper()
	require.NotNil(t, u)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, cs)
	v, _, _ := unstructured.NestedFieldNoCopy(cs[0].(map[string]any), "resources", "requests", "cpu")
	return v
}
