package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestOrphanedWorkloadKeepsItsDependencies: deleting a policy orphans its workload's member
// copies, and their dependencies with them, in the same clusters: the orphaned pods keep
// their ConfigMap and Secret. Two workloads share the ConfigMap. web (eu, us) is orphaned;
// api (us) then moves to eu: the ConfigMap leaves us, where web's orphaned copy still runs,
// so it is released there, not deleted; api's own Secret, which nothing orphaned uses, is
// deleted from us as ever. Then api's native Deployment is deleted, an explicit removal: its
// Secret goes from eu, and the shared ConfigMap, which web's orphaned copy in eu still uses,
// is released there.
func TestOrphanedWorkloadKeepsItsDependencies(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "eu"}, {Name: "us"}}, Workloads: fake.Workloads{Apps: true}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	startWebAndAPI(t, e)
	ctx := context.Background()
	deployments := federation.DeploymentType.TargetGVR()

	// managed lists, per object, the clusters holding it and whether the federation manages
	// it there: "web eu(managed),us(managed)".
	managed := func(gvr schema.GroupVersionResource, name string) string {
		var out []string
		for _, c := range []string{"eu", "us"} {
			m, _ := e.fleet.Member(c)
			u, err := m.Peek(gvr, "default", name)
			switch {
			case err != nil:
			case u.GetLabels()[federation.ManagedByLabel] != "":
				out = append(out, c+"(managed)")
			default:
				out = append(out, c+"(released)")
			}
		}
		return name + " " + strings.Join(out, ",")
	}
	seen := func() string {
		return strings.Join([]string{managed(deployments, "web"), managed(deployments, "api"), managed(configMapGVR, "shared"),
			managed(secretGVR, "web-token"), managed(secretGVR, "api-token")}, "; ")
	}
	settled := func(want string) func() bool { return func() bool { return seen() == want } }

	stepUntilf(t, e.clock, time.Second, func() string { return "both workloads with their dependencies: " + seen() }, settled(
		"web eu(managed),us(managed); api us(managed); shared eu(managed),us(managed); web-token eu(managed),us(managed); api-token us(managed)"))

	// The policy goes: web's copies are orphaned, and so are its dependencies where nothing
	// else needs them. The ConfigMap stays managed in us, where api needs it.
	require.NoError(t, e.host.Delete(ctx, federation.ClusterPropagationPolicyGVR, "", "frontend", metav1.DeleteOptions{}))
	orphaned := "web eu(released),us(released); api us(managed); shared eu(released),us(managed); web-token eu(released),us(released); api-token us(managed)"
	stepUntilf(t, e.clock, time.Second, func() string { return "web orphaned with its dependencies: " + seen() }, func() bool {
		_, err := e.host.Peek(federation.DeploymentType.FederatedGVR(), "default", "web")
		return err != nil && seen() == orphaned
	})
	hold(t, e, time.Second, 10, func() string { return "web's dependencies stay with its orphaned copies: " + seen() }, settled(orphaned))

	// api moves to eu: the ConfigMap leaves us, where web's orphaned copy uses it: released.
	fedtest.Apply(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("backend", "api", "eu"))
	moved := "web eu(released),us(released); api eu(managed); shared eu(managed),us(released); web-token eu(released),us(released); api-token eu(managed)"
	stepUntilf(t, e.clock, time.Second, func() string { return "api moved to eu, the ConfigMap released in us: " + seen() }, settled(moved))
	hold(t, e, time.Second, 10, func() string { return "nothing web's orphaned copies use goes: " + seen() }, settled(moved))

	// api's native Deployment is deleted: its copy and its Secret go. The ConfigMap in eu,
	// which web's orphaned copy there uses, is released.
	require.NoError(t, e.host.Delete(ctx, deployments, "default", "api", metav1.DeleteOptions{}))
	gone := "web eu(released),us(released); api ; shared eu(released),us(released); web-token eu(released),us(released); api-token "
	stepUntilf(t, e.clock, time.Second, func() string { return "api deleted with its Secret, the ConfigMap released: " + seen() }, settled(gone))
	hold(t, e, time.Second, 10, func() string { return "what web's orphaned copies use stays: " + seen() }, settled(gone))

	// The released ConfigMap keeps the host's data as it was.
	eu, _ := e.fleet.Member("eu")
	cm, err := eu.Peek(configMapGVR, "default", "shared")
	require.NoError(t, err)
	v, _, _ := unstructured.NestedString(cm.Object, "data", "level")
	require.Equal(t, "info", v)
}

// startWebAndAPI runs a control plane for Deployments and their dependencies on e (no DNS)
// until the test ends, and creates the story of two workloads: web (policy frontend: eu,
// us) and api (policy backend: us), sharing the ConfigMap shared, each with its Secret.
func startWebAndAPI(t *testing.T, e *env) {
	t.Helper()
	o := e.options(federation.DeploymentType, federation.ConfigMapType, federation.SecretType, federation.ServiceAccountType, federation.PersistentVolumeClaimType)
	o.Dependencies.CacheSyncTimeout = 2 * time.Minute
	o.Propagation.CacheSyncTimeout = 2 * time.Minute
	o.Disable.DNS = true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	t.Cleanup(func() { require.NoError(t, stop()) })
	deployments := federation.DeploymentType.TargetGVR()
	fedtest.Create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "shared", "level", "info"))
	fedtest.Create(t, e.host, secretGVR, nativeDoc("Secret", "web-token", "token", "d2Vi"))
	fedtest.Create(t, e.host, secretGVR, nativeDoc("Secret", "api-token", "token", "YXBp"))
	fedtest.Create(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("frontend", "web", "eu", "us"))
	fedtest.Create(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("backend", "api", "us"))
	fedtest.Create(t, e.host, deployments, plainDeployment("web", "web", "shared", "web-token"))
	fedtest.Create(t, e.host, deployments, plainDeployment("api", "api", "shared", "api-token"))
}
