// Package sync_test runs the Syncer against real kube-apiservers started by internal/testenv: a
// host that stores the federated objects, Clusters and Secrets, and two members reached through
// federation/kube's ClusterSet.
package sync_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

const hostName = "host"

var memberNames = []string{"m1", "m2"}

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, append([]string{hostName}, memberNames...)...))
}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	revisions   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
)

// fixture is the host and members, with the ClusterSet and a Syncer running.
type fixture struct {
	host    *kube.Client
	members map[string]*kube.Client
	set     *kube.ClusterSet
	syncer  *fedsync.Syncer
	reg     *prometheus.Registry
}

func start(t *testing.T) *fixture {
	t.Helper()
	env := testenv.Shared(t)
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{members: map[string]*kube.Client{}, reg: prometheus.NewRegistry()}
	var err error
	f.host = env.Client(t, hostName)
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	ictx, icancel := context.WithTimeout(ctx, 2*time.Minute)
	defer icancel()
	require.NoError(t, conformance.InstallCRDs(ictx, f.host, crds...))

	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	for _, name := range memberNames {
		f.members[name] = env.Client(t, name)
		env.Register(t, f.host, name, name, "fedkit-system")
		testenv.MarkReady(t, f.host, name)
	}
	// The loops log through the test: a failure shows what they met.
	log := testr.New(t)
	f.set, err = kube.NewClusterSet(f.host, kube.ClusterSetOptions{Namespace: "fedkit-system", Logger: log})
	require.NoError(t, err)
	f.syncer, err = fedsync.New(f.host, f.set, federation.DeploymentType, fedsync.Options{Registerer: f.reg, Logger: log})
	require.NoError(t, err)
	setDone, syncDone := make(chan error, 1), make(chan error, 1)
	go func() { setDone <- f.set.Run(ctx) }()
	go func() { syncDone <- f.syncer.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-syncDone)
		require.NoError(t, <-setDone)
	})
	return f
}

// memberWrites is the Syncer's count of successful member writes (requests other than reads).
func (f *fixture) memberWrites(t *testing.T) float64 {
	t.Helper()
	mfs, err := f.reg.Gather()
	require.NoError(t, err)
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "fedkit_member_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["result"] == "ok" && labels["verb"] != "get" && labels["verb"] != "list" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func (f *fixture) member(t *testing.T, cluster, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := f.members[cluster].Get(context.Background(), deployments, "shop", name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return u
}

// deployment reads the member Deployment of key in cluster, nil when it cannot.
func (f *fixture) deployment(cluster string, key federation.Key) *unstructured.Unstructured {
	u, err := f.members[cluster].Get(context.Background(), deployments, key.Namespace, key.Name)
	if err != nil {
		return nil
	}
	return u
}

