package rbac_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

var (
	t0           = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	fedDeploy    = federation.DeploymentType.FederatedGVR()
	revisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
)

// syncTimeout is every loop's CacheSyncTimeout: it runs on the fake clock, which the tests
// step while the informers list in real time, so it outlasts every step a test makes.
const syncTimeout = time.Hour

// env is a fake host serving fedkit's CRDs and the DNS ones, and two members (eu, us) whose
// simulated controllers make Deployments ready and give LoadBalancer Services an address,
// on one fake clock.
type env struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	clock *clocktesting.FakeClock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	f := fedtest.New(t, fedtest.Options{Now: t0, Workloads: fake.Workloads{Apps: true, LoadBalancers: true}, Members: []fedtest.Member{
		{Name: "eu", Labels: map[string]string{federation.RegionLabel: "europe-west1"}},
		{Name: "us", Labels: map[string]string{federation.RegionLabel: "us-east1"}},
	}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	ctx := context.Background()
	crds, err := dnsrecord.CRDs()
	require.NoError(t, err)
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		_, err = e.host.Create(ctx, crdGVR, &unstructured.Unstructured{Object: m})
		require.NoError(t, err)
	}
	require.NoError(t, e.host.Apply(`{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`))
	e.host.ClearActions()
	return e
}

// scenario is what every loop gets to do: a FederatedDeployment with a
// ReplicaSchedulingPreference is scheduled, propagated and becomes Ready; a FederatedService
// with a ServiceDNSRecord gets its DNSEndpoint; a member stops answering and is tainted, comes
// back and is untainted; the FederatedDeployment is deleted and its finalizer removed. done
// tells whether a step has happened as the loops see it (through their recorders).
func (e *env) scenario(t *testing.T, done func(verb string, gvr schema.GroupVersionResource, sub string) bool) {
	t.Helper()
	require.NoError(t, e.host.Apply(`
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: Domain
metadata: {name: fed, namespace: fedkit-system}
domain: example.com
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: default}
data: {level: info}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  propagateDependencies: true
  template:
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27", envFrom: [{configMapRef: {name: web-config}}]}]}
  placement: {clusterSelector: {}}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 3
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedService
metadata: {name: web, namespace: default}
spec: {template: {spec: {type: LoadBalancer, ports: [{port: 80}]}}, placement: {clusterSelector: {}}}
---
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: ServiceDNSRecord
metadata: {name: web, namespace: default}
spec: {domainRef: fed, allowServiceWithoutEndpoints: true}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: api}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  placement: {clusterSelector: {}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "api:1"}]}
`))
	e.stepUntil(t, "web Scheduled, Propagated and Ready", func() bool {
		return condition(e.host, "Scheduled") && condition(e.host, "Propagated") && condition(e.host, "Ready")
	})
	e.stepUntil(t, "the native Deployment api federated and its status the fleet's", func() bool {
		u, err := e.host.Peek(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "default", "api")
		if err != nil {
			return false
		}
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		return ready == 2
	})
	e.stepUntil(t, "a DNSEndpoint for web", func() bool {
		return done("create", dnsrecord.DNSEndpointGVR, "")
	})
	e.stepUntil(t, "the policy api's status written", func() bool {
		u, err := e.host.Peek(federation.ClusterPropagationPolicyGVR, "", "api")
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return len(conds) > 0
	})

	require.NoError(t, e.fleet.Partition("eu"))
	e.stepUntil(t, "eu tainted not-ready", func() bool { return tainted(e.host, "eu") })
	require.NoError(t, e.fleet.Heal("eu"))
	e.stepUntil(t, "eu untainted", func() bool { return !tainted(e.host, "eu") })

	require.NoError(t, e.host.Delete(context.Background(), fedDeploy, "default", "web", metav1.DeleteOptions{}))
	e.stepUntil(t, "web deleted (its finalizer removed)", func() bool {
		_, err := e.host.Peek(fedDeploy, "default", "web")
		return apierrors.IsNotFound(err)
	})
}

// stepUntil steps the fake clock a second at a time until cond holds, at most 600 steps.
func (e *env) stepUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	fedtest.StepUntil(t, e.clock.Step, time.Second, 600, func() string { return what }, cond)
}

func condition(host *fake.Cluster, typ string) bool {
	u, err := host.Peek(fedDeploy, "default", "web")
	if err != nil {
		return false
	}
	obj, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return false
	}
	for _, c := range obj.Status.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.Generation
		}
	}
	return false
}

