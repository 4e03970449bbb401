// Package credentials_test runs every loop over members reached through federation/kube's
// ClusterSet, each member failing in its own way (unreachable, not TLS, an untrusted
// certificate, 401, 403, a member that echoes what it was sent, credentials that do not
// parse), with a recognisable token in every member's Secret. It captures every log line
// (the loops', the ClusterSet's and client-go's), every event, everything written to the host
// and every error the loops return, and requires the token to appear in none of them.
package credentials_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// capture is everything the control plane said: log lines, events, returned errors.
type capture struct {
	mu    sync.Mutex
	lines []string
}

func (c *capture) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, s)
}

func (c *capture) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// verbosity is the most detailed level captured: every level fedkit's loops use (V(1) for
// their chatter). client-go's own debugging, from V(5) up, dumps whatever the server answers
// (V(8): whole response bodies), which a server that echoes the request's Authorization
// header fills with the token: that is client-go's, outside fedkit's reach, and an operator
// runs at those levels knowingly.
const verbosity = 4

// logger logs everything up to verbosity into c.
func (c *capture) logger() logr.Logger {
	return funcr.New(func(prefix, args string) { c.add("log: " + prefix + " " + args) }, funcr.Options{Verbosity: verbosity})
}

// Eventf records an event: capture is every loop's EventRecorder.
func (c *capture) Eventf(_ runtime.Object, typ, reason, format string, args ...any) {
	c.add(fmt.Sprintf("event: %s %s: %s", typ, reason, fmt.Sprintf(format, args...)))
}

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

