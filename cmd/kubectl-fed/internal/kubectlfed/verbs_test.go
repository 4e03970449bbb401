package kubectlfed

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// fleet is a fake host with the members eu and us, for the operator verbs' transcripts.
type fleet struct {
	*fedtest.Env
	out bytes.Buffer // the transcript
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	env := fedtest.New(t, fedtest.Options{
		Namespaces: []string{"shop"},
		Members:    []fedtest.Member{{Name: "eu", Labels: map[string]string{"region": "eu"}}, {Name: "us", Labels: map[string]string{"region": "us"}}},
		Workloads:  fake.Workloads{Apps: true},
	})
	for _, m := range env.Fleet.Names() {
		fedtest.Create(t, env.Member(t, m), namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	}
	return &fleet{Env: env}
}

// uids are the fake's random uids and its resourceVersions (which count every write, fixtures
// included), which the transcripts leave out.
var uids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|resourceVersion: "[0-9]+"`)

var namespaceGVR = federation.NamespaceType.TargetGVR()

// kubectl runs the plugin on the fake fleet and adds the command and its output to the
// transcript; it returns the exit status.
func (f *fleet) kubectl(t *testing.T, args ...string) int {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, Options{Stdout: &out, Stderr: &errOut, Clock: f.Clock, Host: f.Host, Clusters: f.Fleet})
	fmt.Fprintf(&f.out, "$ kubectl fed %s\n%s", strings.Join(args, " "), uids.ReplaceAllString(out.String(), "<...>"))
	if errOut.Len() > 0 {
		fmt.Fprintf(&f.out, "[stderr] %s", uids.ReplaceAllString(errOut.String(), "<...>"))
	}
	if code != 0 {
		fmt.Fprintf(&f.out, "[exit %d]\n", code)
	}
	return code
}

// show adds an object of c to the transcript, as YAML without its server metadata.
func (f *fleet) show(t *testing.T, c federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.Get(context.Background(), gvr, namespace, name)
	if err != nil {
		fmt.Fprintf(&f.out, "# %s %s/%s: %v\n", gvr.Resource, namespace, name, err)
		return nil
	}
	shown := u.DeepCopy()
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
		unstructured.RemoveNestedField(shown.Object, "metadata", k)
	}
	data, err := yaml.Marshal(shown.Object)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&f.out, "# %s %s/%s:\n%s", gvr.Resource, namespace, name, data)
	return u
}

func (f *fleet) note(format string, args ...any) { fmt.Fprintf(&f.out, "# "+format+"\n", args...) }

// converge runs the scheduler, sync and the status collector over key until the members
// report what they run (the fleet's workloads tick between passes).
func (f *fleet) converge(t *testing.T, typ federation.TypeConfig, key federation.Key) {
	t.Helper()
	s, err := scheduler.New(f.Host, typ, scheduler.Options{Clock: f.Clock})
	if err != nil {
		t.Fatal(err)
	}
	y, err := fedsync.New(f.Host, f.Fleet, typ, fedsync.Options{Clock: f.Clock, WaitForScheduler: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := status.New(f.Host, f.Fleet, typ, status.Options{Clock: f.Clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 4 {
		for _, r := range []interface {
			Reconcile(context.Context, federation.Key) (federation.Result, error)
		}{s, y, c} {
			if _, err := r.Reconcile(ctx, key); err != nil {
				t.Fatalf("%T: %v", r, err)
			}
		}
		f.Fleet.Tick()
		f.Clock.Step(time.Second)
	}
}

const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}, annotations: {team: storefront}}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
status: {replicas: 4, readyReplicas: 4}
`

// TestFederateCommand: federate turns a host Deployment into its FederatedDeployment with the
// flags' placement, --dry-run writes nothing, a second federate is refused; with
// --namespace-contents, the namespace and every object a user made in it, and only those.
func TestFederateCommand(t *testing.T) {
	f := newFleet(t)
	fedtest.Create(t, f.Host, federation.DeploymentType.TargetGVR(), webDeployment)
	fedtest.Create(t, f.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: shop}, data: {color: blue}}`)
	fedtest.Create(t, f.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: kube-root-ca.crt, namespace: shop}, data: {ca.crt: x}}`)
	fedtest.Create(t, f.Host, federation.ServiceAccountType.TargetGVR(), `{apiVersion: v1, kind: ServiceAccount, metadata: {name: default, namespace: shop}}`)
	fedtest.Create(t, f.Host, federation.ReplicaSetType.TargetGVR(), `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-5d4f, namespace: shop, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: u1}]}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: "nginx:1.27"}]}}}}`)
	fedtest.Create(t, f.Host, federation.SecretType.TargetGVR(), `{apiVersion: v1, kind: Secret, metadata: {name: default-token, namespace: shop, annotations: {kubernetes.io/service-account.name: default}}, type: kubernetes.io/service-account-token}`)

	fdeploy := federation.DeploymentType.FederatedGVR()
	f.kubectl(t, "federate", "deployment/web", "-n", "shop", "--clusters", "eu,us", "--dry-run")
	f.show(t, f.Host, fdeploy, "shop", "web")
	f.kubectl(t, "federate", "deployment/web", "-n", "shop", "--cluster-selector", "region=eu")
	f.show(t, f.Host, fdeploy, "shop", "web")
	if code := f.kubectl(t, "federate", "deployment/web", "-n", "shop"); code != 2 {
		t.Errorf("a second federate exited %d; want 2 (it exists)", code)
	}
	f.kubectl(t, "federate", "--namespace-contents", "shop", "--dry-run", "--skip-kinds", "Secret")
	f.kubectl(t, "federate", "--namespace-contents", "shop")
	f.show(t, f.Host, federation.NamespaceType.FederatedGVR(), "shop", "shop")
	f.show(t, f.Host, federation.ConfigMapType.FederatedGVR(), "shop", "settings")
	for _, name := range []string{"kube-root-ca.crt"} {
		if _, err := f.Host.Get(context.Background(), federation.ConfigMapType.FederatedGVR(), "shop", name); err == nil {
			t.Errorf("FederatedConfigMap %s was created; want it left out", name)
		}
	}
	golden(t, "federate.txt", f.out.String())
}