func tainted(host *fake.Cluster, name string) bool {
	u, err := host.Peek(federation.ClusterGVR, "", name)
	if err != nil {
		return false
	}
	c, err := federation.ClusterFromUnstructured(u)
	if err != nil {
		return false
	}
	for _, t := range c.Spec.Taints {
		if t.Key == federation.TaintClusterNotReady {
			return true
		}
	}
	return false
}

// runAll runs fns until ctx is done and returns a func that cancels them and returns their
// errors, joined.
func runAll(fns ...func(context.Context) error) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn(ctx) })
	}
	return func() error {
		cancel()
		wg.Wait()
		return errors.Join(errs...)
	}
}

// checkGranted fails the test for every request of rec that r does not grant.
func checkGranted(t *testing.T, m manifests, who string, r roles, rec *recorder) {
	t.Helper()
	for _, req := range rec.requests() {
		t.Logf("%s: %s", who, req)
		if !m.allows(r, req) {
			t.Errorf("%s needs %s, which its roles (ClusterRoles %v, Roles in %s %v) do not grant", who, req, r.cluster, Namespace, r.namespaced)
		}
	}
}

// TestEachLoopNeedsOnlyItsRoles runs every loop on its own recorder over one fake host, for
// every built-in type, through the scenario, and checks each request against that loop's
// roles in config/rbac.
func TestEachLoopNeedsOnlyItsRoles(t *testing.T) {
	m := loadManifests(t)
	e := newEnv(t)
	recs := map[string]*recorder{}
	for _, name := range []string{"scheduler", "sync", "status-collector", "cluster-monitor", "dns", "cluster-set", "dependencies", "propagation"} {
		recs[name] = record(e.host)
	}
	var runs []func(context.Context) error
	for _, typ := range federation.BuiltinTypes() {
		s, err := scheduler.New(recs["scheduler"], typ, scheduler.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout})
		require.NoError(t, err)
		y, err := fedsync.New(recs["sync"], e.fleet, typ, fedsync.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout, WaitForScheduler: true})
		require.NoError(t, err)
		c, err := status.New(recs["status-collector"], e.fleet, typ, status.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout})
		require.NoError(t, err)
		runs = append(runs, s.Run, y.Run, c.Run)
	}
	mon, err := status.NewClusterMonitor(recs["cluster-monitor"], e.fleet, status.MonitorOptions{Clock: e.clock, CacheSyncTimeout: syncTimeout})
	require.NoError(t, err)
	dns, err := dnsrecord.New(recs["dns"], e.fleet, dnsrecord.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout})
	require.NoError(t, err)
	deps, err := dependencies.New(recs["dependencies"], federation.BuiltinTypes(), dependencies.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout})
	require.NoError(t, err)
	runs = append(runs, deps.Run)
	prop, err := propagation.New(recs["propagation"], propagation.DefaultTypes(federation.BuiltinTypes()), propagation.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout})
	require.NoError(t, err)
	policies, err := propagation.NewPolicyMonitor(recs["propagation"], propagation.DefaultTypes(federation.BuiltinTypes()), propagation.Options{Clock: e.clock, CacheSyncTimeout: syncTimeout})
	require.NoError(t, err)
	runs = append(runs, prop.Run, policies.Run)
	// The kube.ClusterSet reads Clusters and their Secrets; its member clients are never used
	// here (the loops use the fleet), and connect lazily.
	set, err := kube.NewClusterSet(recs["cluster-set"], kube.ClusterSetOptions{})
	require.NoError(t, err)
	stop := runAll(append(runs, mon.Run, dns.Run, set.Run, e.fleet.Run)...)
	e.scenario(t, recs["dns"].saw)
	require.NoError(t, stop())

	loopRoles := map[string]roles{
		// The loops of FederatedSecrets (run here, as every built-in type is) and the
		// dependencies loop's Secrets need fedkit-secrets besides their own roles.
		"scheduler":        {cluster: []string{"fedkit-scheduler", "fedkit-secrets"}},
		"sync":             {cluster: []string{"fedkit-sync", "fedkit-secrets"}},
		"status-collector": {cluster: []string{"fedkit-status-collector", "fedkit-secrets"}},
		"cluster-monitor":  {cluster: []string{"fedkit-cluster-monitor"}},
		"dns":              {cluster: []string{"fedkit-dns"}},
		"cluster-set":      {cluster: []string{"fedkit-cluster-set"}, namespaced: []string{"fedkit-cluster-set"}},
		"dependencies":     {cluster: []string{"fedkit-dependencies", "fedkit-secrets"}},
		"propagation":      {cluster: []string{"fedkit-propagation"}},
	}
	// What the scenario must have made each loop do, so that the check above cannot pass
	// because a loop did nothing.
	writes := map[string]request{
		"scheduler":        {Verb: "update", Group: fedDeploy.Group, Resource: fedDeploy.Resource, Subresource: "status"},
		"sync":             {Verb: "create", Group: revisionsGVR.Group, Resource: revisionsGVR.Resource},
		"status-collector": {Verb: "update", Group: fedDeploy.Group, Resource: fedDeploy.Resource, Subresource: "status"},
		"cluster-monitor":  {Verb: "update", Group: federation.ClusterGVR.Group, Resource: federation.ClusterGVR.Resource},
		"dns":              {Verb: "create", Group: dnsrecord.DNSEndpointGVR.Group, Resource: dnsrecord.DNSEndpointGVR.Resource},
		"cluster-set":      {Verb: "watch", Resource: "secrets"},
		"dependencies":     {Verb: "create", Group: federation.ConfigMapType.FederatedGVR().Group, Resource: federation.ConfigMapType.FederatedGVR().Resource},
		"propagation":      {Verb: "update", Group: "apps", Resource: "deployments", Subresource: "status"},
	}
	// In the members, every loop uses the credentials of the member's Secret: all of them
	// together need only the member role, and the member Secrets role for Secrets.
	member, secrets := memberRole(t), memberSecretsRole(t)
	for _, name := range e.fleet.Names() {
		c, _ := e.fleet.Member(name)
		var creates bool
		seen := map[request]bool{}
		for _, a := range c.Actions() {
			req := memberRequest(a)
			creates = creates || req.Verb == "create"
			if seen[req] {
				continue
			}
			seen[req] = true
			if !rulesAllow(member.Rules, req) && (req.Resource != "secrets" || !rulesAllow(secrets.Rules, req)) {
				t.Errorf("the loops need %s in member %s, which ClusterRole %s does not grant", req, name, member.Name)
			}
		}
		require.True(t, creates, "nothing created in member %s", name)
	}
	for name, rec := range recs {
		w := writes[name]
		require.True(t, rec.saw(w.Verb, schema.GroupVersionResource{Group: w.Group, Resource: w.Resource}, w.Subresource), "%s never made %s", name, w)
		checkGranted(t, m, name, loopRoles[name], rec)
	}
}

