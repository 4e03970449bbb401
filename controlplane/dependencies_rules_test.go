package controlplane_test

import (
	"fmt"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
)

// The rules of issue 34's dependency items, each against a whole control plane on the fake
// fleet: credentials never travel, an explicit exclusion wins, dependencies follow what each
// cluster's pods reference after overrides, a dependency stays until its workload's copy is
// gone, and a PersistentVolumeClaim is never collateral of a move.

var (
	pvcGVR      = federation.PersistentVolumeClaimType.TargetGVR()
	fedPVCGVR   = federation.PersistentVolumeClaimType.FederatedGVR()
	deployGVR   = federation.DeploymentType.TargetGVR()
	fedDeploys  = federation.DeploymentType.FederatedGVR()
	fedSecrets  = federation.SecretType.FederatedGVR()
	fedConfigs  = federation.ConfigMapType.FederatedGVR()
	clusterList = []string{"eu", "us"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	rspGVR       = federation.ReplicaSchedulingPreferenceGVR
)

// podWorkload is FederatedDeployment namespace/name with propagateDependencies, whose pod
// spec is podSpec (YAML, indented for spec.template.spec.template.spec), with extra spec
// fields (YAML, indented for spec: placement, overrides).
func podWorkload(namespace, name, podSpec, extra string) string {
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: ` + name + `, namespace: ` + namespace + `}
spec:
  propagateDependencies: true
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: ` + name + `}}
      template:
        metadata: {labels: {app: ` + name + `}}
        spec:
