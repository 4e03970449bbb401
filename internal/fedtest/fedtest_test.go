package fedtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// fatal records a failure instead of ending the test, so a test can see a helper fail.
type fatal struct {
	testing.TB
	msg string
}

func (f *fatal) Helper()                        {}
func (f *fatal) Fatalf(format string, a ...any) { f.msg = fmt.Sprintf(format, a...) }

func TestNewRegistersMembersAndNamespaces(t *testing.T) {
	e := fedtest.New(t, fedtest.Options{
		Members:    []fedtest.Member{{Name: "eu", Labels: map[string]string{federation.RegionLabel: "europe-west1"}}, {Name: "us"}},
		Namespaces: []string{"shop"},
	})
	if diff := cmp.Diff([]string{"eu", "us"}, e.Fleet.Names()); diff != "" {
		t.Errorf("fleet (-want +got):\n%s", diff)
	}
	eu, err := e.Host.Peek(federation.ClusterGVR, "", "eu")
	if err != nil {
		t.Fatal(err)
	}
	if got := eu.GetLabels()[federation.RegionLabel]; got != "europe-west1" {
		t.Errorf("Cluster eu's region label = %q; want europe-west1", got)
	}
	if _, err := e.Host.Peek(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "shop"); err != nil {
		t.Errorf("namespace shop: %v", err)
	}
	if !e.Clock.Now().Equal(fedtest.Epoch) {
		t.Errorf("clock starts at %s; want %s", e.Clock.Now(), fedtest.Epoch)
	}
}

func TestCreateAndApply(t *testing.T) {
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"shop"}})
	fedtest.Create(t, e.Host, configMaps, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop, annotations: {a: "1"}}}`)
	// Created again: left as it is.
	fedtest.Create(t, e.Host, configMaps, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop, labels: {team: web}}}`)
	got, err := e.Host.Peek(configMaps, "shop", "c")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetLabels() != nil {
		t.Errorf("a second Create changed the object: labels %v", got.GetLabels())
	}
	// Apply replaces labels and adds annotations.
	fedtest.Apply(t, e.Host, configMaps, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop, labels: {team: web}, annotations: {b: "2"}}}`)
	got, err = e.Host.Peek(configMaps, "shop", "c")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "web"}, got.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "2"}, got.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	f := &fatal{TB: t}
	fedtest.Create(f, e.Host, configMaps, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: missing}}`)
	if f.msg == "" {
		t.Error("Create into a missing namespace did not fail the test")
	}
}

func TestStepUntil(t *testing.T) {
	e := fedtest.New(t, fedtest.Options{})
	until := fedtest.Epoch.Add(5 * time.Second)
	fedtest.StepUntil(t, e.Clock.Step, time.Second, 10, func() string { return "five seconds" }, func() bool { return !e.Clock.Now().Before(until) })
	if !e.Clock.Now().Equal(until) {
		t.Errorf("clock at %s; want %s (no step past the condition)", e.Clock.Now(), until)
	}
	f := &fatal{TB: t}
	fedtest.StepUntil(f, e.Clock.Step, time.Second, 3, func() string { return "never" }, func() bool { return false })
	if want := "never: not after 3 steps of 1s"; f.msg != want {
		t.Errorf("failure %q; want %q", f.msg, want)
	}
	if got, want := e.Clock.Now(), until.Add(3*time.Second); !got.Equal(want) {
		t.Errorf("clock at %s; want %s", got, want)
	}
}

func TestEventually(t *testing.T) {
	n := 0
	fedtest.Eventually(t, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times; want 3", n)
	}
}
