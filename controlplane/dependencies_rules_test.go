package controlplane_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
)

// The rules of issue 34's dependency items, each against a whole control plane on the fake
// fleet: credentials never travel, an explicit exclusion wins, dependencies follow what each
// cluster's pods reference after overrides, a dependency stays until its workload's copy is
// gone, and a PersistentVolumeClaim is never collateral of a move.

var (
	pvcGVR       = federation.PersistentVolumeClaimType.TargetGVR()
	fedPVCGVR    = federation.PersistentVolumeClaimType.FederatedGVR()
	deployGVR    = federation.DeploymentType.TargetGVR()
	fedDeploys   = federation.DeploymentType.FederatedGVR()
	fedSecrets   = federation.SecretType.FederatedGVR()
	fedConfigs   = federation.ConfigMapType.FederatedGVR()
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
	return strings.Join(e.holding(gvr, namespace, name, nil), ",")
}

// live returns the clusters (of eu, us) that hold default/name of gvr and are not deleting it.
func (e *env) live(gvr schema.GroupVersionResource, name string) string {
	return strings.Join(e.holding(gvr, "default", name, func(u *unstructured.Unstructured) bool { return u.GetDeletionTimestamp() == nil }), ",")
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

// TestCredentialsNeverFollowWorkloads (issue 34, item 10): a member's credentials (a Secret
// labelled federation.k8s.io/cluster), a service-account token Secret and the control plane's
// own Secrets are refused by the dependencies loop, as by the propagation loop: nothing is
// federated for them, the workload's condition names each, and what else it needs follows. A
// workload in the control plane's own namespace federates nothing at all, and says so.
func TestCredentialsNeverFollowWorkloads(t *testing.T) {
	e, stop := depsEnv(t)
	defer func() { require.NoError(t, stop()) }()
	const system = "fedkit-system"
	create(t, e.host, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: `+system+`}}`)
	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "cfg", "a", "b"))
	create(t, e.host, secretGVR, `{apiVersion: v1, kind: Secret, metadata: {name: eu-creds, namespace: default, labels: {`+federation.SecretClusterLabel+`: eu}}, data: {token: dG9r}}`)
	create(t, e.host, secretGVR, `{apiVersion: v1, kind: Secret, metadata: {name: sa-token, namespace: default, annotations: {kubernetes.io/service-account.name: default}},
  type: kubernetes.io/service-account-token, data: {token: dG9r}}`)
	create(t, e.host, secretGVR, `{apiVersion: v1, kind: Secret, metadata: {name: cp-own, namespace: `+system+`}, data: {k: dg==}}`)
	create(t, e.host, fedDeploys, podWorkload("default", "web", `          containers: [{name: app, image: "nginx:1.27", envFrom: [{secretRef: {name: eu-creds}}, {secretRef: {name: sa-token}}]}]
          volumes: [{name: config, configMap: {name: cfg}}]`, `  placement: {clusters: [{name: eu}, {name: us}]}`))
	create(t, e.host, fedDeploys, podWorkload(system, "agent", `          containers: [{name: app, image: "nginx:1.27", envFrom: [{secretRef: {name: cp-own}}]}]`,
		`  placement: {clusters: [{name: eu}]}`))

	stepUntilf(t, e.clock, time.Second, func() string {
		_, _, web := e.resolvedIn("default", "web")
		_, _, agent := e.resolvedIn(system, "agent")
		return "both workloads name their refused Secrets, cfg follows: web: " + web + "; agent: " + agent + "; cfg in " + e.where(configMapGVR, "cfg")
	}, func() bool {
		s, r, msg := e.resolvedIn("default", "web")
		as, ar, amsg := e.resolvedIn(system, "agent")
		return s == "False" && r == dependencies.ReasonDependencyRefused && strings.Contains(msg, "Secret/eu-creds") && strings.Contains(msg, "Secret/sa-token") &&
			as == "False" && ar == dependencies.ReasonNamespaceRefused && strings.Contains(amsg, "control plane's own namespace") &&
			e.where(configMapGVR, "cfg") == "eu,us" && e.inNamespace(deployGVR, system, "agent") == "eu"
	})
	hold(t, e, time.Second, 10, func() string { return "a refused Secret was federated" }, func() bool {
		for _, s := range []struct{ ns, name string }{{"default", "eu-creds"}, {"default", "sa-token"}, {system, "cp-own"}} {
			if _, err := e.host.Peek(fedSecrets, s.ns, s.name); err == nil || e.inNamespace(secretGVR, s.ns, s.name) != "" {
				return false
			}
		}
		return true
	})
}

// TestExplicitExclusionWins (issue 34, item 9): a dependency whose own placement excludes a
// cluster (excludeClusters, a taint it does not tolerate) is never pushed there by a
// workload that runs there; the workload names the dependency and the cluster. A dependency
// nobody placed follows its workload into a tainted cluster the workload tolerates.
func TestExplicitExclusionWins(t *testing.T) {
	e, stop := depsEnv(t)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	us, err := e.host.Get(ctx, federation.ClusterGVR, "", "us")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(us.Object, []any{map[string]any{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}}, "spec", "taints"))
	_, err = e.host.Update(ctx, federation.ClusterGVR, us)
	require.NoError(t, err)

	for name, placement := range map[string]string{"excluded": `{clusterSelector: {}, excludeClusters: [us]}`, "untolerated": `{clusters: [{name: eu}]}`} {
		create(t, e.host, fedConfigs, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: `+name+`, namespace: default},
  spec: {template: {data: {owner: me}}, placement: `+placement+`}}`)
	}
	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "plain", "a", "b"))
	create(t, e.host, fedDeploys, podWorkload("default", "web", `          containers: [{name: app, image: "nginx:1.27"}]
          volumes: [{name: a, configMap: {name: excluded}}, {name: b, configMap: {name: untolerated}}, {name: c, configMap: {name: plain}}]`,
		`  placement:
    clusters: [{name: eu}, {name: us}]
    tolerations: [{key: dedicated, operator: Equal, value: batch, effect: NoSchedule}]`))

	stepUntilf(t, e.clock, time.Second, func() string {
		s, r, msg := e.resolvedIn("default", "web")
		return "web in eu,us, plain follows it, and its condition names both refusals: web in " + e.where(deployGVR, "web") +
			", plain in " + e.where(configMapGVR, "plain") + "; condition " + s + " " + r + ": " + msg
	}, func() bool {
		s, r, msg := e.resolvedIn("default", "web")
		return e.where(deployGVR, "web") == "eu,us" && e.where(configMapGVR, "plain") == "eu,us" &&
			s == "False" && r == dependencies.ReasonDependencyNotPlaceable &&
			strings.Contains(msg, "ConfigMap/excluded") && strings.Contains(msg, "ConfigMap/untolerated") && strings.Contains(msg, "us")
	})
	hold(t, e, time.Second, 10, func() string {
		return "excluded in " + e.where(configMapGVR, "excluded") + ", untolerated in " + e.where(configMapGVR, "untolerated") + "; want eu for both"
	}, func() bool {
		return e.where(configMapGVR, "excluded") == "eu" && e.where(configMapGVR, "untolerated") == "eu"
	})
}

