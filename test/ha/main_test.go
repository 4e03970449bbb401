// Package ha_test runs leader election and sharding on real kube-apiservers started by
// internal/testenv: a host that stores the federated objects, Clusters and the Leases, and a
// member reached through federation/kube's ClusterSet. Each test runs two or three
// "processes" in the test binary, each with its own clients, ClusterSet and Syncers, under
// internal/lease's Elect or Shards, and records every write their Syncers make with its
// time, to check that no two processes do the same work at once.
package ha_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/lease"
	"github.com/fedkit/fedkit/internal/testenv"
)

const (
	hostName   = "host"
	memberName = "m1"
	system     = "fedkit-system"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, hostName, memberName))
}

// timing is what the tests run with, as the lease package's documentation suggests for
// tests on the real clock: a crashed holder's Lease is taken over about 2s later.
func timing(name, identity string) lease.Options {
	return lease.Options{
		Namespace:     system,
		Name:          name,
		Identity:      identity,
		LeaseDuration: 2 * time.Second,
		RenewDeadline: time.Second,
		RetryPeriod:   250 * time.Millisecond,
	}
}

// fixture is the shared environment seen by the test itself: the host with fedkit's CRDs,
// the member registered as a ready Cluster, and the test's namespace for objects.
type fixture struct {
	env    *testenv.Env
	host   *kube.Client
	member *kube.Client
	ns     string
}

var (
	installOnce sync.Mutex
	runs        atomic.Int32
)

// setup returns the fixture with a namespace of its own, prefix-<n>: namespaces cannot be
// deleted on the test servers (no namespace controller), and -count=N runs a test again on
// the same servers.
func setup(t *testing.T, prefix string) *fixture {
	t.Helper()
	env := testenv.Shared(t)
	f := &fixture{env: env, ns: fmt.Sprintf("%s-%d", prefix, runs.Add(1))}
	ns := f.ns
	f.host = env.Client(t, hostName)
	f.member = env.Client(t, memberName)
	installOnce.Lock()
	defer installOnce.Unlock()
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, conformance.InstallCRDs(ctx, f.host, crds...))
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	fedtest.Create(t, f.host, namespaces, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns))
	env.Register(t, f.host, memberName, memberName, system)
	testenv.MarkReady(t, f.host, memberName)
	return f
}

// federate creates the FederatedDeployments names in the test's namespace, placed on the
// member.
func (f *fixture) federate(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), fmt.Sprintf(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: %s, namespace: %s}
spec:
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: %s}}
      template:
        metadata: {labels: {app: %s}}
        spec: {containers: [{name: app, image: "nginx:1.21"}]}
  placement: {clusters: [{name: %s}]}
`, name, f.ns, name, name, memberName))
	}
}

// waitPropagated waits until the member runs a Deployment for every name.
func (f *fixture) waitPropagated(t *testing.T, names ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, name := range names {
			if _, err := f.member.Get(context.Background(), deployments, f.ns, name); err != nil {
				return false
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond, "propagated to the member: %v", names)
}

// names returns prefix-0 to prefix-(n-1).
func names(prefix string, from, n int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// lastStart returns the latest start among the intervals.
func lastStart(spans []interval) time.Time {
	var at time.Time
	for _, s := range spans {
		if s.start.After(at) {
			at = s.start
		}
	}
	return at
}