// TestControlPlaneNeedsOnlyItsRoles runs the whole control plane (every built-in type, the DNS
// loop, events on the host, sharding on Leases) through the scenario on one recorder, and
// checks each request against everything config/rbac binds to its ServiceAccount.
func TestControlPlaneNeedsOnlyItsRoles(t *testing.T) {
	m := loadManifests(t)
	e := newEnv(t)
	rec := record(e.host)
	opts := controlplane.Options{
		Clock:       e.clock,
		Sharding:    &controlplane.Sharding{Count: 2},
		TypeConfigs: true,
	}
	opts.Scheduler.CacheSyncTimeout = syncTimeout
	opts.Sync.CacheSyncTimeout = syncTimeout
	opts.Status.CacheSyncTimeout = syncTimeout
	opts.Monitor.CacheSyncTimeout = syncTimeout
	opts.DNS.CacheSyncTimeout = syncTimeout
	opts.Dependencies.CacheSyncTimeout = syncTimeout
	opts.Propagation.CacheSyncTimeout = syncTimeout
	cp, err := controlplane.New(rec, e.fleet, opts)
	require.NoError(t, err)
	stop := runAll(cp.Run)
	e.scenario(t, rec.saw)
	eventsGVR := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	require.Eventually(t, func() bool { return rec.saw("create", eventsGVR, "") }, time.Minute, 10*time.Millisecond, "no event written")
	require.NoError(t, stop())
	require.True(t, rec.saw("create", schema.GroupVersionResource{Group: "coordination.k8s.io", Resource: "leases"}, ""), "no Lease created")
	checkGranted(t, m, "the control plane", m.boundTo(ServiceAccount), rec)
}
