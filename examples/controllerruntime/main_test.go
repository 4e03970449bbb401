package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

var (
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	leases      = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// TestManagerRunsTheLoops starts a host and a member API server, runs the manager of this
// example against the host as `go run .` would, and follows a FederatedDeployment through
// the loops: the manager takes the Lease, the cluster monitor marks the member Ready, the
// scheduler writes the schedule, sync creates the Deployment in the member. Then the manager
// stops when its context ends.
func TestManagerRunsTheLoops(t *testing.T) {
	cfgs := startAPIServers(t, "host", "member")
	host, err := kube.New(cfgs["host"], kube.Options{})
	must(t, err)
	member, err := kube.New(cfgs["member"], kube.Options{})
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	installCRDs(ctx, t, host)
	m := cfgs["member"]
	apply(ctx, t, host, fleetManifests(m))

	logs := &lockedBuffer{}
	log := logr.FromSlogHandler(slog.NewTextHandler(logs, nil))
	ctrl.SetLogger(log) // controller-runtime's own packages log through the global one
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager logs:\n%s", logs.String())
		}
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, cfgs["host"], config{
			Namespace: "fedkit-system", LeaderElection: true, MetricsAddr: "0", ProbeAddr: "0",
			Registerer: prometheus.NewRegistry(), Logger: log,
		})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager stopped with %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the manager did not stop a minute after its context ended")
		}
	})

	eventually(ctx, t, "sync creates the Deployment in the member with the scheduled replicas", func() error {
		u, err := member.Get(ctx, deployments, "shop", "web")
		if err != nil {
			return err
		}
		if n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); n != 3 {
			return fmt.Errorf("spec.replicas is %d", n)
		}
		return nil
	})
	eventually(ctx, t, "the scheduler writes the schedule", func() error {
		u, err := host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
		if err != nil {
			return err
		}
		obj, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			return err
		}
		if got := obj.Status.Schedule.Replicas(); got["member"] != 3 || len(got) != 1 {
			return fmt.Errorf("schedule %v", got)
		}
		return nil
	})
	lease, err := host.Get(ctx, leases, "fedkit-system", "fedkit-controlplane")
	must(t, err)
	if holder, _, _ := unstructured.NestedString(lease.Object, "spec", "holderIdentity"); holder == "" {
		t.Errorf("the Lease has no holder: %v", lease.Object["spec"])
	}
}

// fleetManifests are the host objects of the tests: the member's Cluster and Secret, and a
// FederatedDeployment placed on it.
func fleetManifests(m *rest.Config) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: fedkit-system}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Secret
metadata: {name: member, namespace: fedkit-system, labels: {federation.k8s.io/cluster: member}}
data: {token: %s}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: member}
spec: {apiEndpoint: %q, caBundle: %s, secretRef: {name: member}}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusters: [{name: member}]}
`, base64.StdEncoding.EncodeToString([]byte(m.BearerToken)), m.Host, base64.StdEncoding.EncodeToString(m.CAData))
}

// installCRDs creates fedkit's CRDs on the host and waits until each is Established.
func installCRDs(ctx context.Context, t *testing.T, host *kube.Client) {
	t.Helper()
	defs, err := federation.CRDs(federation.BuiltinTypes()...)
	must(t, err)
	for _, crd := range defs {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		must(t, err)
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if _, err := host.Create(ctx, crds, u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		eventually(ctx, t, crd.Name+" is Established", func() error {
			got, err := host.Get(ctx, crds, "", crd.Name)
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("conditions %v", conds)
		})
	}
}

// apply creates each document of a YAML stream; the API server chooses nothing: the resource
// is looked up by kind on the host.
func apply(ctx context.Context, t *testing.T, c *kube.Client, manifests string) {
	t.Helper()
	for _, doc := range bytes.Split([]byte(manifests), []byte("\n---\n")) {
		u := &unstructured.Unstructured{}
		must(t, yaml.Unmarshal(doc, &u.Object))
		m, err := c.RESTMapping(u.GroupVersionKind())
		must(t, err)
		if _, err := c.Create(ctx, m.Resource, u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// eventually polls check every 250ms until it returns nil, failing the test when ctx ends.
func eventually(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %v)", what, err, last)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer is a bytes.Buffer safe for the manager's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestOwnQueueCorrectsMemberDrift runs the manager with sync driven from a controller-runtime
// controller (ownqueue.go) instead of Syncer.Run: the Deployment reaches the member, and when
// someone changes it in the member, the member trigger (fedsync's WatchMembers) requeues the
// FederatedDeployment and sync puts it back within a minute, long before any resync (sync's
// is ten minutes, controller-runtime's ten hours). The status collector is left out: its
// status writes would requeue the object too, hiding whether the member trigger works.
func TestOwnQueueCorrectsMemberDrift(t *testing.T) {
	cfgs := startAPIServers(t, "host", "member")
	host, err := kube.New(cfgs["host"], kube.Options{})
	must(t, err)
	member, err := kube.New(cfgs["member"], kube.Options{})
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	installCRDs(ctx, t, host)
	apply(ctx, t, host, fleetManifests(cfgs["member"]))

	logs := &lockedBuffer{}
	log := logr.FromSlogHandler(slog.NewTextHandler(logs, nil))
	ctrl.SetLogger(log)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager logs:\n%s", logs.String())
		}
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, cfgs["host"], config{
			Namespace: "fedkit-system", MetricsAddr: "0", ProbeAddr: "0", OwnQueue: true, NoCollector: true,
			Registerer: prometheus.NewRegistry(), Logger: log,
		})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager stopped with %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the manager did not stop a minute after its context ended")
		}
	})

	image := func(want string) func() error {
		return func() error {
			u, err := member.Get(ctx, deployments, "shop", "web")
			if err != nil {
				return err
			}
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if len(cs) == 0 {
				return fmt.Errorf("no containers")
			}
			if got := cs[0].(map[string]any)["image"]; got != want {
				return fmt.Errorf("image %v", got)
			}
			return nil
		}
	}
	eventually(ctx, t, "sync creates the Deployment in the member", image("nginx:1.27"))

	u, err := member.Get(ctx, deployments, "shop", "web")
	must(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:drifted"
	must(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	_, err = member.Update(ctx, deployments, u)
	must(t, err)
	driftCtx, driftCancel := context.WithTimeout(ctx, time.Minute)
	defer driftCancel()
	eventually(driftCtx, t, "sync corrects the drift in the member", image("nginx:1.27"))
}
