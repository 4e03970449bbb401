package loop_test

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

func regexpMatch(s, expr string) bool { return regexp.MustCompile(expr).MatchString(s) }

// TestRunMapsChangesToKeys covers every way a change becomes keys: the object's own, Keys,
// Broadcast, Referrers, and the Changed filter.
func TestRunMapsChangesToKeys(t *testing.T) {
	ctx := context.Background()
	host := fake.NewCluster("host")
	for _, name := range []string{"a", "b"} {
		create(t, host, configMaps, configMap("default", name))
	}
	rec := &recorder{}
	stop := start(t, newLoop(t, host, []loop.Source{
		{GVR: configMaps},
		{GVR: nodes, Broadcast: true, Changed: func(old, new *unstructured.Unstructured) bool {
			return old.GetLabels()["matters"] != new.GetLabels()["matters"]
		}},
		{GVR: secrets, Namespace: "default", Referrers: &loop.Referrers{GVR: configMaps, RefersTo: func(cm, secret *unstructured.Unstructured) bool {
			return cm.GetLabels()["secret"] == secret.GetName()
		}}},
		{GVR: services, Keys: func(u *unstructured.Unstructured) []federation.Key {
			return []federation.Key{{Namespace: u.GetNamespace(), Name: u.GetLabels()["for"]}}
		}},
	}, loop.Options{}), rec)
	defer stop()
	a, b := federation.Key{Namespace: "default", Name: "a"}, federation.Key{Namespace: "default", Name: "b"}
	counts := func(wa, wb int) func() bool {
		return func() bool { return rec.count(a) == wa && rec.count(b) == wb }
	}
	require.Eventually(t, counts(1, 1), 5*time.Second, time.Millisecond)

	// Broadcast: a Node's creation reschedules both; an update that Changed ignores does not,
	// one it reports does. The ignored update comes first, so if it had enqueued anything the
	// counts would pass 2.
	create(t, host, nodes, object("Node", "", "n1", nil))
	require.Eventually(t, counts(2, 2), 5*time.Second, time.Millisecond)
	require.NoError(t, host.Drift(nodes, "", "n1", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"heartbeat": "1"}) }))
	require.NoError(t, host.Drift(nodes, "", "n1", func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{"heartbeat": "1", "matters": "yes"})
	}))
	require.Eventually(t, counts(3, 3), 5*time.Second, time.Millisecond)

	// Referrers: a Secret concerns the ConfigMaps that name it, found in their cache.
	cm, err := host.Get(ctx, configMaps, "default", "b")
	require.NoError(t, err)
	cm.SetLabels(map[string]string{"secret": "creds"})
	_, err = host.Update(ctx, configMaps, cm)
	require.NoError(t, err)
	require.Eventually(t, counts(3, 4), 5*time.Second, time.Millisecond)
	create(t, host, secrets, object("Secret", "default", "creds", nil))
	require.Eventually(t, counts(3, 5), 5*time.Second, time.Millisecond)

	// Keys.
	svc := object("Service", "default", "svc", map[string]string{"for": "a"})
	svc.Object["spec"] = map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}
	create(t, host, services, svc)
	require.Eventually(t, counts(4, 5), 5*time.Second, time.Millisecond)
}

// readingReconciler reads the key's ConfigMap, a Secret and the Nodes through r, and records
// what it saw.
type readingReconciler struct {
	r    federation.Reader
	seen chan string
}

func (rr *readingReconciler) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	cm, err := rr.r.Get(ctx, configMaps, key.Namespace, key.Name)
	if err != nil {
		return federation.Result{}, err
	}
	secret, err := rr.r.Get(ctx, secrets, "default", "creds")
	if err != nil {
		return federation.Result{}, err
	}
	if _, err := rr.r.List(ctx, nodes, "", metav1.ListOptions{}); err != nil {
		return federation.Result{}, err
	}
	if _, err := rr.r.Get(ctx, volumes, "", "missing"); !apierrors.IsNotFound(err) {
		return federation.Result{}, err
	}
	data, _, _ := unstructured.NestedString(secret.Object, "data", "token")
	rr.seen <- cm.GetName() + " token=" + data
	return federation.Result{}, nil
}

// TestReader checks which reads the loop's Reader serves from its caches: within Run, the
// sources that hold whole objects (no Transform, no LabelSelector); the rest, and everything
// outside Run, through the host.
func TestReader(t *testing.T) {
	ctx := context.Background()
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "a"))
	secret := object("Secret", "default", "creds", nil)
	secret.Object["data"] = map[string]any{"token": "c2VjcmV0"}
	create(t, host, secrets, secret)
	create(t, host, nodes, object("Node", "", "n1", map[string]string{"role": "worker"}))
	l := newLoop(t, host, []loop.Source{
		{GVR: configMaps},
		{GVR: secrets, Namespace: "default", Transform: func(u *unstructured.Unstructured) { delete(u.Object, "data") }},
		{GVR: nodes, LabelSelector: "role=worker"},
		{GVR: volumes},
	}, loop.Options{})

	// Outside Run: the host.
	host.ClearActions()
	_, err := l.Reader().Get(ctx, configMaps, "default", "a")
	require.NoError(t, err)
	require.Len(t, host.Actions(), 1)
	host.ClearActions()

	rr := &readingReconciler{r: l.Reader(), seen: make(chan string, 10)}
	stop := start(t, l, rr)
	defer stop()
	require.Equal(t, "a token=c2VjcmV0", <-rr.seen, "the Secret comes whole, from the host")
	var reads []string
	for _, a := range host.Actions() {
		switch a.Verb {
		case fake.VerbGet:
			reads = append(reads, a.String())
		case fake.VerbList:
			reads = append(reads, a.String()+" selector="+a.ListOptions.LabelSelector)
		}
	}
	slices.Sort(reads)
	// One List per informer; then the reconciler's reads that no cache can serve: the whole
	// Secret, and Nodes without the informer's selector. Its Get of the ConfigMap, and of a
	// PersistentVolume that does not exist, cost nothing.
	want := []string{
		"get v1/secrets default/creds",
		"list v1/configmaps selector=",
		"list v1/nodes selector=",
		"list v1/nodes selector=role=worker",
		"list v1/persistentvolumes selector=",
		"list v1/secrets default/ selector=",
	}
	if diff := cmp.Diff(want, reads); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
}

