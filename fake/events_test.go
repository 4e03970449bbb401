package fake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

func TestRecorder(t *testing.T) {
	var r fake.Recorder
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("types.federation.k8s.io/v1alpha1")
	obj.SetKind("FederatedDeployment")
	obj.SetNamespace("prod")
	obj.SetName("web")
	r.Eventf(obj, federation.EventTypeWarning, "Unschedulable", "%d replicas fit nowhere", 3)
	r.Eventf(nil, federation.EventTypeNormal, "Nothing", "no object")
	want := []fake.Event{
		{Kind: "FederatedDeployment", Namespace: "prod", Name: "web", Type: "Warning", Reason: "Unschedulable", Message: "3 replicas fit nowhere"},
		{Type: "Normal", Reason: "Nothing", Message: "no object"},
	}
	if diff := cmp.Diff(want, r.Events()); diff != "" {
		t.Errorf("Events() (-want +got):\n%s", diff)
	}
	if got, want := r.Events()[0].String(), "Warning FederatedDeployment prod/web Unschedulable: 3 replicas fit nowhere"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	r.Reset()
	if got := r.Events(); len(got) != 0 {
		t.Errorf("Events() after Reset = %v; want none", got)
	}
}
