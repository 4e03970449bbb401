package status_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// clusterSet hands out the members' real clients by name.
type clusterSet map[string]*kube.Client

func (s clusterSet) Client(name string) (federation.ClusterClient, error) {
	c, ok := s[name]
	if !ok {
		return nil, fmt.Errorf("test: %q: %w", name, federation.ErrClusterNotFound)
	}
	return c, nil
}

var (
	depGVR  = federation.DeploymentType.TargetGVR()
	fedGVR  = federation.DeploymentType.FederatedGVR()
	nodeGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	key     = federation.Key{Namespace: "default", Name: "web"}
)

// fixture is the host (with the Cluster and FederatedDeployment CRDs and a Cluster object per
// member) and the members' clients.
type fixture struct {
	env     *testenv.Env
	host    *kube.Client
	members clusterSet
}

func setup(ctx context.Context, t *testing.T) *fixture {
	t.Helper()
	env := testenv.Shared(t)
	f := &fixture{env: env, members: clusterSet{}}
	f.host = env.Client(t, hostName)
	crds, err := federation.CRDs(federation.DeploymentType)
	require.NoError(t, err)
	require.NoError(t, conformance.InstallCRDs(ctx, f.host, crds...))
	for _, m := range []string{member1, member2} {
		f.members[m] = env.Client(t, m)
		c := &federation.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: m},
			Spec:       federation.ClusterSpec{APIEndpoint: env.Config(m).Host},
		}
		c.APIVersion, c.Kind = federation.ClusterGVK.ToAPIVersionAndKind()
		u, err := federation.ToUnstructured(c)
		require.NoError(t, err)
		_, err = f.host.Create(ctx, federation.ClusterGVR, u)
		require.NoError(t, err)
	}
	return f
}

// object decodes a JSON-ish literal built with maps.
func object(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// createWithStatus creates obj in c and then writes its status, as the member's controllers
// would (this environment runs none).
func createWithStatus(ctx context.Context, t *testing.T, c federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	t.Helper()
	st := obj.Object["status"]
	created, err := c.Create(ctx, gvr, obj)
	require.NoError(t, err)
	if st != nil {
		created.Object["status"] = st
		_, err = c.UpdateStatus(ctx, gvr, created)
		require.NoError(t, err)
	}
}

func node(name, zone string, cpu string) *unstructured.Unstructured {
	return object(map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "labels": map[string]any{federation.RegionLabel: "eu-west-1", federation.ZoneLabel: zone}},
		"status": map[string]any{
			"capacity":    map[string]any{"cpu": cpu, "memory": "16Gi", "pods": "110"},
			"allocatable": map[string]any{"cpu": cpu, "memory": "16Gi", "pods": "110"},
			"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady"}},
		},
	})
}

func deployment(replicas int64) *unstructured.Unstructured {
	return object(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "labels": map[string]any{
			federation.ManagedByLabel: federation.ManagedByValue, federation.FederatedNameLabel: key.Name,
			federation.FederatedNamespaceLabel: key.Namespace},
			"annotations": map[string]any{federation.RevisionAnnotation: "1"}},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}},
		"status": map[string]any{"observedGeneration": int64(1), "replicas": replicas, "updatedReplicas": replicas,
			"readyReplicas": replicas, "availableReplicas": replicas},
	})
}

func (f *fixture) cluster(ctx context.Context, t *testing.T, name string) *federation.Cluster {
	t.Helper()
	u, err := f.host.Get(ctx, federation.ClusterGVR, "", name)
	require.NoError(t, err)
	c, err := federation.ClusterFromUnstructured(u)
	require.NoError(t, err)
	return c
}

