package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestKubeFedMembersAdoptedOnRealServers: the member Deployments KubeFed made (labelled
// kubefed.io/managed: "true") are taken over by the FederatedDeployment migrated from KubeFed
// and updated in place: the same uid, the new image, fedkit's label instead of KubeFed's.
func TestKubeFedMembersAdoptedOnRealServers(t *testing.T) {
	f := start(t)
	// A namespace of its own, which KubeFed made in the members: the others' tests expect sync
	// to create "shop" there.
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: from-kubefed}}`)
	uids := map[string]string{}
	for _, m := range memberNames {
		fedtest.Create(t, f.members[m], namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: from-kubefed, labels: {kubefed.io/managed: "true"}}}`)
		fedtest.Create(t, f.members[m], deployments, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: from-kubefed, namespace: from-kubefed, labels: {kubefed.io/managed: "true"}}
spec:
  replicas: 1
  selector: {matchLabels: {app: from-kubefed}}
  template:
    metadata: {labels: {app: from-kubefed}}
    spec: {containers: [{name: web, image: "nginx:1.20"}]}
`)
		uids[m] = string(f.memberIn(t, m, "from-kubefed", "from-kubefed").GetUID())
	}
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: from-kubefed, namespace: from-kubefed, annotations: {federation.k8s.io/migrated-from: kubefed}}
spec:
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: from-kubefed}}
      template:
        metadata: {labels: {app: from-kubefed}}
        spec: {containers: [{name: web, image: "nginx:1.21"}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
`)
	for _, m := range memberNames {
		eventually(t, func() bool {
			u := f.memberIn(t, m, "from-kubefed", "from-kubefed")
			return u != nil && image(u) == "nginx:1.21"
		}, m+": adopted and updated")
		u := f.memberIn(t, m, "from-kubefed", "from-kubefed")
		require.Equal(t, uids[m], string(u.GetUID()), "%s: updated in place, not created again", m)
		require.Equal(t, federation.ManagedByValue, u.GetLabels()[federation.ManagedByLabel], m)
		require.NotContains(t, u.GetLabels(), federation.KubeFedManagedLabel, m)
	}
}