// rolledOut plays the Deployment controller in cluster (the members run none): the current
// generation of key's Deployment is rolled out, every replica of its spec available.
func (f *fixture) rolledOut(t *testing.T, cluster string, key federation.Key) {
	t.Helper()
	eventually(t, func() bool {
		u := f.deployment(cluster, key)
		if u == nil {
			return false
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		u.Object["status"] = map[string]any{"observedGeneration": u.GetGeneration(), "replicas": n,
			"updatedReplicas": n, "readyReplicas": n, "availableReplicas": n}
		_, err := f.members[cluster].UpdateStatus(context.Background(), deployments, u)
		return err == nil
	}, cluster+": status written")
}

func image(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	fedtest.Eventually(t, msg, cond)
}

const web = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.21", resources: {requests: {cpu: "0.25"}}}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
`

func TestSyncOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), web)
	for _, m := range memberNames {
		eventually(t, func() bool { u := f.member(t, m, "web"); return u != nil && image(u) == "nginx:1.21" }, m+": created")
	}
	key := federation.Key{Namespace: "shop", Name: "web"}
	fedObj := func() *federation.FederatedObject {
		u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		return obj
	}
	eventually(t, func() bool { return fedObj().Status.SyncedRevision == 1 }, "synced revision 1")

	t.Run("the member namespace was created by sync", func(t *testing.T) {
		ns, err := f.members["m1"].Get(ctx, namespaces, "", "shop")
		require.NoError(t, err)
		require.Equal(t, "true", ns.GetAnnotations()[plan.CreatedNamespaceAnnotation])
	})

	t.Run("server defaults and a member writer cause no updates; drift is reverted", func(t *testing.T) {
		before := f.memberWrites(t)
		for i := range 10 {
			u := f.member(t, "m1", "web")
			a := u.GetAnnotations()
			a["team.example.com/touched"] = fmt.Sprint(i)
			u.SetAnnotations(a)
			_, err := f.members["m1"].Update(ctx, deployments, u)
			if apierrors.IsConflict(err) {
				continue
			}
			require.NoError(t, err)
		}
		// Then a real drift. The syncer handles the object's changes in order (its queue
		// merges them), so once this one is reverted the annotation changes have been seen.
		u := f.member(t, "m1", "web")
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		cs[0].(map[string]any)["image"] = "evil:1"
		require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
		_, err := f.members["m1"].Update(ctx, deployments, u)
		require.NoError(t, err)
		eventually(t, func() bool { return image(f.member(t, "m1", "web")) == "nginx:1.21" }, "reverted")
		// The server shows the revert before the Syncer's call returns and counts it.
		eventually(t, func() bool { return f.memberWrites(t) >= before+1 }, "the revert counted")
		require.Equal(t, before+1, f.memberWrites(t), "one write, the revert: a member writer touching only its own annotations, and the server's defaults, cause none")
		require.Equal(t, "9", f.member(t, "m1", "web").GetAnnotations()["team.example.com/touched"], "the member's annotation survives the revert")
	})

	t.Run("a template change and a rollback", func(t *testing.T) {
		u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
		require.NoError(t, err)
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
		cs[0].(map[string]any)["image"] = "nginx:1.22"
		require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "template", "spec", "containers"))
		_, err = f.host.Update(ctx, federation.DeploymentType.FederatedGVR(), u)
		require.NoError(t, err)
		eventually(t, func() bool { return fedObj().Status.SyncedRevision == 2 }, "revision 2")
		for _, m := range memberNames {
			require.Equal(t, "nginx:1.22", image(f.member(t, m, "web")))
		}
		require.NoError(t, fedsync.Rollback(ctx, f.host, federation.DeploymentType, key, 1))
		eventually(t, func() bool { return fedObj().Status.SyncedRevision == 3 }, "revision 3")
		for _, m := range memberNames {
			require.Equal(t, "nginx:1.21", image(f.member(t, m, "web")))
		}
	})

	t.Run("ControllerRevisions are accepted and owned by the federated object", func(t *testing.T) {
		list, err := f.host.List(ctx, revisions, "shop", metav1.ListOptions{LabelSelector: fedsync.OwnerUIDLabel + "=" + string(fedObj().UID)})
		require.NoError(t, err)
		require.Len(t, list.Items, 2, "revisions 1 (renumbered 3) and 2")
		for _, r := range list.Items {
			refs := r.GetOwnerReferences()
			require.Len(t, refs, 1)
			require.Equal(t, "FederatedDeployment", refs[0].Kind)
			require.Equal(t, "types.federation.k8s.io/v1alpha1", refs[0].APIVersion)
			require.Equal(t, fedObj().UID, refs[0].UID)
			require.True(t, *refs[0].Controller)
		}
	})

	t.Run("deletion removes the members, then the finalizer", func(t *testing.T) {
		require.NoError(t, f.host.Delete(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web", metav1.DeleteOptions{}))
		eventually(t, func() bool {
			_, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
			return apierrors.IsNotFound(err)
		}, "federated object gone")
		for _, m := range memberNames {
			require.Nil(t, f.member(t, m, "web"), m)
		}
	})
}

// TestTypeNotServedOnRealServers: a member without the target type's CRD answers 404; its
// cached reader fails at once instead of waiting for a list that cannot succeed, the cluster
// reports TypeNotServed, and the other member gets its object.
func TestTypeNotServedOnRealServers(t *testing.T) {
	f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	widgets := federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "")
	fedCRD, err := federation.CRDFor(widgets)
	require.NoError(t, err)
	require.NoError(t, conformance.InstallCRDs(ctx, f.host, fedCRD))
	memberCRD := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true)}}}},
		},
	}
	require.NoError(t, conformance.InstallCRDs(ctx, f.members["m1"], memberCRD)) // m2 does not serve widgets
	// Its own namespace: the first test's namespace is terminating in the members (sync
	// deleted the namespace it had created, and testenv runs no namespace controller to
	// finish that).
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: gadgets}}`)
	fedtest.Create(t, f.host, widgets.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedWidget
metadata: {name: gadget, namespace: gadgets}
spec:
  template: {spec: {size: 3}}
  placement: {clusters: [{name: m1}, {name: m2}]}
`)
	s, err := fedsync.New(f.host, f.set, widgets, fedsync.Options{})
	require.NoError(t, err)
	start := time.Now()
	_, err = s.Reconcile(ctx, federation.Key{Namespace: "gadgets", Name: "gadget"})
	require.NoError(t, err)
	t.Logf("one pass with a member that does not serve the type took %s", time.Since(start).Round(time.Millisecond))
	u, err := f.host.Get(ctx, widgets.FederatedGVR(), "gadgets", "gadget")
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range obj.Status.Clusters {
		got[c.Name] = c.Propagation
	}
	require.Equal(t, map[string]string{"m1": "", "m2": plan.ReasonTypeNotServed}, got)
	_, err = f.members["m1"].Get(ctx, widgets.TargetGVR(), "gadgets", "gadget")
	require.NoError(t, err)
}

func ptr[T any](v T) *T { return &v }

// A template with cpu: 1, which a real member server stores as "1": after a restart, a new
// Syncer over members that already run the desired objects makes zero writes (it compared
// the number with the string and wrote every member once more). A hand edit of the cpu
// request is still put back.
func TestNewSyncerAfterRestartWritesNothingOnRealServers(t *testing.T) {
	f := start(t)
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: restart}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: cpu, namespace: restart}
spec:
  template:
    metadata: {labels: {app: cpu}}
    spec:
      replicas: 1
      selector: {matchLabels: {app: cpu}}
      template:
        metadata: {labels: {app: cpu}}
        spec:
          containers:
          - name: nginx
            image: "nginx:1.21"
            args: []
            resources: {requests: {cpu: 1, memory: 512Mi}, limits: {cpu: 2.0}}
  placement:
    clusters: [{name: m1}, {name: m2}]
`)
	key := federation.Key{Namespace: "restart", Name: "cpu"}
	eventually(t, func() bool {
		u, err := f.host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
		if err != nil {
			return false
		}
		obj, err := federation.FederatedObjectFromUnstructured(u)
		return err == nil && obj.Status.SyncedRevision == 1
	}, "synced revision 1")
	for _, m := range memberNames {
		require.Equal(t, "1", cpuRequest(t, f.memberIn(t, m, key.Namespace, key.Name)), "%s: the server stores cpu: 1 as \"1\"", m)
	}

	// The restart: a new Syncer, which knows nothing of the members yet.
	reg := prometheus.NewRegistry()
	restarted, err := fedsync.New(f.host, f.set, federation.DeploymentType, fedsync.Options{Registerer: reg, Logger: testr.New(t)})
	require.NoError(t, err)
	reconcileOnce(t, restarted, key)
	require.Zero(t, (&fixture{reg: reg}).memberWrites(t), "a new Syncer over members that run the desired objects writes nothing")

	// A hand edit of the cpu request is drift, put back.
	u := f.memberIn(t, "m1", key.Namespace, key.Name)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "1500m"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	_, err = f.members["m1"].Update(context.Background(), deployments, u)
	require.NoError(t, err)
	reconcileOnce(t, restarted, key)
	require.Equal(t, "1", cpuRequest(t, f.memberIn(t, "m1", key.Namespace, key.Name)), "the hand edit is put back")
	before := (&fixture{reg: reg}).memberWrites(t)
	reconcileOnce(t, restarted, key)
	require.Equal(t, before, (&fixture{reg: reg}).memberWrites(t), "and not written again")
}