// TestDependenciesFollowOverrides (issue 34, item 11): a per-cluster override that points
// eu's pods at creds-eu sends creds-eu to eu and keeps creds-us out of it; the condition is
// not Resolved while creds-eu is missing.
func TestDependenciesFollowOverrides(t *testing.T) {
	e, stop := depsEnv(t)
	defer func() { require.NoError(t, stop()) }()
	create(t, e.host, secretGVR, nativeDoc("Secret", "creds-us", "token", "dXM="))
	create(t, e.host, fedDeploys, podWorkload("default", "web", `          containers: [{name: app, image: "nginx:1.27", envFrom: [{secretRef: {name: creds-us}}]}]`, `  placement: {clusters: [{name: eu}, {name: us}]}
  overrides:
  - clusterName: eu
    clusterOverrides: [{path: /spec/template/spec/containers/0/envFrom/0/secretRef/name, value: creds-eu}]`))

	stepUntilf(t, e.clock, time.Second, func() string {
		s, r, msg := e.resolvedIn("default", "web")
		return "creds-us in us only, DependencyMissing naming creds-eu: creds-us in " + e.where(secretGVR, "creds-us") + "; condition " + s + " " + r + ": " + msg
	}, func() bool {
		s, r, msg := e.resolvedIn("default", "web")
		return e.where(deployGVR, "web") == "eu,us" && e.where(secretGVR, "creds-us") == "us" &&
			s == "False" && r == dependencies.ReasonDependencyMissing && strings.Contains(msg, "Secret/creds-eu")
	})
	// No watch tells the loop of a new Secret: it looks again within dependencies.SecretRecheck.
	create(t, e.host, secretGVR, nativeDoc("Secret", "creds-eu", "token", "ZXU="))
	stepUntilf(t, e.clock, 10*time.Second, func() string {
		s, r, msg := e.resolvedIn("default", "web")
		return "creds-eu in eu only, creds-us in us only, Resolved: creds-eu in " + e.where(secretGVR, "creds-eu") + ", creds-us in " + e.where(secretGVR, "creds-us") + "; condition " + s + " " + r + ": " + msg
	}, func() bool {
		s, _, _ := e.resolvedIn("default", "web")
		return e.where(secretGVR, "creds-eu") == "eu" && e.where(secretGVR, "creds-us") == "us" && s == "True"
	})
}

