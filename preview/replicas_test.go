package preview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMemberReplicasAfterOverrides: each cluster's row says how many replicas the member gets
// once the overrides are applied, beside what the scheduler gave it.
func TestMemberReplicasAfterOverrides(t *testing.T) {
	rep := runChecks(t, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      replicas: 3
      selector: {matchLabels: {app: api}}
      template: {metadata: {labels: {app: api}}, spec: {containers: [{name: api, image: api}]}}
  placement: {clusters: [{name: eu}, {name: us}]}
  overrides:
  - clusterName: us
    clusterOverrides: [{path: /spec/replicas, value: 5}]
`)
	got := map[string]string{}
	for _, c := range rep.Objects[0].Clusters {
		got[c.Name] = c.ReplicasText()
	}
	if diff := cmp.Diff(map[string]string{"eu": "3", "us": "5 (scheduled 3)"}, got); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	for _, c := range rep.Objects[0].Clusters {
		if c.Name == "us" && (c.MemberReplicas == nil || *c.MemberReplicas != 5) {
			t.Errorf("us: MemberReplicas = %v; want 5", c.MemberReplicas)
		}
	}
}