func (f *fixture) federated(ctx context.Context, t *testing.T) *federation.FederatedObject {
	t.Helper()
	u, err := f.host.Get(ctx, fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	fed, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return fed
}

func ready(conds []metav1.Condition) metav1.Condition {
	if c := meta.FindStatusCondition(conds, federation.ConditionReady); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// TestOnRealServers: the monitor finds running members Ready, with their real version and the
// capacity of the Nodes created here; a member whose apiserver stops goes Offline on the
// third failed probe and is tainted, and the Collector stops counting it (with two members,
// one fresh is no quorum: the last aggregate stays); restarted, both come back.
func TestOnRealServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := setup(ctx, t)

	m1 := f.members[member1]
	for _, n := range []*unstructured.Unstructured{node("n1", "eu-west-1a", "4"), node("n2", "eu-west-1b", "8")} {
		createWithStatus(ctx, t, m1, nodeGVR, n)
		// kube-apiserver's TaintNodesByCondition admission taints a new Node
		// node.kubernetes.io/not-ready:NoSchedule, and the node lifecycle controller (which
		// these servers do not run) takes it off once the kubelet reports Ready. The monitor
		// leaves tainted nodes out of capacity, so do what that controller would.
		u, err := m1.Get(ctx, nodeGVR, "", n.GetName())
		require.NoError(t, err)
		unstructured.RemoveNestedField(u.Object, "spec", "taints")
		_, err = m1.Update(ctx, nodeGVR, u)
		require.NoError(t, err)
	}
	_, err := m1.Create(ctx, podGVR, object(map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "busy", "namespace": "default"},
		"spec": map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c", "image": "nginx",
			"resources": map[string]any{"requests": map[string]any{"cpu": "1500m", "memory": "1Gi"}}}}},
	}))
	require.NoError(t, err)

	monitor, err := status.NewClusterMonitor(f.host, f.members, status.MonitorOptions{})
	require.NoError(t, err)
	probe := func(name string) {
		t.Helper()
		_, err := monitor.Reconcile(ctx, federation.Key{Name: name})
		require.NoError(t, err)
	}

	t.Run("running members are Ready with their version and capacity", func(t *testing.T) {
		probe(member1)
		probe(member2)
		c := f.cluster(ctx, t, member1)
		require.Equal(t, metav1.ConditionTrue, ready(c.Status.Conditions).Status)
		v, err := m1.ServerVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, v.GitVersion, c.Status.KubernetesVersion)
		require.Equal(t, testenv.KubernetesVersion, c.Status.KubernetesVersion)
		requireQuantity(t, "12", c.Status.Capacity[corev1.ResourceCPU])
		requireQuantity(t, "32Gi", c.Status.Capacity[corev1.ResourceMemory])
		requireQuantity(t, "220", c.Status.Capacity[corev1.ResourcePods])
		requireQuantity(t, "10500m", c.Status.Available[corev1.ResourceCPU])
		requireQuantity(t, "31Gi", c.Status.Available[corev1.ResourceMemory])
		requireQuantity(t, "219", c.Status.Available[corev1.ResourcePods])
		require.Equal(t, "eu-west-1", c.Status.Region)
		require.Equal(t, []string{"eu-west-1a", "eu-west-1b"}, c.Status.Zones)
		require.Equal(t, metav1.ConditionTrue, ready(f.cluster(ctx, t, member2).Status.Conditions).Status)
	})

	// The federated object, its members, and sync's status: generation 1 propagated at
	// revision 1 to both members.
	createWithStatus(ctx, t, m1, depGVR, deployment(2))
	createWithStatus(ctx, t, f.members[member2], depGVR, deployment(3))
	createWithStatus(ctx, t, f.host, fedGVR, object(map[string]any{
		"apiVersion": fedGVR.GroupVersion().String(), "kind": federation.DeploymentType.Federated.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"replicas": int64(2)}}},
		"status": map[string]any{"clusters": []any{map[string]any{"name": member1, "revision": int64(1)}, map[string]any{"name": member2, "revision": int64(1)}},
			"observedGeneration": int64(1), "syncedRevision": int64(1),
			"conditions": []any{map[string]any{"type": federation.ConditionPropagated, "status": "True", "reason": "Propagated",
				"message": "revision 1 runs in 2 cluster(s)", "observedGeneration": int64(1), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}},
	}))
	collector, err := status.New(f.host, f.members, federation.DeploymentType, status.Options{})
	require.NoError(t, err)
	collect := func() *federation.FederatedObject {
		t.Helper()
		_, err := collector.Reconcile(ctx, key)
		require.NoError(t, err)
		return f.federated(ctx, t)
	}

	t.Run("the collector aggregates both members", func(t *testing.T) {
		fed := collect()
		require.Equal(t, &federation.AggregatedStatus{Replicas: 5, ReadyReplicas: 5, AvailableReplicas: 5, UpdatedReplicas: 5, Clusters: 2}, fed.Status.Aggregated)
		require.Equal(t, metav1.ConditionTrue, ready(fed.Status.Conditions).Status, ready(fed.Status.Conditions).Message)
	})

	t.Run("a stopped member goes Offline on the third failed probe", func(t *testing.T) {
		require.NoError(t, f.env.StopCluster(member2))
		for i := 1; i <= 2; i++ {
			probe(member2)
			require.Equal(t, metav1.ConditionTrue, ready(f.cluster(ctx, t, member2).Status.Conditions).Status, "after %d failures", i)
		}
		probe(member2)
		c := f.cluster(ctx, t, member2)
		r := ready(c.Status.Conditions)
		require.Equal(t, metav1.ConditionFalse, r.Status)
		require.Equal(t, status.ReasonClusterUnreachable, r.Reason, r.Message)
		require.True(t, meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionOffline))
		var keys []string
		for _, taint := range c.Spec.Taints {
			keys = append(keys, taint.Key+":"+string(taint.Effect))
		}
		require.Equal(t, []string{federation.TaintClusterNotReady + ":NoSchedule", federation.TaintClusterUnreachable + ":NoSchedule"}, keys)

		fed := collect()
		require.True(t, fed.Status.Clusters[1].Stale)
		require.Equal(t, int64(3), *fed.Status.Clusters[1].Replicas, "last known")
		require.Equal(t, int64(5), fed.Status.Aggregated.ReadyReplicas, "no quorum: the last good aggregate stays")
		require.Equal(t, status.ReasonNoQuorum, ready(fed.Status.Conditions).Reason)
	})

	t.Run("restarted, it is Ready again", func(t *testing.T) {
		require.NoError(t, f.env.StartCluster(ctx, member2))
		// Ready again after DefaultSuccessThreshold probes in a row (hysteresis), not before.
		for i := 1; i < status.DefaultSuccessThreshold; i++ {
			probe(member2)
			require.Equal(t, metav1.ConditionFalse, ready(f.cluster(ctx, t, member2).Status.Conditions).Status, "after %d successes", i)
		}
		probe(member2)
		c := f.cluster(ctx, t, member2)
		require.Equal(t, metav1.ConditionTrue, ready(c.Status.Conditions).Status)
		require.False(t, meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionOffline))
		require.Empty(t, c.Spec.Taints)

		fed := collect()
		require.False(t, fed.Status.Clusters[1].Stale)
		require.Equal(t, metav1.ConditionTrue, ready(fed.Status.Conditions).Status)
		require.Equal(t, int32(2), fed.Status.Aggregated.Clusters)
	})

	t.Run("Run notices a stop and a restart by itself", func(t *testing.T) {
		m, err := status.NewClusterMonitor(f.host, f.members, status.MonitorOptions{Period: 200 * time.Millisecond})
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Run(runCtx) }()
		defer func() {
			stop()
			require.NoError(t, <-done)
		}()
		offline := func() bool {
			return meta.IsStatusConditionTrue(f.cluster(ctx, t, member2).Status.Conditions, federation.ConditionOffline)
		}
		require.NoError(t, f.env.StopCluster(member2))
		fedtest.Eventually(t, "member2 Offline", offline)
		require.NoError(t, f.env.StartCluster(ctx, member2))
		fedtest.Eventually(t, "member2 back", func() bool { return !offline() })
		require.Equal(t, metav1.ConditionTrue, ready(f.cluster(ctx, t, member1).Status.Conditions).Status, "member1 was never touched")
	})
}