// reconcileOnce runs one pass of s, again when it met a Conflict: the fixture's Syncer runs
// too, and may write the same objects meanwhile.
func reconcileOnce(t *testing.T, s *fedsync.Syncer, key federation.Key) {
	t.Helper()
	var err error
	for range 5 {
		if _, err = s.Reconcile(context.Background(), key); !apierrors.IsConflict(err) {
			break
		}
	}
	require.NoError(t, err)
}

func cpuRequest(t *testing.T, u *unstructured.Unstructured) any {
	t.Helper()
	require.NotNil(t, u)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, cs)
	v, _, _ := unstructured.NestedFieldNoCopy(cs[0].(map[string]any), "resources", "requests", "cpu")
	return v
}

// A template with fields the member's API server does not know (a typo, a field of a newer
// Kubernetes): the server drops them as it stores the object. Sync owns what its render sets,
// so it would see those fields "missing" after every write; it must not update the object
// again and again (hostile input, against real API servers). What the members warned about
// their writes is in each cluster's status.clusters[].message.
func TestUnknownTemplateFieldsDoNotThrashOnRealServers(t *testing.T) {
	f := start(t)
	// Its own namespace: another test's may be terminating in the members (testenv runs no
	// namespace controller).
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: typos}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: typo, namespace: typos}
spec:
  template:
    metadata: {labels: {app: typo}}
    spec:
      replicas: 1
      replicaz: 3
      selector: {matchLabels: {app: typo}}
      template:
        metadata: {labels: {app: typo}}
        spec: {containers: [{name: nginx, image: "nginx:1.21", imagePullPolizy: Always}]}
  placement:
    clusters: [{name: m1}, {name: m2}]