// TestPromoteCommand: promote creates the FederatedDeployment of a member's Deployment,
// placed there and marked to adopt it; sync then takes the member's copy over in place (the
// same uid, no delete), and get shows it per member. A copy the federation
// manages already, and an object federated already, are refused.
func TestPromoteCommand(t *testing.T) {
	f := newFleet(t)
	eu := f.Member(t, "eu")
	fedtest.Create(t, eu, federation.DeploymentType.TargetGVR(), webDeployment)
	before, err := eu.Get(context.Background(), federation.DeploymentType.TargetGVR(), "shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	f.kubectl(t, "promote", "deployment/web", "-n", "shop", "--cluster", "eu", "--dry-run")
	f.kubectl(t, "promote", "deployment/web", "-n", "shop", "--cluster", "eu")
	f.show(t, f.Host, federation.DeploymentType.FederatedGVR(), "shop", "web")
	if code := f.kubectl(t, "promote", "deployment/web", "-n", "shop", "--cluster", "eu"); code != 2 {
		t.Errorf("a second promote exited %d; want 2", code)
	}

	eu.ClearActions()
	key := federation.Key{Namespace: "shop", Name: "web"}
	f.converge(t, federation.DeploymentType, key)
	after, err := eu.Get(context.Background(), federation.DeploymentType.TargetGVR(), "shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() || after.GetLabels()[federation.ManagedByLabel] == "" {
		t.Errorf("after sync: uid %s (was %s), labels %v; want the same uid, adopted", after.GetUID(), before.GetUID(), after.GetLabels())
	}
	for _, a := range eu.Actions() {
		// Sync's create is answered AlreadyExists (the same uid shows it made nothing);
		// a delete would be a recreate.
		if a.Verb == fake.VerbDelete {
			t.Errorf("sync %s %s/%s in eu; want the promoted copy updated in place", a.Verb, a.Resource.Resource, a.Name)
		}
	}
	f.note("sync adopted eu's copy: same uid, labelled %s=%s", federation.ManagedByLabel, after.GetLabels()[federation.ManagedByLabel])
	f.kubectl(t, "get", "federateddeployment/web", "-n", "shop")

	// A copy the federation manages is refused: promote it from us, where sync wrote none.
	fedtest.Create(t, f.Member(t, "us"), federation.ConfigMapType.TargetGVR(),
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: managed, namespace: shop, labels: {`+federation.ManagedByLabel+`: fedkit}}}`)
	f.kubectl(t, "promote", "configmap/managed", "-n", "shop", "--cluster", "us")
	f.kubectl(t, "promote", "configmap/absent", "-n", "shop", "--cluster", "us")
	golden(t, "promote.txt", f.out.String())
}

// TestCordonAndTaintCommands: cordon adds the NoSchedule taint and uncordon removes it, each
// once; taint adds, refuses a changed value without --overwrite, removes by key and by key
// and effect, refuses the monitor's taints and bad syntax; --dry-run writes nothing.
func TestCordonAndTaintCommands(t *testing.T) {
	f := newFleet(t)
	taints := func() { f.show(t, f.Host, federation.ClusterGVR, "", "eu") }
	f.kubectl(t, "cordon", "eu", "--dry-run")
	f.kubectl(t, "cordon", "eu")
	f.kubectl(t, "cordon", "eu")
	f.kubectl(t, "taint", "eu", "dedicated=payments:NoSchedule", "maintenance:NoExecute")
	f.kubectl(t, "taint", "eu", "dedicated=search:NoSchedule")
	f.kubectl(t, "taint", "eu", "dedicated=search:NoSchedule", "--overwrite")
	taints()
	f.kubectl(t, "uncordon", "eu")
	f.kubectl(t, "taint", "eu", "dedicated-", "maintenance:NoExecute-", "--dry-run")
	f.kubectl(t, "taint", "eu", "dedicated-", "maintenance:NoExecute-")
	f.kubectl(t, "taint", "eu", "dedicated-")
	f.kubectl(t, "taint", "eu", federation.TaintClusterNotReady+":NoSchedule-")
	f.kubectl(t, "taint", "eu", "bad key:NoSchedule")
	f.kubectl(t, "taint", "eu", "key=value:Sometimes")
	f.kubectl(t, "taint", "eu", "key=value")
	taints()
	golden(t, "taint.txt", f.out.String())
}

// TestGetAndDescribeCommands: a FederatedDeployment divided over eu and us, with an override
// in us, converged by the loops: get shows each member's copy with its own status, one
// member cut off says so in its row, describe adds conditions, members' conditions and the
// events.
func TestGetAndDescribeCommands(t *testing.T) {
	f := newFleet(t)
	fedtest.Create(t, f.Host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: "nginx:1.27"}]}}
  placement: {clusterSelector: {}}
  overrides: [{clusterName: us, clusterOverrides: [{path: /spec/template/spec/containers/0/image, value: "nginx:1.28"}]}]
`)
	key := federation.Key{Namespace: "shop", Name: "web"}
	f.converge(t, federation.DeploymentType, key)
	fed, err := f.Host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), "shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	ev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Event", "type": "Normal", "reason": "Promoted", "message": "an event on the object",
		"metadata":       map[string]any{"name": "web.1", "namespace": "shop"},
		"involvedObject": map[string]any{"kind": "FederatedDeployment", "name": "web", "namespace": "shop", "uid": string(fed.GetUID())},
		"source":         map[string]any{"component": "fedkit"},
		"lastTimestamp":  f.Clock.Now().Add(-90 * time.Second).Format(time.RFC3339),
	}}
	if _, err := f.Host.Create(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "events"}, ev); err != nil {
		t.Fatal(err)
	}
	f.kubectl(t, "get", "federateddeployment/web", "-n", "shop")
	f.kubectl(t, "get", "deployment/web", "-n", "shop", "-o", "yaml")
	f.kubectl(t, "describe", "federateddeployment/web", "-n", "shop")
	if err := f.Fleet.Partition("us"); err != nil {
		t.Fatal(err)
	}
	f.note("us is cut off")
	f.kubectl(t, "get", "web", "--kind", "FederatedDeployment", "-n", "shop")
	f.kubectl(t, "get", "federateddeployment/absent", "-n", "shop")
	golden(t, "get.txt", f.out.String())
}

