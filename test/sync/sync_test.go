// Package sync_test runs the Syncer against real kube-apiservers started by internal/testenv: a
// host that stores the federated objects, Clusters and Secrets, and two members reached through
// federation/kube's ClusterSet.
package sync_test

import (
	"context"
	"fmt"
	"os"
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
	fedsync "github.com/fedkit/fedkit/sync"
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
		require.Equal(t, "true", ns.GetAnnotations()[fedsync.CreatedNamespaceAnnotation])
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
	require.Equal(t, map[string]string{"m1": "", "m2": fedsync.ReasonTypeNotServed}, got)
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
// again and again (hostile input, against real API servers: the fake keeps unknown fields).
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
	before := f.memberWrites(t)

	// Another writer (here an annotation; in a real cluster, the deployment controller's
	// status) makes sync compare the object again: nothing to write for the pruned fields.
	// Then a real drift: the syncer handles the object's changes in order, so once that is
	// reverted the annotation has been seen.
	u := f.memberIn(t, "m1", "typos", "typo")
	a := u.GetAnnotations()
	a["team.example.com/seen"] = "yes"
	u.SetAnnotations(a)
	u, err := f.members["m1"].Update(context.Background(), deployments, u)
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
