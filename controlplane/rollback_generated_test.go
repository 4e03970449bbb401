package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestAutoRollbackOfAGeneratedObjectLasts: a policy generates FederatedDeployment web from the
// native Deployment, with a staged rollout (canary eu) and autoRollback. A new image that
// never becomes ready fails in eu and is rolled back for good: the native Deployment's
// template is the old one again (the propagation loop wrote it there; sync writes no native
// object), every member runs the old image, RolledBack is True, and once settled no loop
// writes web anywhere: no flapping between the rollback and the failed revision.
func TestAutoRollbackOfAGeneratedObjectLasts(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "eu"}, {Name: "us"}},
		Workloads: fake.Workloads{Apps: true, FailingImages: []string{"nginx:broken"}}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	o := e.options(federation.DeploymentType)
	o.Propagation.CacheSyncTimeout = 2 * time.Minute
	o.Disable.DNS = true
	o.Disable.Dependencies = true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	deployments := federation.DeploymentType.TargetGVR()

	fedtest.Create(t, e.host, federation.ClusterPropagationPolicyGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: default, name: web}]
  placement: {clusters: [{name: eu}, {name: us}]}
  rollout:
    autoRollback: true
    stages: [{name: canary, clusters: [eu], progressDeadlineSeconds: 60}]
`)
	fedtest.Create(t, e.host, deployments, plainDeployment("web", "web", "cfg", "token"))

	imageOf := func(u *unstructured.Unstructured) string {
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		if len(cs) == 0 {
			return "-"
		}
		img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
		return img
	}
	// seen: the native Deployment's image, each member's, and the generated object's
	// RolledBack condition and rollout phase.
	seen := func() string {
		native := "-"
		if u, err := e.host.Peek(deployments, "default", "web"); err == nil {
			native = imageOf(u)
		}
		out := []string{"native " + native}
		for _, c := range []string{"eu", "us"} {
			m, _ := e.fleet.Member(c)
			img := "-"
			if u, err := m.Peek(deployments, "default", "web"); err == nil {
				img = imageOf(u)
			}
			out = append(out, c+" "+img)
		}
		rolledBack, phase := "-", "-"
		if u, err := e.host.Peek(federation.DeploymentType.FederatedGVR(), "default", "web"); err == nil {
			obj, err := federation.FederatedObjectFromUnstructured(u)
			require.NoError(t, err)
			if c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionRolledBack); c != nil {
				rolledBack = string(c.Status)
			}
			if obj.Status.Rollout != nil {
				phase = obj.Status.Rollout.Phase
			}
		}
		return strings.Join(out, ", ") + fmt.Sprintf(", RolledBack %s, rollout %s", rolledBack, phase)
	}
	stepUntilf(t, e.clock, time.Second, func() string { return "nginx:1.27 everywhere: " + seen() }, func() bool {
		return seen() == "native nginx:1.27, eu nginx:1.27, us nginx:1.27, RolledBack -, rollout "+federation.RolloutComplete
	})

	// The user's new image fails in the canary stage; autoRollback restores the old one.
	native, err := e.host.Get(ctx, deployments, "default", "web")
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(native.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:broken"
	require.NoError(t, unstructured.SetNestedSlice(native.Object, cs, "spec", "template", "spec", "containers"))
	_, err = e.host.Update(ctx, deployments, native)
	require.NoError(t, err)
	stepUntilf(t, e.clock, time.Second, func() string { return "the canary runs the new image: " + seen() }, func() bool {
		return strings.Contains(seen(), "eu nginx:broken")
	})
	rolledBack := "native nginx:1.27, eu nginx:1.27, us nginx:1.27, RolledBack True, rollout " + federation.RolloutComplete
	stepUntilf(t, e.clock, 5*time.Second, func() string { return "rolled back for good: " + seen() }, func() bool { return seen() == rolledBack })

	// Settled: nothing writes web any more, on the host or in a member.
	writes := func() []string {
		var out []string
		for _, c := range []*fake.Cluster{e.host, member(e, "eu"), member(e, "us")} {
			for _, a := range c.Actions() {
				switch a.Verb {
				case fake.VerbCreate, fake.VerbUpdate, fake.VerbUpdateStatus, fake.VerbPatch, fake.VerbDelete:
					if a.Name == "web" || a.Resource.Resource == "controllerrevisions" {
						out = append(out, a.String())
					}
				}
			}
		}
		return out
	}
	hold(t, e, 5*time.Second, 6, func() string { return "settled: " + seen() }, func() bool { return seen() == rolledBack })
	for _, c := range []*fake.Cluster{e.host, member(e, "eu"), member(e, "us")} {
		c.ClearActions()
	}
	hold(t, e, 5*time.Second, 24, func() string { return "rolled back for good: " + seen() }, func() bool { return seen() == rolledBack })
	require.Empty(t, writes(), "writes of web after the rollback settled")
}

func member(e *env, name string) *fake.Cluster {
	m, _ := e.fleet.Member(name)
	return m
}