func requireQuantity(t *testing.T, want string, got resource.Quantity) {
	t.Helper()
	w := resource.MustParse(want)
	require.Zero(t, w.Cmp(got), "got %s, want %s", got.String(), want)
}

var (
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	policyGVR    = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	bindingGVR   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// TestReadyWaitsForAMemberThatRefusesTheUpdate: sync and the Collector run against real
// servers; one member refuses generation 2 (a ValidatingAdmissionPolicy denies its image), so
// it keeps running generation 1's revision, ready. Ready is never True for generation 2 while
// that lasts, so `kubectl wait --for=condition=Ready` keeps waiting; once the member accepts
// the update, Ready turns True for generation 2.
func TestReadyWaitsForAMemberThatRefusesTheUpdate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := testenv.Shared(t)
	host := env.Client(t, hostName)
	crds, err := federation.CRDs(federation.DeploymentType)
	require.NoError(t, err)
	require.NoError(t, conformance.InstallCRDs(ctx, host, crds...))
	const ns, system = "refuse", "fedkit-system"
	fedtest.Create(t, host, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: `+system+`}}`)
	fedtest.Create(t, host, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	members := map[string]*kube.Client{}
	// Clusters of their own names, so that the other tests' Clusters of the same members
	// are left alone.
	clusterOf := map[string]string{"refuse-1": member1, "refuse-2": member2}
	for name, m := range clusterOf {
		members[name] = env.Client(t, m)
		env.Register(t, host, name, m, system)
		testenv.MarkReady(t, host, name)
	}

	// refuse-2 denies the image of generation 2.
	refusing := members["refuse-2"]
	fedtest.Create(t, refusing, policyGVR, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: refuse-nginx-2}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations:
  - expression: "object.spec.template.spec.containers.all(c, c.image != 'nginx:2')"
    message: "nginx:2 is not allowed in this cluster"
`)
	fedtest.Create(t, refusing, bindingGVR, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: refuse-nginx-2}
