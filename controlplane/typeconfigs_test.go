package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestTypeConfigsStartAndStopLoops: with Options.TypeConfigs, a FederatedTypeConfig created
// while the control plane runs starts its type's loops (a FederatedWidget propagates and is
// judged Ready by its rule), a change of its rules restarts them, a change to rules that do
// not compile keeps the last valid configuration running and says so on the configuration,
// and its deletion stops them, leaving the member widgets as they are. No restart of the
// process in between.
func TestTypeConfigsStartAndStopLoops(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eu := widgets(t, e)
	typ := fedtest.WidgetType

	o := e.options(federation.ConfigMapType)
	o.TypeConfigs = true
	o.Disable.DNS, o.Disable.Propagation = true, true
	// Metrics, as fedkit-controller-manager has them: a type's loops restarted register
	// theirs again.
	o.Registerer = prometheus.NewRegistry()
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	stepUntil(t, e.clock, time.Second, "the typeconfigs loop runs", func() bool { return states(cp)[controlplane.TypeConfigsLoop] == controlplane.StateRunning })

	ftc := federation.NewFederatedTypeConfig(typ)
	ftc.Spec.Rules = &federation.KindRules{Ready: "has(self.status) && self.status.phase == 'Running'"}
	apply := func() {
		t.Helper()
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ftc)
		require.NoError(t, err)
		delete(obj, "status")
		fedtest.Apply(t, e.host, federation.FederatedTypeConfigGVR, mustYAML(t, obj))
	}
	apply()
	stepUntil(t, e.clock, time.Second, "FederatedWidget's loops run", func() bool {
		s := states(cp)
		return s["scheduler/FederatedWidget"] == controlplane.StateRunning && s["sync/FederatedWidget"] == controlplane.StateRunning && s["status/FederatedWidget"] == controlplane.StateRunning
	})
	readyOf := func() *metaCondition {
		got, err := e.host.Get(ctx, federation.FederatedTypeConfigGVR, "", "widgets.example.com")
		require.NoError(t, err)
		var c federation.FederatedTypeConfig
		require.NoError(t, federation.FromUnstructured(got, &c))
		if r := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady); r != nil {
			return &metaCondition{string(r.Status), r.Reason, r.Message}
		}
		return nil
	}
	stepUntil(t, e.clock, time.Second, "the configuration is Ready", func() bool { r := readyOf(); return r != nil && r.status == "True" })

	fedtest.Create(t, e.host, typ.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedWidget, metadata: {name: w, namespace: shop},
  spec: {template: {spec: {replicas: 1, color: blue}}, placement: {clusters: [{name: eu}]}}}`)
	stepUntil(t, e.clock, time.Second, "the widget in eu", func() bool {
		_, err := eu.Get(ctx, typ.TargetGVR(), "shop", "w")
		return err == nil
	})
	w, err := eu.Get(ctx, typ.TargetGVR(), "shop", "w")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(w.Object, "Running", "status", "phase"))
	_, err = eu.UpdateStatus(ctx, typ.TargetGVR(), w)
	require.NoError(t, err)
	fedReady := func() string {
		got, err := e.host.Get(ctx, typ.FederatedGVR(), "shop", "w")
		require.NoError(t, err)
		f, err := federation.FederatedObjectFromUnstructured(got)
		require.NoError(t, err)
		if r := meta.FindStatusCondition(f.Status.Conditions, federation.ConditionReady); r != nil {
			return string(r.Status) + " " + r.Message
		}
		return ""
	}
	stepUntil(t, e.clock, time.Second, "the FederatedWidget is Ready by its rule", func() bool { return strings.HasPrefix(fedReady(), "True") })

	// A rule that asks more: the loops restart with it, and the widget is judged by it.
	ftc.Spec.Rules.Ready = "has(self.status) && self.status.phase == 'Running' && has(self.status.healthy) && self.status.healthy"
	ftc.Spec.Rules.Message = "'not healthy yet'"
	apply()
	stepUntilf(t, e.clock, time.Second, func() string { return "Ready False by the new rule; got " + fedReady() }, func() bool { return fedReady() == "False not ready: eu: not healthy yet" })

	// A rule that fails on the member widget (it reads a field the widget lacks): the widget
	// is judged not ready with the rule's error, never by a guess.
	ftc.Spec.Rules.Ready = "has(self.status) && self.status.phase == 'Running'"
	ftc.Spec.Rules.Message = ""
	apply()
	stepUntil(t, e.clock, time.Second, "Ready again by the mended rule", func() bool { return strings.HasPrefix(fedReady(), "True") })
	ftc.Spec.Rules.ReadyReplicas = "self.status.spares"
	apply()
	stepUntilf(t, e.clock, time.Second, func() string { return "Ready False by the failing rule; got " + fedReady() }, func() bool {
		return strings.HasPrefix(fedReady(), "False") && strings.Contains(fedReady(), "spec.rules.readyReplicas")
	})
	ftc.Spec.Rules.ReadyReplicas = ""

	// Rules that do not compile: the last valid configuration keeps running, and says so.
	ftc.Spec.Rules.Ready = "self.status.phase =="
	apply()
	stepUntil(t, e.clock, time.Second, "InvalidRules on the configuration", func() bool {
		r := readyOf()
		return r != nil && r.reason == controlplane.ReasonInvalidRules && strings.Contains(r.message, "spec.rules.ready") && strings.Contains(r.message, "still runs")
	})
	require.Equal(t, controlplane.StateRunning, states(cp)["sync/FederatedWidget"])

	// Deleted: the loops stop; the member widget stays as it was.
	before, err := eu.Get(ctx, typ.TargetGVR(), "shop", "w")
	require.NoError(t, err)
	require.NoError(t, e.host.Delete(ctx, federation.FederatedTypeConfigGVR, "", "widgets.example.com", metav1.DeleteOptions{}))
	stepUntil(t, e.clock, time.Second, "FederatedWidget's loops gone", func() bool {
		_, ok := states(cp)["sync/FederatedWidget"]
		return !ok
	})
	after, err := eu.Get(ctx, typ.TargetGVR(), "shop", "w")
	require.NoError(t, err)
	require.Equal(t, before.GetResourceVersion(), after.GetResourceVersion(), "the member widget was written after its type was disabled")
	require.Equal(t, controlplane.StateRunning, states(cp)["sync/FederatedConfigMap"], "the control plane's own types keep running")
}

// TestTypeConfigConflicts: a configuration of a kind Options.Types federates runs nothing and
// says why.
func TestTypeConfigConflicts(t *testing.T) {
	e := newEnv(t)
	o := e.options(federation.ConfigMapType)
	o.TypeConfigs = true
	o.Disable.DNS, o.Disable.Propagation = true, true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(federation.NewFederatedTypeConfig(federation.ConfigMapType))
	require.NoError(t, err)
	delete(obj, "status")
	fedtest.Apply(t, e.host, federation.FederatedTypeConfigGVR, mustYAML(t, obj))
	stepUntil(t, e.clock, time.Second, "Conflict on the configuration", func() bool {
		got, err := e.host.Get(context.Background(), federation.FederatedTypeConfigGVR, "", "configmaps")
		require.NoError(t, err)
		var c federation.FederatedTypeConfig
		require.NoError(t, federation.FromUnstructured(got, &c))
		r := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady)
		return r != nil && r.Reason == controlplane.ReasonTypeConflict
	})
	n := 0
	for _, l := range cp.Status() {
		if l.Name == "sync/FederatedConfigMap" {
			n++
		}
	}
	require.Equal(t, 1, n, "one sync loop for FederatedConfigMap")
}

// widgets installs the Widget CRD in the host and the members, the namespace shop in each,
// and the FederatedWidget CRD on the host; it returns the member eu.
func widgets(t *testing.T, e *env) *fake.Cluster {
	t.Helper()
	eu, _ := e.fleet.Member("eu")
	us, _ := e.fleet.Member("us")
	fedtest.InstallWidgets(t, e.host, eu, us)
	for _, c := range []federation.ClusterClient{e.host, eu, us} {
		fedtest.Create(t, c, federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	}
	crd, err := federation.CRDFor(fedtest.WidgetType)
	require.NoError(t, err)
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	_, err = e.host.Create(context.Background(), crdGVR, &unstructured.Unstructured{Object: u})
	require.NoError(t, err)
	return eu
}

type metaCondition struct{ status, reason, message string }

func mustYAML(t *testing.T, obj map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(obj)
	require.NoError(t, err)
	return string(data)
}

// TestTypeConfigWithBadRulesFromTheStart: rules that do not compile, with no configuration
// before, still run the type's loops, and the objects say the error: a FederatedWidget
// propagates, its Ready condition is False naming the rule, as is the configuration's.
func TestTypeConfigWithBadRulesFromTheStart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eu := widgets(t, e)
	typ := fedtest.WidgetType
	ftc := federation.NewFederatedTypeConfig(typ)
	ftc.Spec.Rules = &federation.KindRules{Ready: "self.status.phase =="}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ftc)
	require.NoError(t, err)
	delete(obj, "status")
	fedtest.Apply(t, e.host, federation.FederatedTypeConfigGVR, mustYAML(t, obj))
	fedtest.Create(t, e.host, typ.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedWidget, metadata: {name: w, namespace: shop},
  spec: {template: {spec: {replicas: 1, color: blue}}, placement: {clusters: [{name: eu}]}}}`)

	o := e.options()
	o.TypeConfigs = true
	o.Disable.DNS, o.Disable.Propagation = true, true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	ready := func() string {
		got, err := e.host.Get(ctx, typ.FederatedGVR(), "shop", "w")
		require.NoError(t, err)
		f, err := federation.FederatedObjectFromUnstructured(got)
		require.NoError(t, err)
		if r := meta.FindStatusCondition(f.Status.Conditions, federation.ConditionReady); r != nil {
			return string(r.Status) + " " + r.Message
		}
		return ""
	}
	stepUntilf(t, e.clock, time.Second, func() string { return "the object says the rule does not compile; got " + ready() }, func() bool {
		r := ready()
		return strings.HasPrefix(r, "False") && strings.Contains(r, "invalid rules") && strings.Contains(r, "spec.rules.ready")
	})
	_, err = eu.Get(ctx, typ.TargetGVR(), "shop", "w")
	require.NoError(t, err, "sync propagated the widget")
	got, err := e.host.Get(ctx, federation.FederatedTypeConfigGVR, "", "widgets.example.com")
	require.NoError(t, err)
	var c federation.FederatedTypeConfig
	require.NoError(t, federation.FromUnstructured(got, &c))
	r := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady)
	require.NotNil(t, r)
	require.Equal(t, controlplane.ReasonInvalidRules, r.Reason)
}

