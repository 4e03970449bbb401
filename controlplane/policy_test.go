package controlplane_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// plainDeployment is a native default/<name> Deployment labelled tier: <tier>, with 2
// replicas, whose pod reads the ConfigMap config (a volume) and the Secret secret (envFrom).
func plainDeployment(name, tier, config, secret string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: default, labels: {tier: ` + tier + `}}
spec:
  replicas: 2
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      containers:
      - name: app
        image: "nginx:1.27"
        envFrom: [{secretRef: {name: ` + secret + `}}]
      volumes: [{name: config, configMap: {name: ` + config + `}}]
`
}

// clusterPolicy selects the default namespace's Deployments labelled tier: <tier>, with
// propagateDependencies, placed in clusters.
func clusterPolicy(name, tier string, clusters ...string) string {
	refs := make([]string, len(clusters))
	for i, c := range clusters {
		refs[i] = "{name: " + c + "}"
	}
	return `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: ` + name + `}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: default, labelSelector: {matchLabels: {tier: ` + tier + `}}}]
  placement: {clusters: [` + strings.Join(refs, ", ") + `]}
  propagateDependencies: true
`
}

// TestPolicyWithDependencies is issue 25's flow on the fake fleet: plain Deployments, a
// ConfigMap and Secrets on the host, ClusterPropagationPolicies with propagateDependencies.
// The Deployment runs where the policy places it, with its ConfigMap and Secret; a placement
// change of the policy moves all three; a second Deployment placed elsewhere by another
// policy widens the shared ConfigMap, and deleting it narrows it; the host Deployment's
// status shows the fleet's ready replicas.
func TestPolicyWithDependencies(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "eu"}, {Name: "us"}}, Workloads: fake.Workloads{Apps: true}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	o := e.options(federation.DeploymentType, federation.ConfigMapType, federation.SecretType, federation.ServiceAccountType, federation.PersistentVolumeClaimType)
	o.Dependencies.CacheSyncTimeout = 2 * time.Minute
	o.Propagation.CacheSyncTimeout = 2 * time.Minute
	o.Registerer = f.Registry
	o.Disable.DNS = true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	deployments := federation.DeploymentType.TargetGVR()

	fedtest.Create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "shared", "level", "info"))
	fedtest.Create(t, e.host, secretGVR, nativeDoc("Secret", "web-token", "token", "c2VjcmV0"))
	fedtest.Create(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("frontend", "web", "eu"))
	fedtest.Create(t, e.host, deployments, plainDeployment("web", "web", "shared", "web-token"))

	seen := func() string {
		return "deployment in " + e.where(deployments, "web") + ", configmap in " + e.where(configMapGVR, "shared") + ", secret in " + e.where(secretGVR, "web-token")
	}
	all := func(want string) func() bool {
		return func() bool {
			return e.where(deployments, "web") == want && e.where(configMapGVR, "shared") == want && e.where(secretGVR, "web-token") == want
		}
	}
	stepUntilf(t, e.clock, time.Second, func() string { return "the Deployment with its ConfigMap and Secret in eu: " + seen() }, all("eu"))
	stepUntil(t, e.clock, time.Second, "DependenciesResolved True on the generated FederatedDeployment", func() bool {
		return e.condition(federation.DeploymentType.FederatedGVR(), "web", federation.ConditionDependenciesResolved) == "True"
	})

	// The host Deployment's status shows the fleet's ready replicas.
	readyOnHost := func(name string) int64 {
		u, err := e.host.Peek(deployments, "default", name)
		if err != nil {
			return -1
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		return n
	}
	stepUntilf(t, e.clock, time.Second, func() string {
		return "the host Deployment shows 2 ready replicas, not " + strconv.FormatInt(readyOnHost("web"), 10)
	}, func() bool { return readyOnHost("web") == 2 })

	// A placement change of the policy moves all three.
	fedtest.Apply(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("frontend", "web", "us"))
	stepUntilf(t, e.clock, time.Second, func() string { return "all three moved to us: " + seen() }, all("us"))

	// A second Deployment sharing the ConfigMap, placed in eu by another policy, widens it.
	fedtest.Create(t, e.host, secretGVR, nativeDoc("Secret", "api-token", "token", "YXBp"))
	fedtest.Create(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("backend", "api", "eu"))
	fedtest.Create(t, e.host, deployments, plainDeployment("api", "api", "shared", "api-token"))
	stepUntilf(t, e.clock, time.Second, func() string {
		return "the ConfigMap widened to eu,us: " + seen() + ", api in " + e.where(deployments, "api") + ", api-token in " + e.where(secretGVR, "api-token")
	}, func() bool {
		return e.where(configMapGVR, "shared") == "eu,us" && e.where(deployments, "api") == "eu" && e.where(secretGVR, "api-token") == "eu" && e.where(secretGVR, "web-token") == "us"
	})
	stepUntil(t, e.clock, time.Second, "the host api Deployment shows 2 ready replicas", func() bool { return readyOnHost("api") == 2 })
	// From here on the ConfigMap's placement changes once: to us, when api is gone. A pass
	// that saw api's schedule vanish for a moment (a status write in flight) narrowed it
	// early, and one that still saw api while it went widened it back: a flap.
	placements := e.placements(t, federation.ConfigMapType.FederatedGVR(), "shared")

	// Deleting the second Deployment narrows the ConfigMap again.
	require.NoError(t, e.host.Delete(ctx, deployments, "default", "api", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string {
		return "the ConfigMap narrowed to us: " + seen() + ", api in " + e.where(deployments, "api") + ", api-token in " + e.where(secretGVR, "api-token")
	}, func() bool {
		_, err := e.host.Peek(federation.SecretType.FederatedGVR(), "default", "api-token")
		return e.where(configMapGVR, "shared") == "us" && e.where(deployments, "api") == "" && e.where(secretGVR, "api-token") == "" && err != nil
	})
	require.True(t, all("us")(), seen())
	if diff := cmp.Diff([]string{"eu,us", "us"}, placements()); diff != "" {
		t.Errorf("the FederatedConfigMap's placements after it widened (-want +got):\n%s", diff)
	}
}

// placements records the spec.placement.clusters of the federated object default/name on the
// host now, and of every later update that changes them; the returned func stops and returns
// them, each comma separated.
func (e *env) placements(t testing.TB, gvr schema.GroupVersionResource, name string) func() []string {
	t.Helper()
	var (
		mu  sync.Mutex
		out []string
	)
	clusters := func(u *unstructured.Unstructured) string {
		refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "placement", "clusters")
		names := make([]string, 0, len(refs))
		for _, r := range refs {
			m, _ := r.(map[string]any)
			n, _ := m["name"].(string)
			names = append(names, n)
		}
		return strings.Join(names, ",")
	}
	u, err := e.host.Peek(gvr, "default", name)
	require.NoError(t, err)
	last := clusters(u)
	out = append(out, last)
	e.host.SetHooks(fake.Hooks{Update: func(ctx context.Context, next federation.ClusterClient, g schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		got, err := next.Update(ctx, g, obj)
		if err == nil && g == gvr && got.GetNamespace() == "default" && got.GetName() == name {
			mu.Lock()
			if c := clusters(got); c != last {
				out, last = append(out, c), c
			}
			mu.Unlock()
		}
		return got, err
	}})
	stopped := false
	stop := func() []string {
		if !stopped {
			stopped = true
			e.host.SetHooks(fake.Hooks{})
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out)
	}
	t.Cleanup(func() { stop() })
	return stop
}