func TestTokensNeverLeak(t *testing.T) {
	raw := make([]byte, 12)
	_, err := rand.Read(raw)
	require.NoError(t, err)
	token := "fedkit-canary-" + hex.EncodeToString(raw)
	// The forms the token may take on its way out.
	forms := []string{token, base64.StdEncoding.EncodeToString([]byte(token)), hex.EncodeToString(raw)}

	got := &capture{}
	klog.SetLogger(got.logger().WithName("klog")) // client-go's own logs (reflectors, warnings)
	t.Cleanup(klog.ClearLogger)
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), got.logger()))
	defer cancel()

	host := fake.NewHost("host")
	clk := clocktesting.NewFakeClock(time.Now())
	host.SetClock(clk)
	crds, err := dnsrecord.CRDs()
	require.NoError(t, err)
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		_, err = host.Create(ctx, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, &unstructured.Unstructured{Object: m})
		require.NoError(t, err)
	}
	for _, ns := range []string{"fedkit-system", "shop"} {
		require.NoError(t, host.Seed(obj(t, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)))
	}
	members := failures(t, token)
	var names []string
	for _, f := range members {
		names = append(names, f.name)
		data := map[string]any{"token": base64.StdEncoding.EncodeToString([]byte(token))}
		if f.secret != nil {
			data = map[string]any{}
			for k, v := range f.secret {
				data[k] = base64.StdEncoding.EncodeToString([]byte(v))
			}
		}
		require.NoError(t, host.Seed(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "data": data, "metadata": map[string]any{"name": f.name, "namespace": "fedkit-system",
				"labels": map[string]any{federation.SecretClusterLabel: f.name}},
		}}))
		c := federation.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: f.name},
			Spec: federation.ClusterSpec{APIEndpoint: f.endpoint, CABundle: f.caBundle,
				SecretRef: &federation.LocalSecretReference{Name: f.name}},
			Status: federation.ClusterStatus{Conditions: []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue,
				Reason: "ClusterReady", Message: "registered", LastTransitionTime: metav1.NewTime(clk.Now())}}},
		}
		c.APIVersion, c.Kind = federation.ClusterGVK.ToAPIVersionAndKind()
		u, err := federation.ToUnstructured(&c)
		require.NoError(t, err)
		require.NoError(t, host.Seed(u))
	}
	for _, doc := range []string{
		`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment, metadata: {name: web, namespace: shop},
		  spec: {placement: {clusterSelector: {}}, template: {spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}}}}`,
		`{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference, metadata: {name: web, namespace: shop}, spec: {targetKind: FederatedDeployment, totalReplicas: 6}}`,
		`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedService, metadata: {name: web, namespace: shop},
		  spec: {placement: {clusterSelector: {}}, template: {spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}}}}`,
		`{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain, metadata: {name: shop, namespace: fedkit-system}, domain: shop.example.com}`,
		`{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: ServiceDNSRecord, metadata: {name: web, namespace: shop}, spec: {domainRef: shop}}`,
	} {
		require.NoError(t, host.Seed(obj(t, doc)))
	}

	// Every loop, every logger and event recorder capturing, metrics registered.
	reg := prometheus.NewRegistry()
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Logger: got.logger().WithName("clusterset"), Client: kube.Options{DiscoveryTimeout: 2 * time.Second}})
	require.NoError(t, err)
	log := got.logger()
	monitor, err := status.NewClusterMonitor(host, set, status.MonitorOptions{Clock: clk, Logger: log, Registerer: reg})
	require.NoError(t, err)
	type loop interface {
		Reconcile(context.Context, federation.Key) (federation.Result, error)
	}
	var loops []struct {
		name string
		l    loop
		gvr  schema.GroupVersionResource
	}
	add := func(name string, l loop, gvr schema.GroupVersionResource) {
		loops = append(loops, struct {
			name string
			l    loop
			gvr  schema.GroupVersionResource
		}{name, l, gvr})
	}
	for _, typ := range []federation.TypeConfig{federation.DeploymentType, federation.ServiceType} {
		s, err := scheduler.New(host, typ, scheduler.Options{Clock: clk, Logger: log, Registerer: reg})
		require.NoError(t, err)
		y, err := fedsync.New(host, set, typ, fedsync.Options{Clock: clk, Logger: log, Registerer: reg, Events: got, ClusterQPS: -1})
		require.NoError(t, err)
		c, err := status.New(host, set, typ, status.Options{Clock: clk, Logger: log, Registerer: reg})
		require.NoError(t, err)
		add("scheduler", s, typ.FederatedGVR())
		add("sync", y, typ.FederatedGVR())
		add("status", c, typ.FederatedGVR())
	}
	dns, err := dnsrecord.New(host, set, dnsrecord.Options{Clock: clk, Logger: log, Registerer: reg})
	require.NoError(t, err)
	add("dns", dns, dnsrecord.ServiceDNSRecordGVR)

	// The ClusterSet's Run builds the clients and runs the member caches (client-go
	// informers against the failing members): that is where client-go logs.
	setDone := make(chan error, 1)
	go func() { setDone <- set.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-setDone)
	}()
	call := func(name string, f func(context.Context) error) {
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		defer ccancel()
		began := time.Now()
		err := f(cctx)
		if d := time.Since(began); d > time.Second {
			t.Logf("%s took %s", name, d)
		}
		if err != nil {
			got.add(fmt.Sprintf("error: %s: %v", name, err))
			got.add(fmt.Sprintf("error: %s: %+v", name, err))
			got.add(fmt.Sprintf("error: %s: %#v", name, err))
		}
	}
	for round := range 5 {
		for _, n := range names {
			key := federation.Key{Name: n}
			call("clusterset "+n, func(ctx context.Context) error { _, err := set.Reconcile(ctx, key); return err })
			call("monitor "+n, func(ctx context.Context) error { _, err := monitor.Reconcile(ctx, key); return err })
		}
		for _, l := range loops {
			for _, u := range host.Objects(l.gvr) {
				key := federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
				call(l.name+" "+key.String(), func(ctx context.Context) error { _, err := l.l.Reconcile(ctx, key); return err })
			}
		}
		clk.Step(20 * time.Second)
		t.Logf("round %d: %d lines captured", round, len(got.all()))
	}

	// Everything the host holds now: statuses, conditions, events the loops wrote there.
	for _, gvr := range []schema.GroupVersionResource{
		federation.ClusterGVR, federation.DeploymentType.FederatedGVR(), federation.ServiceType.FederatedGVR(),
		dnsrecord.ServiceDNSRecordGVR, dnsrecord.DNSEndpointGVR, federation.ReplicaSchedulingPreferenceGVR,
		{Version: "v1", Resource: "events"}, {Group: "apps", Version: "v1", Resource: "controllerrevisions"},
	} {
		for _, u := range host.Objects(gvr) {
			data, err := json.Marshal(u.Object)
			require.NoError(t, err)
			got.add("host: " + gvr.Resource + " " + string(data))
		}
	}
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var metrics strings.Builder
	for _, mf := range mfs {
		_, _ = expfmt.MetricFamilyToText(&metrics, mf)
	}
	got.add("metrics: " + metrics.String())

	lines := got.all()
	require.Greater(t, len(lines), 50, "the control plane said next to nothing: the test would prove nothing")
	saw := map[string]bool{}
	for _, line := range lines {
		for _, n := range names {
			if strings.Contains(line, `"`+n+`"`) || strings.Contains(line, "cluster "+n) {
				saw[n] = true
			}
		}
		for _, form := range forms {
			if strings.Contains(line, form) {
				t.Errorf("the token leaked:\n%.2000s", line)
			}
		}
	}
	for _, n := range names {
		require.True(t, saw[n], "nothing was said about member %s: its failure was not exercised", n)
	}
}