`)
	for _, m := range memberNames {
		eventually(t, func() bool { return f.memberIn(t, m, "typos", "typo") != nil }, m+": created")
	}
	_, found, _ := unstructuredField(f.memberIn(t, "m1", "typos", "typo").Object, "spec", "replicaz")
	require.False(t, found, "the real server drops unknown fields")
	// Sync records the revision after its member writes have returned and been counted.
	eventually(t, func() bool {
		u, err := f.host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), "typos", "typo")
		if err != nil {
			return false
		}
		obj, err := federation.FederatedObjectFromUnstructured(u)
		return err == nil && obj.Status.SyncedRevision == 1
	}, "synced revision 1")
	u, err := f.host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), "typos", "typo")
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	for _, c := range obj.Status.Clusters {
		require.Equal(t, fmt.Sprintf(`cluster %q warned: unknown field "spec.replicaz"; unknown field "spec.template.spec.containers[0].imagePullPolizy"`, c.Name), c.Message,
			"the member's warnings, in status")
	}
	require.Len(t, obj.Status.Clusters, len(memberNames))
	before := f.memberWrites(t)

	// Another writer (here an annotation; in a real cluster, the deployment controller's
	// status) makes sync compare the object again: nothing to write for the pruned fields.
	// Then a real drift: the syncer handles the object's changes in order, so once that is
	// reverted the annotation has been seen.
	u = f.memberIn(t, "m1", "typos", "typo")
	a := u.GetAnnotations()
	a["team.example.com/seen"] = "yes"
	u.SetAnnotations(a)
	u, err = f.members["m1"].Update(context.Background(), deployments, u)
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "evil:1"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	_, err = f.members["m1"].Update(context.Background(), deployments, u)
	require.NoError(t, err)
	eventually(t, func() bool { return image(f.memberIn(t, "m1", "typos", "typo")) == "nginx:1.21" }, "drift reverted")
	// The server shows the revert before the Syncer's call returns and counts it.
	eventually(t, func() bool { return f.memberWrites(t) >= before+1 }, "the revert counted")
	require.Equal(t, before+1, f.memberWrites(t), "one write, the revert: sync does not fight the server's pruning")
}

func unstructuredField(obj map[string]any, fields ...string) (any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if cur, ok = m[f]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

func (f *fixture) memberIn(t *testing.T, cluster, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := f.members[cluster].Get(context.Background(), deployments, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return u
}

var jobs = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

const migrate = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedJob
metadata: {name: migrate, namespace: batch}
spec:
  template:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: migrate, image: "busybox:1.36"}]
  placement: {clusters: [{name: m1}, {name: m2}]}
`