// TestConfiguredTypeDependencies: a kind a FederatedTypeConfig configures while the control
// plane runs, with a dependency rule, has its dependencies follow it as a built-in workload's
// do: the ConfigMap a FederatedWidget's spec.configRef names reaches the widget's cluster
// only. Deleting the configuration takes the kind out of the dependencies loop again.
func TestConfiguredTypeDependencies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eu := widgets(t, e)
	us, _ := e.fleet.Member("us")
	typ := fedtest.WidgetType

	o := e.options(federation.ConfigMapType)
	o.TypeConfigs = true
	o.Disable.DNS, o.Disable.Propagation = true, true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()

	ftc := federation.NewFederatedTypeConfig(typ)
	ftc.Spec.Rules = &federation.KindRules{Dependencies: []federation.DependencyRule{
		{Kind: "ConfigMap", Names: "has(self.spec.configRef) ? [self.spec.configRef] : []"},
	}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ftc)
	require.NoError(t, err)
	delete(obj, "status")
	fedtest.Apply(t, e.host, federation.FederatedTypeConfigGVR, mustYAML(t, obj))
	stepUntil(t, e.clock, time.Second, "FederatedWidget's sync runs", func() bool {
		return states(cp)["sync/FederatedWidget"] == controlplane.StateRunning
	})

	fedtest.Create(t, e.host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: paint, namespace: shop}, data: {color: blue}}`)
	fedtest.Create(t, e.host, typ.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedWidget, metadata: {name: w, namespace: shop},
  spec: {propagateDependencies: true, template: {spec: {replicas: 1, color: blue, configRef: paint}}, placement: {clusters: [{name: eu}]}}}`)
	stepUntil(t, e.clock, time.Second, "the widget's ConfigMap in eu", func() bool {
		_, err := eu.Get(ctx, federation.ConfigMapType.TargetGVR(), "shop", "paint")
		return err == nil
	})
	_, err = us.Get(ctx, federation.ConfigMapType.TargetGVR(), "shop", "paint")
	require.Error(t, err, "the ConfigMap reached us, where no widget is placed")

	// Disabled: the type leaves the dependencies loop, and what runs in eu stays as it is,
	// the ConfigMap the widget still uses included.
	require.NoError(t, e.host.Delete(ctx, federation.FederatedTypeConfigGVR, "", "widgets.example.com", metav1.DeleteOptions{}))
	stepUntil(t, e.clock, time.Second, "FederatedWidget's loops gone", func() bool {
		_, ok := states(cp)["sync/FederatedWidget"]
		return !ok
	})
	for range 120 {
		e.clock.Step(time.Second)
		time.Sleep(time.Millisecond)
	}
	_, err = eu.Get(ctx, federation.ConfigMapType.TargetGVR(), "shop", "paint")
	require.NoError(t, err, "disabling the widget type deleted the ConfigMap its member widget uses")
	_, err = eu.Get(ctx, typ.TargetGVR(), "shop", "w")
	require.NoError(t, err)
}