func TestReaderList(t *testing.T) {
	host := fake.NewCluster("host")
	for _, o := range []struct{ ns, name, app string }{{"default", "web", "web"}, {"default", "db", "db"}, {"kube-system", "web", "web"}} {
		create(t, host, configMaps, object("ConfigMap", o.ns, o.name, map[string]string{"app": o.app}))
	}
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{})
	lists := make(chan []string, 5)
	stop := start(t, l, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
		if key.String() != "default/db" {
			return federation.Result{}, nil
		}
		for _, tt := range []struct {
			ns   string
			opts metav1.ListOptions
		}{
			{"", metav1.ListOptions{}},
			{"default", metav1.ListOptions{}},
			{"", metav1.ListOptions{LabelSelector: "app notin (db)"}},
			{"", metav1.ListOptions{FieldSelector: "metadata.namespace=default,metadata.name=web"}},
		} {
			list, err := l.Reader().List(ctx, configMaps, tt.ns, tt.opts)
			if err != nil {
				return federation.Result{}, err
			}
			var got []string
			for _, u := range list.Items {
				got = append(got, u.GetNamespace()+"/"+u.GetName())
			}
			lists <- got
		}
		_, err := l.Reader().List(ctx, configMaps, "", metav1.ListOptions{LabelSelector: "app in in"})
		if !apierrors.IsBadRequest(err) {
			lists <- []string{"bad selector: " + err.Error()}
		}
		return federation.Result{}, nil
	}))
	defer stop()
	for _, want := range [][]string{
		{"default/db", "default/web", "kube-system/web"},
		{"default/db", "default/web"},
		{"default/web", "kube-system/web"},
		{"default/web"},
	} {
		if diff := cmp.Diff(want, <-lists); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}
	}
}

func TestClusterChanged(t *testing.T) {
	const base = `{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: eu, labels: {tier: prod}},
	  spec: {apiEndpoint: "https://eu.example.com"},
	  status: {lastHeartbeatTime: "2026-11-29T00:00:00Z", available: {cpu: "8"},
	    conditions: [{type: Ready, status: "True", reason: Ok, message: ok, lastTransitionTime: "2026-11-29T00:00:00Z"}]}}`
	tests := []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"nothing", func(*unstructured.Unstructured) {}, false},
		{"heartbeat", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "2026-11-29T00:00:30Z", "status", "lastHeartbeatTime")
		}, false},
		{"condition message and time", func(u *unstructured.Unstructured) {
			c := u.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
			c["message"], c["lastTransitionTime"] = "still ok", "2026-11-29T00:00:30Z"
		}, false},
		{"condition status", func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["status"] = "False"
		}, true},
		{"available", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "4", "status", "available", "cpu")
		}, true},
		{"labels", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"tier": "dev"}) }, true},
		{"spec", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "us-east-1", "spec", "region")
		}, true},
		{"deletion", func(u *unstructured.Unstructured) { now := metav1.Now(); u.SetDeletionTimestamp(&now) }, true},
		{"annotations", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"note": "x"}) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(base), &old.Object))
			changed := old.DeepCopy()
			tt.change(changed)
			if got := loop.ClusterChanged(old, changed); got != tt.want {
				t.Errorf("ClusterChanged() = %v; want %v", got, tt.want)
			}
		})
	}
}

// A pass still running when Run's context is cancelled reads from the caches to its end,
// not from the host (Run used to drop its caches before its workers had returned; the
// scheduler's TestRunClusterChangeReadsNothing saw the stray List).
func TestReaderDuringShutdown(t *testing.T) {
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "a"))
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{})
	inPass, read := make(chan struct{}), make(chan error, 1)
	r := loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
		close(inPass)
		<-ctx.Done()                      // Run is stopping
		time.Sleep(10 * time.Millisecond) // room for a Run that drops its caches at once to do so
		_, err := l.Reader().List(context.Background(), configMaps, "", metav1.ListOptions{})
		read <- err
		return federation.Result{}, nil
	})
	stop := start(t, l, r)
	<-inPass
	host.ClearActions()
	stop()
	require.NoError(t, <-read)
	for _, a := range host.Actions() {
		require.NotEqual(t, fake.VerbList, a.Verb, "the pass listed through the host: %s", a)
	}
}