// hold is a member controller's finalizer, which keeps m1's Job after the delete so its
// finalizers can be read: no garbage collector runs against these servers.
const hold = "example.com/hold"

// A batch/v1 Job orphans its Pods when deleted with the server's default policy (the orphan
// finalizer). Sync deletes in Background, so the Job carries no orphan finalizer, and the
// federated object is released only once each member Job is gone.
func TestJobDeletionOrphansNoPodsOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	// A namespace of its own: sync deletes the member namespace it created once the Jobs are
	// gone, and without a namespace controller it stays terminating.
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: batch}}`)
	s, err := fedsync.New(f.host, f.set, federation.JobType, fedsync.Options{})
	require.NoError(t, err)
	key := federation.Key{Namespace: "batch", Name: "migrate"}
	reconcile := func() { _, _ = s.Reconcile(ctx, key) } // a member client may not be built yet: retried
	job := func(cluster string) (*metav1.ObjectMeta, error) {
		u, err := f.members[cluster].Get(ctx, jobs, "batch", "migrate")
		if err != nil {
			return nil, err
		}
		return &metav1.ObjectMeta{Finalizers: u.GetFinalizers(), DeletionTimestamp: u.GetDeletionTimestamp(), UID: u.GetUID()}, nil
	}
	fedGone := func() bool {
		_, err := f.host.Get(ctx, federation.JobType.FederatedGVR(), "batch", "migrate")
		return apierrors.IsNotFound(err)
	}

	fedtest.Create(t, f.host, federation.JobType.FederatedGVR(), migrate)
	eventually(t, func() bool {
		reconcile()
		_, e1 := job("m1")
		_, e2 := job("m2")
		return e1 == nil && e2 == nil
	}, "the Jobs are created")
	u, err := f.members["m1"].Get(ctx, jobs, "batch", "migrate")
	require.NoError(t, err)
	u.SetFinalizers(append(u.GetFinalizers(), hold))
	_, err = f.members["m1"].Update(ctx, jobs, u)
	require.NoError(t, err)

	require.NoError(t, f.host.Delete(ctx, federation.JobType.FederatedGVR(), "batch", "migrate", metav1.DeleteOptions{}))
	eventually(t, func() bool {
		reconcile()
		m1, err := job("m1")
		return err == nil && m1.DeletionTimestamp != nil
	}, "m1's Job is deleted")
	m1, err := job("m1")
	require.NoError(t, err)
	require.Equal(t, []string{hold}, m1.Finalizers, "no orphan finalizer: the Job's Pods go with it")
	eventually(t, func() bool { reconcile(); _, err := job("m2"); return apierrors.IsNotFound(err) }, "m2's Job is gone at once")
	reconcile()
	require.False(t, fedGone(), "m1's Job is still there: the federated object waits for it")

	u, err = f.members["m1"].Get(ctx, jobs, "batch", "migrate")
	require.NoError(t, err)
	u.SetFinalizers(slices.DeleteFunc(u.GetFinalizers(), func(f string) bool { return f == hold }))
	_, err = f.members["m1"].Update(ctx, jobs, u)
	require.NoError(t, err)
	eventually(t, func() bool { reconcile(); return fedGone() }, "released once every member Job is gone")
}

const evicted = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: evict}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: nginx, image: "nginx:1.21"}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
`

