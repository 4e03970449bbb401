package preview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/preview"
)

// TestPolicyPreviewDecidesAsTheLoop: preview chooses each native object's policy with
// package propagation's own decision (propagation.DecideWrites), so it says what the loop
// does: a PropagationPolicy with preemption Always takes an object nobody federates yet from
// a ClusterPropagationPolicy of higher priority, and nothing in the control plane's
// namespace is selected.
func TestPolicyPreviewDecidesAsTheLoop(t *testing.T) {
	in, err := preview.Decode([]byte(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu}
spec: {apiEndpoint: "https://eu.example.com"}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: platform}
spec:
  priority: 10
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusters: [{name: eu}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: PropagationPolicy
metadata: {name: team, namespace: shop}
spec:
  preemption: Always
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusters: [{name: eu}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: fedkit-system}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: agent, image: agent}]}}}
`))
	require.NoError(t, err)
	in.AssumeReady, in.Fresh = true, true
	rep, err := preview.Run(in)
	require.NoError(t, err)
	got := map[string]string{}
	for _, n := range rep.Natives {
		got[n.Namespace+"/"+n.Name] = n.Policy
	}
	want := map[string]string{"shop/web": "shop/team", "fedkit-system/agent": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the policy of each native object (-want +got):\n%s", diff)
	}
}