` + podSpec + `
` + extra
}

// inNamespace returns the clusters (of eu, us) that hold namespace/name of gvr.
func (e *env) inNamespace(gvr schema.GroupVersionResource, namespace, name string) string {
	var out []string
	for _, c := range clusterList {
		m, _ := e.fleet.Member(c)
		if _, err := m.Peek(gvr, namespace, name); err == nil {
			out = append(out, c)
		}
	}
	return strings.Join(out, ",")
}

// live returns the clusters (of eu, us) that hold default/name of gvr and are not deleting it.
func (e *env) live(gvr schema.GroupVersionResource, name string) string {
	var out []string
	for _, c := range clusterList {
		m, _ := e.fleet.Member(c)
		if u, err := m.Peek(gvr, "default", name); err == nil && u.GetDeletionTimestamp() == nil {
			out = append(out, c)
		}
	}
	return strings.Join(out, ",")
}

// resolvedIn returns the DependenciesResolved condition's status, reason and message of
// FederatedDeployment namespace/name.
func (e *env) resolvedIn(namespace, name string) (string, string, string) {
	u, err := e.host.Peek(fedDeploys, namespace, name)
	if err != nil {
		return "", "", ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == federation.ConditionDependenciesResolved {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// federated decodes the federated object namespace/name of gvr on the host; nil when absent.
func (e *env) federated(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Peek(gvr, namespace, name)
	if err != nil {
		return nil
	}
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return obj
}

// hold runs the control plane for n steps of d and fails when cond stops holding.
func hold(t *testing.T, e *env, d time.Duration, n int, what func() string, cond func() bool) {
	t.Helper()
	for i := 0; i < n; i++ {
		e.clock.Step(d)
		time.Sleep(20 * time.Millisecond)
		if !cond() {
			t.Fatalf("after %d steps of %s: %s", i+1, d, what())
		}
	}
}




// TestDependencyStaysWhileTheWorkloadCopyIsHeld (issue 34, item 12): with sync's Foreground
// deletion a workload's member copy that leaves a cluster stays, held by foregroundDeletion,
// until the member's garbage collector ends it. Meanwhile the cluster stays in
// status.clusters, the workload's ConfigMap stays there, and the scheduler adds no eviction
// that would put the copy back. Once the copy is gone (NotFound), the ConfigMap goes.
func TestDependencyStaysWhileTheWorkloadCopyIsHeld(t *testing.T) {
	e := newEnv(t)
	o := e.options(federation.DeploymentType, federation.ConfigMapType, federation.SecretType, federation.ServiceAccountType, federation.PersistentVolumeClaimType)
	o.Dependencies.CacheSyncTimeout = 2 * time.Minute
	o.Disable.DNS = true
	o.Sync.DeletionPropagation = metav1.DeletePropagationForeground
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()

	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "cfg", "a", "b"))
	// A preference divides the replicas, so a cluster leaving the placement is evicted
	// gracefully (the replacements come up first).
	create(t, e.host, rspGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 4
  intersectWithClusterSelector: true
  clusters: {"*": {weight: 1}}
`)
	create(t, e.host, fedDeploys, podWorkload("default", "web", `          containers: [{name: app, image: "nginx:1.27"}]
          volumes: [{name: config, configMap: {name: cfg}}]`, `  placement: {clusters: [{name: eu}, {name: us}]}`))
	stepUntilf(t, e.clock, time.Second, func() string {
		return "web and cfg in eu,us: web in " + e.where(deployGVR, "web") + ", cfg in " + e.where(configMapGVR, "cfg")
	}, func() bool {
		return e.where(deployGVR, "web") == "eu,us" && e.where(configMapGVR, "cfg") == "eu,us" && e.memberReplicas("eu", "web") == 2
	})

	u, err := e.host.Get(ctx, fedDeploys, "default", "web")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "us"}}, "spec", "placement", "clusters"))
	_, err = e.host.Update(ctx, fedDeploys, u)
	require.NoError(t, err)
	eu, _ := e.fleet.Member("eu")
	deleting := func() bool {
		m, err := eu.Peek(deployGVR, "default", "web")
		return err == nil && m.GetDeletionTimestamp() != nil
	}
	// listed is eu's propagation in status.clusters, "-" when it is not listed.
	listed := func() string {
		obj := e.federated(t, fedDeploys, "default", "web")
		for _, c := range obj.Status.Clusters {
			if c.Name == "eu" {
				return c.Propagation
			}
		}
		return "-"
	}
	scheduled := func() bool {
		obj := e.federated(t, fedDeploys, "default", "web")
		s := obj.Status.Schedule
		return s != nil && (slices.ContainsFunc(s.Clusters, func(c federation.ScheduledCluster) bool { return c.Name == "eu" }) ||
			slices.ContainsFunc(s.Evictions, func(ev federation.Eviction) bool { return ev.Cluster == "eu" }))
	}
	seen := func() string {
		return fmt.Sprintf("eu's copy deleting %v, eu listed %q, eu scheduled or evicted %v, cfg in %s", deleting(), listed(), scheduled(), e.live(configMapGVR, "cfg"))
	}
	// The eviction ends once us runs 4; sync deletes eu's copy, which foregroundDeletion
	// holds, and lists eu as waiting for its removal.
	stepUntilf(t, e.clock, time.Second, func() string { return "eu's copy is being deleted, eu listed as waiting for it: " + seen() }, func() bool {
		return deleting() && listed() == federation.PropagationWaitingForRemoval && !scheduled()
	})
	hold(t, e, time.Second, 30, func() string { return "while eu's copy is held: " + seen() }, func() bool {
		return deleting() && listed() == federation.PropagationWaitingForRemoval && !scheduled() && e.live(configMapGVR, "cfg") == "eu,us"
	})

	// The member's garbage collector finishes: the copy is gone, and the ConfigMap goes
	// (deleted in the foreground too, so it is being deleted).
	require.NoError(t, eu.Drift(deployGVR, "default", "web", func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }))
	stepUntilf(t, e.clock, time.Second, func() string {
		return "eu's copy and cfg gone from eu, eu no longer listed: web in " + e.where(deployGVR, "web") + ", " + seen()
	}, func() bool {
		return e.where(deployGVR, "web") == "us" && e.live(configMapGVR, "cfg") == "us" && listed() == "-"
	})
	hold(t, e, time.Second, 10, func() string { return "web came back to eu: web in " + e.where(deployGVR, "web") }, func() bool {
		return e.where(deployGVR, "web") == "us"
	})
}



