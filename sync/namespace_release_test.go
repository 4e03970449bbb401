package sync_test

import (
	"context"
	"strings"
	gosync "sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// logLines is a logr sink that keeps every line, for tests that check what was logged.
type logLines struct {
	mu    gosync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) joined() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// seedYAML seeds objects, given as YAML documents, into a member.
func seedYAML(t *testing.T, c *fake.Cluster, docs ...string) {
	t.Helper()
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
		require.NoError(t, c.Seed(u))
	}
}

// leaveAzure removes azure from the federated Deployment's placement and passes: sync deletes
// its Deployment there, then looks at the namespace it created there.
func leaveAzure(t *testing.T, e *env) {
	t.Helper()
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters")
	})
	e.reconcile(t)
	require.Nil(t, e.member(t, "azure"), "the Deployment left azure")
}

// A member namespace sync created is deleted only when nothing but what the federation is
// removing lives in it (plan.Occupant, whose table TestOccupant tells the rule), over every
// namespaced, listable resource the member serves: a custom resource, which only discovery
// finds, keeps it, and itself.
func TestImplicitNamespaceKeptWhileAnythingElseLivesInIt(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	azure := e.cluster(t, "azure")
	seedYAML(t, azure, widgetCRD, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: other-team, namespace: production}
spec: {size: 1}`)

	leaveAzure(t, e)
	ns := e.peekNamespace(t, "azure", "production")
	require.NotNil(t, ns, "the namespace was deleted with another team's Widget in it")
	require.Nil(t, ns.GetDeletionTimestamp(), "the namespace is being deleted with another team's Widget in it")
	_, err := azure.Peek(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "production", "other-team")
	require.NoError(t, err)
}

// What sync is removing (the Deployment it deleted, and what that owns: its ReplicaSets and
// their Pods), what the API server puts in every namespace (kube-root-ca.crt, the default
// ServiceAccount) and Events do not keep the namespace sync created: the driver deletes it.
func TestImplicitNamespaceReleasedWhenOnlyTheFederationsObjectsAreLeft(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	azure := e.cluster(t, "azure")
	uid := string(e.member(t, "azure").GetUID())
	seedYAML(t, azure, `
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: app-frontend-1
  namespace: production
  uid: rs-uid-1
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: app-frontend, uid: `+uid+`, controller: true}]
spec: {selector: {matchLabels: {app: frontend}}, template: {metadata: {labels: {app: frontend}}, spec: {containers: [{name: nginx, image: nginx}]}}}`, `
apiVersion: v1
kind: Pod
metadata:
  name: app-frontend-1-abcde
  namespace: production
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: app-frontend-1, uid: rs-uid-1, controller: true}]
spec: {containers: [{name: nginx, image: nginx}]}`, `
apiVersion: v1
kind: ConfigMap
metadata: {name: kube-root-ca.crt, namespace: production}
data: {ca.crt: x}`, `
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: production}`, `
apiVersion: v1
kind: Event
metadata: {name: app-frontend.1, namespace: production}
involvedObject: {kind: Deployment, name: app-frontend, namespace: production}
reason: ScalingReplicaSet`)

	leaveAzure(t, e)
	ns := e.peekNamespace(t, "azure", "production")
	require.True(t, ns == nil || ns.GetDeletionTimestamp() != nil, "the namespace sync created is released")
}

// noDiscovery hides the members' discovery (a ClusterClient without ResourceDiscoverer).
type noDiscovery struct{ *fake.Fleet }

func (n noDiscovery) Client(name string) (federation.ClusterClient, error) {
	c, err := n.Fleet.Client(name)
	if err != nil {
		return nil, err
	}
	return struct{ federation.ClusterClient }{c}, nil
}

// When sync cannot tell whether anything else lives in a namespace it created (discovery
// fails or is missing, a List fails), it keeps the namespace and logs why.
func TestImplicitNamespaceKeptWhenTheCheckCannotComplete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    func(e *env) federation.ClusterSet
		inject func(c *fake.Cluster)
		why    string
	}{
		{name: "discovery fails", why: "metrics.k8s.io/v1beta1 is down", inject: func(c *fake.Cluster) {
			c.FailOn(fake.VerbDiscovery, apierrors.NewServiceUnavailable("metrics.k8s.io/v1beta1 is down"), 0)
		}},
		{name: "a list fails", why: "rolebindings", inject: func(c *fake.Cluster) {
			c.SetHooks(fake.Hooks{List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
				if gvr.Resource == "rolebindings" {
					return nil, apierrors.NewForbidden(gvr.GroupResource(), "", nil)
				}
				return next.List(ctx, gvr, ns, opts)
			}})
		}},
		{name: "no discovery", why: "discovery", set: func(e *env) federation.ClusterSet { return noDiscovery{e.fleet} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logLines
			e := newEnv(t, fedsync.Options{})
			var set federation.ClusterSet = e.fleet
			if tc.set != nil {
				set = tc.set(e)
			}
			s, err := fedsync.New(e.host, set, e.typ, fedsync.Options{Clock: e.clock, Logger: logs.logger()})
			require.NoError(t, err)
			e.s = s
			e.apply(t, e.typ.FederatedGVR(), frontend)
			e.reconcile(t)
			if tc.inject != nil {
				tc.inject(e.cluster(t, "azure"))
			}
			leaveAzure(t, e)
			ns := e.peekNamespace(t, "azure", "production")
			require.NotNil(t, ns, "deleted a namespace sync could not check")
			require.Nil(t, ns.GetDeletionTimestamp(), "deleting a namespace sync could not check")
			out := logs.joined()
			require.Contains(t, out, "Kept a member namespace")
			require.Contains(t, out, tc.why)
		})
	}
}

// Options.KeepCreatedNamespaces turns the deletion of the namespaces sync created off.
func TestKeepCreatedNamespaces(t *testing.T) {
	e := newEnv(t, fedsync.Options{KeepCreatedNamespaces: true})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	leaveAzure(t, e)
	ns := e.peekNamespace(t, "azure", "production")
	require.NotNil(t, ns, "deleted")
	require.Nil(t, ns.GetDeletionTimestamp())
}