// TestGracefulEvictionOnRealServers: m2 is drained with a NoExecute taint. The scheduler
// moves its 2 replicas to m1 and keeps them in m2 meanwhile (status.schedule.evictions, which
// the API server stores as written); m2's Deployment stays until m1 reports its 4 available
// (the test plays m1's Deployment controller), then sync removes it.
func TestGracefulEvictionOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	key := federation.Key{Namespace: "evict", Name: "web"}
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: evict}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), evicted)
	fedtest.Create(t, f.host, federation.ReplicaSchedulingPreferenceGVR, `{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference,
metadata: {name: web, namespace: evict}, spec: {targetKind: FederatedDeployment, totalReplicas: 4, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}}`)
	sched, err := scheduler.New(f.host, federation.DeploymentType, scheduler.Options{})
	require.NoError(t, err)
	collector, err := status.New(f.host, f.set, federation.DeploymentType, status.Options{})
	require.NoError(t, err)
	pass := func() {
		_, _ = sched.Reconcile(ctx, key) // a Conflict with the Syncer's write is retried next time
		_, _ = collector.Reconcile(ctx, key)
	}
	member := func(m string) *unstructured.Unstructured { return f.deployment(m, key) }
	replicas := func(m string) int64 {
		u := member(m)
		if u == nil {
			return -1
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n
	}
	kubelet := func(m string) { f.rolledOut(t, m, key) }
	evictions := func() []federation.Eviction {
		u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		if obj.Status.Schedule == nil {
			return nil
		}
		return obj.Status.Schedule.Evictions
	}

	eventually(t, func() bool { pass(); return replicas("m1") == 2 && replicas("m2") == 2 }, "2 replicas in each member")
	kubelet("m1")
	kubelet("m2")

	cl, err := f.host.Get(ctx, federation.ClusterGVR, "", "m2")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(cl.Object, []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}, "spec", "taints"))
	_, err = f.host.Update(ctx, federation.ClusterGVR, cl)
	require.NoError(t, err)
	// The servers are the package's: the other tests place objects in m2.
	t.Cleanup(func() {
		eventually(t, func() bool {
			cl, err := f.host.Get(ctx, federation.ClusterGVR, "", "m2")
			if err != nil {
				return false
			}
			unstructured.RemoveNestedField(cl.Object, "spec", "taints")
			_, err = f.host.Update(ctx, federation.ClusterGVR, cl)
			return err == nil
		}, "m2's drain taint removed")
	})
	eventually(t, func() bool { pass(); return replicas("m1") == 4 }, "m1 gets m2's replicas")
	ev := evictions()
	require.Len(t, ev, 1)
	require.Equal(t, "m2", ev[0].Cluster)
	require.Equal(t, federation.EvictionTaint, ev[0].Reason)
	require.EqualValues(t, 2, ev[0].Keep)
	for range 5 {
		pass()
		require.EqualValues(t, 2, replicas("m2"), "m2 keeps its copy while m1's replacements are not available")
	}

	kubelet("m1")
	eventually(t, func() bool { pass(); return member("m2") == nil }, "m2's copy is removed once m1 reports 4 available")
	// The eviction is released (Keep 0) for sync, which runs on its own, to remove the copy;
	// the scheduler's next pass, which sees the copy gone, ends it.
	eventually(t, func() bool { pass(); return len(evictions()) == 0 }, "the eviction ends once m2's copy is gone")
	require.EqualValues(t, 4, replicas("m1"))
}

const staged = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: canary}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.21"}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
  rollout:
    stages:
    - {name: canary, clusters: [m1], minReadySeconds: 1}
