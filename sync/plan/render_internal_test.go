package plan

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// TestInputKeysShareEqualKeys: the render input keys sync remembers per member object (see
// verification) are one string for the clusters whose inputs are equal, so an object placed
// on many alike clusters does not keep a copy of the same key per cluster.
func TestInputKeysShareEqualKeys(t *testing.T) {
	one, two := int64(1), int64(2)
	in := Input{
		Object:   &federation.FederatedObject{ObjectMeta: metav1.ObjectMeta{UID: "u1", Generation: 3}},
		Revision: 2,
		Clusters: []federation.Cluster{
			{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"zone": "x"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "d"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "e"}},
		},
	}
	targets := Targets{Replicas: map[string]*int64{"a": &one, "b": &one, "c": &one, "d": &two}}
	got := inputKeys(in, nil, targets)
	want := map[string]string{
		"a": "u1/3/2/" + federation.ManagedByValue + "/1",
		"b": "u1/3/2/" + federation.ManagedByValue + "/1",
		"c": "u1/3/2/" + federation.ManagedByValue + "/1/zone=x",
		"d": "u1/3/2/" + federation.ManagedByValue + "/2",
		"e": "u1/3/2/" + federation.ManagedByValue + "/-",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("inputKeys (-want +got):\n%s", diff)
	}
	if unsafe.StringData(got["a"]) != unsafe.StringData(got["b"]) {
		t.Error("clusters a and b have equal input keys held as two strings")
	}
	if unsafe.StringData(got["a"]) == unsafe.StringData(got["d"]) {
		t.Error("clusters a and d have different keys but one string")
	}
}
