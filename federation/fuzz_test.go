package federation_test

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
)

// FuzzValidate feeds arbitrary JSON, as a federated object, a Cluster and a
// ReplicaSchedulingPreference, through the conversion from unstructured and the validation
// every loop runs before acting: nothing panics, a conversion failure wraps
// ErrInvalidObject, and every validation error names a field path under the object's spec
// or metadata, the same on a second call.
//
//	go test ./federation -run '^$' -fuzz FuzzValidate -fuzztime 60s
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{"template":{"spec":{"replicas":6}},"placement":{"clusters":[{"name":"a"},{"name":"b"}]},"overrides":[{"clusterName":"b","clusterOverrides":[{"path":"/spec/replicas","value":4}]}]}`,
		`{"template":{"spec":{"replicas":-1}},"placement":{"clusterSelector":{"matchExpressions":[{"key":"r","operator":"Near"}]}}}`,
		`{"template":"x","placement":{"clusters":[{"name":""},{"name":""}]},"overrides":[{"clusterName":"","clusterOverrides":[{"op":"move","path":"spec"}]}]}`,
		`{"apiEndpoint":"https://user:secret@example.com:6443","secretRef":{"name":"s"},"region":"us","zones":["a","a"],"taints":[{"key":"k","effect":"Never"}]}`,
		`{"targetKind":"FederatedDeployment","totalReplicas":9,"clusters":{"*":{"weight":1},"a":{"minReplicas":2,"maxReplicas":1,"weight":-2}}}`,
		`{"rebalancePeriod":"-5m","totalReplicas":1e30}`,
		`[1,2,3]`,
		`{"template":{"metadata":{"namespace":"other","name":"x"},"spec":{"replicas":"six"}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		var v any
		if utiljson.Unmarshal([]byte(spec), &v) != nil {
			return
		}
		obj := func(kind string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1alpha1", "kind": kind,
				"metadata": map[string]any{"name": "x", "namespace": "default"},
				"spec":     v,
			}}
		}
		if fed, err := federation.FederatedObjectFromUnstructured(obj("FederatedDeployment")); err != nil {
			requireInvalid(t, err)
		} else {
			checkErrors(t, "FederatedObject", federation.ValidateFederatedObject(fed), func() field.ErrorList { return federation.ValidateFederatedObject(fed) })
		}
		if c, err := federation.ClusterFromUnstructured(obj("Cluster")); err != nil {
			requireInvalid(t, err)
		} else {
			checkErrors(t, "Cluster", federation.ValidateCluster(c), func() field.ErrorList { return federation.ValidateCluster(c) })
		}
		if rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(obj("ReplicaSchedulingPreference")); err != nil {
			requireInvalid(t, err)
		} else {
			checkErrors(t, "ReplicaSchedulingPreference", federation.ValidateReplicaSchedulingPreference(rsp), func() field.ErrorList { return federation.ValidateReplicaSchedulingPreference(rsp) })
		}
	})
}

func requireInvalid(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, federation.ErrInvalidObject) {
		t.Fatalf("conversion error %v does not wrap ErrInvalidObject", err)
	}
}

// checkErrors: every error has a field path under spec or metadata, and validation is
// deterministic.
func checkErrors(t *testing.T, kind string, errs field.ErrorList, again func() field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		if e.Field == "" || (!hasPrefix(e.Field, "spec") && !hasPrefix(e.Field, "metadata")) {
			t.Fatalf("%s: error without a spec or metadata path: %v", kind, e)
		}
	}
	if second := again(); fmt.Sprint(second) != fmt.Sprint(errs) {
		t.Fatalf("%s: validation differs between two calls:\n%v\n%v", kind, errs, second)
	}
}

func hasPrefix(path, prefix string) bool {
	return path == prefix || len(path) > len(prefix) && path[:len(prefix)] == prefix && (path[len(prefix)] == '.' || path[len(prefix)] == '[')
}