`

// TestStagedRolloutOnRealServers: the basic staged flow on real API servers, with the
// Syncer running and a real Collector. The members run no workload controllers, so the test
// plays the Deployment controller: it writes each member Deployment's status by hand. A new
// image reaches m1 only; m2 gets it once m1 reports it ready (for minReadySeconds), and the
// rollout completes once m2 does. The API server accepts spec.rollout and status.rollout as
// sync writes them, and the Collector's ready and observedRevision.
func TestStagedRolloutOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	key := federation.Key{Namespace: "canary", Name: "web"}
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: canary}}`)
	fedtest.Create(t, f.host, federation.DeploymentType.FederatedGVR(), staged)
	collector, err := status.New(f.host, f.set, federation.DeploymentType, status.Options{})
	require.NoError(t, err)
	fedObj := func() *federation.FederatedObject {
		u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		return obj
	}
	member := func(m string) *unstructured.Unstructured { return f.deployment(m, key) }
	rolledOut := func(m string) { f.rolledOut(t, m, key) }
	// observed runs the Collector until status.clusters[] says what cond wants.
	observed := func(what string, cond func(map[string]federation.MemberStatus) bool) {
		t.Helper()
		eventually(t, func() bool {
			_, err := collector.Reconcile(ctx, key)
			require.NoError(t, err)
			got := map[string]federation.MemberStatus{}
			for _, c := range fedObj().Status.Clusters {
				got[c.Name] = c
			}
			return cond(got)
		}, what)
	}
	readyAt := func(rev int64, names ...string) func(map[string]federation.MemberStatus) bool {
		return func(got map[string]federation.MemberStatus) bool {
			for _, n := range names {
				if e := got[n]; e.ObservedRevision != rev || e.Ready == nil || !*e.Ready {
					return false
				}
			}
			return true
		}
	}

	// Revision 1 goes everywhere at once: there is nothing to roll from.
	for _, m := range memberNames {
		eventually(t, func() bool { return member(m) != nil }, m+": created")
		rolledOut(m)
	}
	observed("revision 1 ready", readyAt(1, "m1", "m2"))
	eventually(t, func() bool {
		st := fedObj().Status.Rollout
		return st != nil && st.Phase == federation.RolloutComplete && st.Revision == 1
	}, "revision 1 complete")

	// Revision 2: the canary first.
	u, err := f.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:1.22"
	require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "template", "spec", "containers"))
	_, err = f.host.Update(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)
	eventually(t, func() bool { return image(member("m1")) == "nginx:1.22" }, "m1 runs revision 2")
	observed("m1 seen on revision 2, not ready", func(got map[string]federation.MemberStatus) bool {
		e := got["m1"]
		return e.ObservedRevision == 2 && e.Ready != nil && !*e.Ready
	})
	// The Syncer decides on that (its status says why it waits), and m2 keeps revision 1.
	eventually(t, func() bool {
		st := fedObj().Status.Rollout
		return st.Reason == plan.RolloutReasonWaitingForReady && strings.Contains(st.Message, "m1 (not ready)")
	}, "the Syncer saw m1 not ready")
	require.Equal(t, "nginx:1.21", image(member("m2")))
	st := fedObj().Status.Rollout
	require.Equal(t, int32(1), st.Stage, st.Message)
	require.Equal(t, []federation.RolloutRevisionClusters{{Revision: 2, Clusters: []string{"m1"}}, {Revision: 1, Clusters: []string{"m2"}}}, st.Clusters)

	// m1 rolls out: after minReadySeconds the final stage starts, and m2 gets revision 2.
	rolledOut("m1")
	observed("m1 ready on revision 2", readyAt(2, "m1"))
	eventually(t, func() bool { return image(member("m2")) == "nginx:1.22" }, "m2 runs revision 2")
	rolledOut("m2")
	observed("m2 ready on revision 2", readyAt(2, "m2"))
	eventually(t, func() bool {
		o := fedObj()
		return o.Status.Rollout.Phase == federation.RolloutComplete && o.Status.Rollout.Revision == 2 && o.Status.SyncedRevision == 2
	}, "revision 2 complete")
}