// claimEnv runs a control plane whose FederatedDeployment default/db runs in eu on the host
// claim default/data, which has followed it there (a generated
// FederatedPersistentVolumeClaim).
func claimEnv(t *testing.T) (*env, func() error) {
	t.Helper()
	e, stop := depsEnv(t)
	create(t, e.host, pvcGVR, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default},
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}`)
	create(t, e.host, fedDeploys, podWorkload("default", "db", `          containers: [{name: app, image: "postgres:17"}]
          volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]`, `  placement: {clusters: [{name: eu}]}`))
	stepUntilf(t, e.clock, time.Second, func() string { return "the claim in eu: " + e.where(pvcGVR, "data") }, func() bool {
		_, err := e.host.Peek(fedPVCGVR, "default", "data")
		return e.where(pvcGVR, "data") == "eu" && e.where(deployGVR, "db") == "eu" && err == nil
	})
	return e, stop
}

// moveDB places default/db in cluster alone.
func (e *env) moveDB(t *testing.T, cluster string) {
	t.Helper()
	u, err := e.host.Get(context.Background(), fedDeploys, "default", "db")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": cluster}}, "spec", "placement", "clusters"))
	_, err = e.host.Update(context.Background(), fedDeploys, u)
	require.NoError(t, err)
}

// claimUID returns the uid of the member claim data in cluster, "" when there is none.
func (e *env) claimUID(cluster string) string {
	m, _ := e.fleet.Member(cluster)
	u, err := m.Peek(pvcGVR, "default", "data")
	if err != nil {
		return ""
	}
	return string(u.GetUID())
}

// TestClaimsStayWhenWorkloadsMove (issue 34, item 8): a PersistentVolumeClaim that follows
// its workload is never deleted from a member because the workload moved away (a placement
// edit here; a drain, a failover and a rebalance take the same path) nor because it was
// deleted: the copy left behind is released, and taken back, data and all, when the
// workload returns.
func TestClaimsStayWhenWorkloadsMove(t *testing.T) {
	e, stop := claimEnv(t)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	euClaim := e.claimUID("eu")
	e.moveDB(t, "us")
	stepUntilf(t, e.clock, time.Second, func() string {
		return "db in us, the claim in both: db in " + e.where(deployGVR, "db") + ", claim in " + e.where(pvcGVR, "data")
	}, func() bool {
		return e.where(deployGVR, "db") == "us" && e.where(pvcGVR, "data") == "eu,us"
	})
	hold(t, e, time.Second, 10, func() string { return "eu's claim was deleted: claim in " + e.where(pvcGVR, "data") }, func() bool {
		return e.claimUID("eu") == euClaim
	})

	e.moveDB(t, "eu")
	stepUntilf(t, e.clock, time.Second, func() string {
		return "db back in eu on its own claim: db in " + e.where(deployGVR, "db") + ", claim in " + e.where(pvcGVR, "data")
	}, func() bool {
		eu, _ := e.fleet.Member("eu")
		m, err := eu.Peek(pvcGVR, "default", "data")
		return e.where(deployGVR, "db") == "eu" && err == nil && string(m.GetUID()) == euClaim && m.GetLabels()[federation.ManagedByLabel] != ""
	})
	usClaim := e.claimUID("us")
	require.NotEmpty(t, usClaim)

	// The workload is deleted: both claims stay.
	require.NoError(t, e.host.Delete(ctx, fedDeploys, "default", "db", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string { return "db gone: db in " + e.where(deployGVR, "db") }, func() bool {
		_, err := e.host.Peek(fedDeploys, "default", "db")
		return err != nil && e.where(deployGVR, "db") == ""
	})
	hold(t, e, time.Second, 10, func() string { return "a claim was deleted with its workload: claim in " + e.where(pvcGVR, "data") }, func() bool {
		return e.claimUID("eu") == euClaim && e.claimUID("us") == usClaim
	})
}

// TestClaimRemovalOptIn (issue 34, item 8): with federation.ClaimRemovalAnnotation: Delete
// on its FederatedPersistentVolumeClaim, a claim does leave a cluster its workload left; and
// the user deleting the host claim deletes the member claims it placed.
func TestClaimRemovalOptIn(t *testing.T) {
	e, stop := claimEnv(t)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	f, err := e.host.Get(ctx, fedPVCGVR, "default", "data")
	require.NoError(t, err)
	f.SetAnnotations(map[string]string{federation.ClaimRemovalAnnotation: federation.ClaimRemovalDelete})
	_, err = e.host.Update(ctx, fedPVCGVR, f)
	require.NoError(t, err)

	e.moveDB(t, "us")
	stepUntilf(t, e.clock, time.Second, func() string { return "the claim moved to us: claim in " + e.where(pvcGVR, "data") }, func() bool {
		return e.where(deployGVR, "db") == "us" && e.where(pvcGVR, "data") == "us"
	})

	// The user deletes the claim.
	require.NoError(t, e.host.Delete(ctx, pvcGVR, "default", "data", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string { return "the claim gone from us: claim in " + e.where(pvcGVR, "data") }, func() bool {
		return e.where(pvcGVR, "data") == ""
	})
}