// TestOrphaningDeletionCommand: enable sets federation.k8s.io/orphan, status says so,
// disable removes it; each twice says it changed nothing; --dry-run writes nothing.
func TestOrphaningDeletionCommand(t *testing.T) {
	f := newFleet(t)
	fedtest.Create(t, f.Host, federation.ConfigMapType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: settings, namespace: shop}, spec: {template: {data: {a: b}}}}`)
	for _, args := range [][]string{
		{"status", "federatedconfigmap/settings"},
		{"enable", "federatedconfigmap/settings", "--dry-run"},
		{"status", "federatedconfigmap/settings"},
		{"enable", "configmap/settings"},
		{"enable", "settings", "--kind", "FederatedConfigMap"},
		{"status", "federatedconfigmap/settings"},
		{"disable", "federatedconfigmap/settings"},
		{"disable", "federatedconfigmap/settings"},
		{"status", "federatedconfigmap/settings"},
		{"toggle", "federatedconfigmap/settings"},
	} {
		f.kubectl(t, append(append([]string{"orphaning-deletion"}, args...), "-n", "shop")...)
	}
	golden(t, "orphaning-deletion.txt", f.out.String())
}

// TestFederatedNamespaceKey: a FederatedNamespace lives in the namespace it federates, so
// status, get and the other verbs look for federatednamespace/shop in shop, whatever -n says.
func TestFederatedNamespaceKey(t *testing.T) {
	g := &globals{namespace: "default"}
	_, key, err := g.typeAndKey("federatednamespace/shop", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := (federation.Key{Namespace: "shop", Name: "shop"}); key != want {
		t.Errorf("typeAndKey(federatednamespace/shop) = %v; want %v", key, want)
	}
}
