package status_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
)

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
			if e.Name == "refuse-2" && e.Propagation == fedsync.ReasonUpdateFailed {
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
