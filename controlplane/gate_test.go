package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestEveryDeleteGoesThroughTheGate runs a whole control plane over a story that deletes from
// every loop (propagation's generated objects when a policy goes, dependencies' generated
// objects, sync's member copies when a workload moves and when it is deleted) and fails on
// any delete of a host or member object that was not sent by the gate.
func TestEveryDeleteGoesThroughTheGate(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "eu"}, {Name: "us"}}, Workloads: fake.Workloads{Apps: true}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	guard := fedtest.NewDeleteGuard()
	guard.Watch(e.host, "")
	for _, c := range []string{"eu", "us"} {
		guard.Watch(f.Member(t, c), c)
	}
	startWebAndAPI(t, e)
	user := fedtest.AsUser(context.Background())
	deployments := federation.DeploymentType.TargetGVR()

	in := func(gvr schema.GroupVersionResource, name string) string {
		var out []string
		for _, c := range []string{"eu", "us"} {
			if _, err := f.Member(t, c).Peek(gvr, "default", name); err == nil {
				out = append(out, c)
			}
		}
		return name + " " + strings.Join(out, ",")
	}
	seen := func() string {
		return strings.Join([]string{in(deployments, "web"), in(deployments, "api"), in(configMapGVR, "shared"), in(secretGVR, "api-token")}, "; ")
	}
	settled := func(want string) func() bool { return func() bool { return seen() == want } }
	stepUntilf(t, e.clock, time.Second, func() string { return "both workloads placed: " + seen() },
		settled("web eu,us; api us; shared eu,us; api-token us"))

	// The policy of web goes: propagation deletes its generated FederatedDeployment.
	require.NoError(t, e.host.Delete(user, federation.ClusterPropagationPolicyGVR, "", "frontend", metav1.DeleteOptions{}))
	stepUntil(t, e.clock, time.Second, "web's FederatedDeployment deleted", func() bool {
		_, err := e.host.Peek(federation.DeploymentType.FederatedGVR(), "default", "web")
		return err != nil
	})
	// api moves to eu: sync deletes its copy in us once eu's runs; its Secret leaves us.
	fedtest.Apply(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("backend", "api", "eu"))
	stepUntilf(t, e.clock, time.Second, func() string { return "api moved to eu: " + seen() }, func() bool {
		return strings.HasPrefix(seen(), "web eu,us; api eu; ") && strings.HasSuffix(seen(), "api-token eu")
	})
	// api is deleted: its copy goes, and dependencies delete its generated Secret.
	require.NoError(t, e.host.Delete(user, deployments, "default", "api", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string { return "api deleted: " + seen() }, func() bool {
		_, err := e.host.Peek(federation.SecretType.FederatedGVR(), "default", "api-token")
		return strings.Contains(seen(), "api ;") && strings.HasSuffix(seen(), "api-token ") && err != nil
	})

	guard.Check(t, "github.com/fedkit/fedkit/dependencies", "github.com/fedkit/fedkit/propagation", "github.com/fedkit/fedkit/sync")
}

// TestShardLeasesAreDeletedThroughTheGate: a replica that lets its shards go deletes its
// presence Lease (Lease.ReleaseOnCancel); that delete, too, goes through the gate.
func TestShardLeasesAreDeletedThroughTheGate(t *testing.T) {
	e := newEnv(t)
	guard := fedtest.NewDeleteGuard()
	guard.Watch(e.host, "")
	l := fastLease()
	l.ReleaseOnCancel = true
	r := e.replica(t, newJournal(), "a", func(o *controlplane.Options) { o.Sharding = &controlplane.Sharding{Count: 2, Lease: l} })
	r.start(t)
	realEventually(t, "both shards held", func() bool { return len(r.shards()) == 2 })
	require.NoError(t, r.stop())

	guard.Check(t, "github.com/fedkit/fedkit/controlplane")
}
