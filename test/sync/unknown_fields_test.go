package sync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// A template with fields the member's API server does not know (a typo, a field of a newer
// Kubernetes): the server drops them as it stores the object. Sync owns what its render sets,
// so it would see those fields "missing" after every write; it must not update the object
// again and again (hostile input, against real API servers: the fake keeps unknown fields).
func TestUnknownTemplateFieldsDoNotThrashOnRealServers(t *testing.T) {
	f := start(t)
	// Its own namespace: another test's may be terminating in the members (testenv runs no
	// namespace controller).
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: typos}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: typo, namespace: typos}
spec:
  template:
    metadata: {labels: {app: typo}}
    spec:
      replicas: 1
      replicaz: 3
      selector: {matchLabels: {app: typo}}
      template:
        metadata: {labels: {app: typo}}
        spec: {containers: [{name: nginx, image: "nginx:1.21", imagePullPolizy: Always}]}
  placement:
    clusters: [{name: m1}, {name: m2}]
`)
	for _, m := range memberNames {
		eventually(t, func() bool { return f.memberIn(t, m, "typos", "typo") != nil }, m+": created")
	}
	_, found, _ := unstructuredField(f.memberIn(t, "m1", "typos", "typo").Object, "spec", "replicaz")
	require.False(t, found, "the real server drops unknown fields")
	// Sync records the revision after its member writes have returned and been counted.
	eventually(t, func() bool {
		u, err := f.host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), "typos", "typo")
		if err != nil {
			return false
		}
		obj, err := federation.FederatedObjectFromUnstructured(u)
		return err == nil && obj.Status.SyncedRevision == 1
	}, "synced revision 1")
	before := f.memberWrites(t)

	// Another writer (here an annotation; in a real cluster, the deployment controller's
	// status) makes sync compare the object again: nothing to write for the pruned fields.
	// Then a real drift: the syncer handles the object's changes in order, so once that is
	// reverted the annotation has been seen.
	u := f.memberIn(t, "m1", "typos", "typo")
	a := u.GetAnnotations()
	a["team.example.com/seen"] = "yes"
	u.SetAnnotations(a)
	u, err := f.members["m1"].Update(context.Background(), deployments, u)
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "evil:1"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	_, err = f.members["m1"].Update(context.Background(), deployments, u)
	require.NoError(t, err)
	eventually(t, func() bool { return image(f.memberIn(t, "m1", "typos", "typo")) == "nginx:1.21" }, "drift reverted")
	// The server shows the revert before the Syncer's call returns and counts it.
	eventually(t, func() bool { return f.memberWrites(t) >= before+1 }, "the revert counted")
	require.Equal(t, before+1, f.memberWrites(t), "one write, the revert: sync does not fight the server's pruning")
}

func unstructuredField(obj map[string]any, fields ...string) (any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if cur, ok = m[f]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

func (f *fixture) memberIn(t *testing.T, cluster, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := f.members[cluster].Get(context.Background(), deployments, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return u
}