spec:
  policyName: refuse-nginx-2
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
`)
	fedtest.Create(t, refusing, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	// The policy takes effect once the member's admission plugin has loaded it.
	probes := 0
	probe := func(image string) *unstructured.Unstructured {
		probes++
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: probe-`+fmt.Sprint(probes)+`, namespace: `+ns+`}
spec:
  selector: {matchLabels: {app: probe}}
  template:
    metadata: {labels: {app: probe}}
    spec: {containers: [{name: c, image: "`+image+`"}]}
`), &u.Object))
		return u
	}
	fedtest.Eventually(t, "the policy denies nginx:2", func() bool {
		p := probe("nginx:2")
		_, err := refusing.Create(ctx, depGVR, p)
		if err == nil {
			require.NoError(t, refusing.Delete(ctx, depGVR, ns, p.GetName(), metav1.DeleteOptions{}))
			return false
		}
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err)
	})

	log := testr.New(t)
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Namespace: system, Logger: log})
	require.NoError(t, err)
	syncer, err := fedsync.New(host, set, federation.DeploymentType, fedsync.Options{Namespace: ns, Logger: log})
	require.NoError(t, err)
	collector, err := status.New(host, set, federation.DeploymentType, status.Options{Namespace: ns, Logger: log, Period: time.Second})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	var dones []chan error
	for _, run := range []func(context.Context) error{set.Run, syncer.Run, collector.Run} {
		done := make(chan error, 1)
		dones = append(dones, done)
		go func() { done <- run(runCtx) }()
	}
	defer func() {
		stop()
		for _, done := range dones {
			require.NoError(t, <-done)
		}
	}()

	fedtest.Create(t, host, fedGVR, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: `+ns+`}
spec:
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1"}]}
  placement: {clusters: [{name: refuse-1}, {name: refuse-2}]}
`)
	fed := func() *federation.FederatedObject {
		u, err := host.Get(ctx, fedGVR, ns, "web")
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		return obj
	}
	// No controllers run here: rollOut writes what the member's Deployment controller would
	// once the rollout of the Deployment's current generation is done.
	rollOut := func(cluster string) bool {
		u, err := members[cluster].Get(ctx, depGVR, ns, "web")
		if apierrors.IsNotFound(err) {
			return false
		}
		require.NoError(t, err)
		if g, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); g == u.GetGeneration() {
			return true
		}
		u.Object["status"] = map[string]any{"observedGeneration": u.GetGeneration(), "replicas": int64(1), "updatedReplicas": int64(1),
			"readyReplicas": int64(1), "availableReplicas": int64(1)}
		_, err = members[cluster].UpdateStatus(ctx, depGVR, u)
		return err == nil
	}
	readyFor := func(gen int64) func() bool {
		return func() bool {
			for _, c := range []string{"refuse-1", "refuse-2"} {
				if !rollOut(c) {
					return false
				}
			}
			r := ready(fed().Status.Conditions)
			return r.Status == metav1.ConditionTrue && r.ObservedGeneration == gen
		}
	}
	fedtest.Eventually(t, "Ready for generation 1", readyFor(1))

	// Generation 2: refuse-1 takes it, refuse-2 refuses it.
	u, err := host.Get(ctx, fedGVR, ns, "web")
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:2"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "template", "spec", "containers"))
	_, err = host.Update(ctx, fedGVR, u)
	require.NoError(t, err)
	fedtest.Eventually(t, "sync reports the refusal for generation 2", func() bool {
		rollOut("refuse-1")
		obj := fed()
		for _, e := range obj.Status.Clusters {
			if e.Name == "refuse-2" && e.Propagation == plan.ReasonUpdateFailed {
				return obj.Status.ObservedGeneration == 2
			}
		}
		return false
	})
	// The Collector has passed over generation 2 (its condition says so); a few more of its
	// periods pass with both members ready, and Ready is never True for generation 2.
	deadline := time.Now().Add(5 * time.Second)
	seen := false
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for ; time.Now().Before(deadline); <-tick.C {
		rollOut("refuse-1")
		r := ready(fed().Status.Conditions)
		require.False(t, r.Status == metav1.ConditionTrue && r.ObservedGeneration == 2,
			"Ready=True for generation 2 while refuse-2 refuses it: %s", r.Message)
		if r.ObservedGeneration == 2 && r.Reason == status.ReasonNotPropagated {
			seen = true
		}
	}
	require.True(t, seen, "the Collector wrote Ready=False NotPropagated for generation 2")

	// The member lets the update in. Sync waits for a change after a refusal: a member
	// writer touching its copy is one (the policy takes effect asynchronously, so it is
	// touched again each second until the update goes through). Ready turns True for
	// generation 2.
	require.NoError(t, refusing.Delete(ctx, bindingGVR, "", "refuse-nginx-2", metav1.DeleteOptions{}))
	touched := time.Time{}
	fedtest.Eventually(t, "Ready for generation 2", func() bool {
		if time.Since(touched) > time.Second {
			touched = time.Now()
			if u, err := refusing.Get(ctx, depGVR, ns, "web"); err == nil {
				a := u.GetAnnotations()
				a["test.example.com/touched"] = touched.Format(time.RFC3339Nano)
				u.SetAnnotations(a)
				_, _ = refusing.Update(ctx, depGVR, u) // a Conflict is retried a second later
			}
		}
		return readyFor(2)()
	})
	require.NoError(t, refusing.Delete(ctx, policyGVR, "", "refuse-nginx-2", metav1.DeleteOptions{}))
}
