package federation_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// errorPaths reduces an ErrorList to "type path" strings, which is what the tests pin down.
func errorPaths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func decodeFederated(t *testing.T, spec string) *federation.FederatedObject {
	t.Helper()
	obj := &federation.FederatedObject{}
	require.NoError(t, yaml.UnmarshalStrict([]byte("spec:\n"+spec), obj))
	return obj
}

func TestValidateFederatedObject(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{name: "valid spec from the design", spec: `
  template: {spec: {replicas: 6}}
  placement: {clusters: [{name: a}, {name: b}]}
  overrides:
  - clusterName: b
    clusterOverrides: [{path: /spec/replicas, value: 4}]`},
		{name: "negative template replicas", spec: `
  template: {spec: {replicas: -1}}`, want: []string{"FieldValueInvalid spec.template.spec.replicas"}},
		{name: "cluster named twice in placement", spec: `
  placement: {clusters: [{name: a}, {name: a}, {name: ""}]}`,
			want: []string{"FieldValueDuplicate spec.placement.clusters[1].name", "FieldValueRequired spec.placement.clusters[2].name"}},
		{name: "invalid placement selector", spec: `
  placement: {clusterSelector: {matchExpressions: [{key: region, operator: Near}]}}`,
			want: []string{"FieldValueInvalid spec.placement.clusterSelector.matchExpressions[0].operator"}},
		{name: "cluster named twice in overrides", spec: `
  overrides:
  - {clusterName: a, clusterOverrides: [{path: /spec/replicas, value: 1}]}
  - {clusterName: a, clusterOverrides: [{path: /spec/paused, value: true}]}`,
			want: []string{"FieldValueDuplicate spec.overrides[1].clusterName"}},
		{name: "path twice for one cluster", spec: `
  overrides:
  - clusterName: a
    clusterOverrides: [{path: /spec/replicas, value: 1}, {op: add, path: /spec/replicas, value: 2}]`,
			want: []string{"FieldValueDuplicate spec.overrides[0].clusterOverrides[1].path"}},
		{name: "path not a JSON pointer", spec: `
  overrides:
  - clusterName: a
    clusterOverrides: [{path: spec.replicas, value: 1}, {path: "/a~2b", value: 1}, {path: "", op: remove}]`,
			want: []string{
				"FieldValueInvalid spec.overrides[0].clusterOverrides[0].path",
				"FieldValueInvalid spec.overrides[0].clusterOverrides[1].path",
				"FieldValueInvalid spec.overrides[0].clusterOverrides[2].path",
			}},
		{name: "unknown op", spec: `
  overrides:
  - clusterName: a
    clusterOverrides: [{op: move, path: /spec/replicas, value: 1}]`,
			want: []string{"FieldValueNotSupported spec.overrides[0].clusterOverrides[0].op"}},
		{name: "identity path", spec: `
  overrides:
  - clusterName: a
    clusterOverrides: [{path: /metadata/name, value: x}, {path: /kind, value: X}]`,
			want: []string{"FieldValueForbidden spec.overrides[0].clusterOverrides[0].path", "FieldValueForbidden spec.overrides[0].clusterOverrides[1].path"}},
		{name: "replace without value", spec: `
  overrides:
  - clusterName: a
    clusterOverrides: [{path: /spec/replicas}]`,
			want: []string{"FieldValueRequired spec.overrides[0].clusterOverrides[0].value"}},
		{name: "override entry without target", spec: `
  overrides:
  - clusterOverrides: [{op: remove, path: /spec/replicas}]`,
			want: []string{"FieldValueRequired spec.overrides[0].clusterName"}},
		{name: "invalid override selector", spec: `
  overrides:
  - clusterSelector: {matchLabels: {"bad key!": x}}
    clusterOverrides: [{op: remove, path: /spec/replicas}]`,
			want: []string{"FieldValueInvalid spec.overrides[0].clusterSelector.matchLabels[bad key!]"}},
		{name: "bad tolerations and spread", spec: `
  placement:
    tolerations: [{key: k, operator: Sometimes}, {key: k, effect: NoWay}]
    maxClusters: -1
    spreadConstraints: [{topologyKey: region, minGroups: 3, maxGroups: 2}, {topologyKey: ""}]`,
			want: []string{
				"FieldValueNotSupported spec.placement.tolerations[0].operator",
				"FieldValueNotSupported spec.placement.tolerations[1].effect",
				"FieldValueInvalid spec.placement.maxClusters",
				"FieldValueInvalid spec.placement.spreadConstraints[0].maxGroups",
				"FieldValueRequired spec.placement.spreadConstraints[1].topologyKey",
			}},
		{name: "tolerationSeconds only for NoExecute, never negative", spec: `
  placement:
    tolerations: [{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 10}, {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: -1}, {key: k, operator: Exists, tolerationSeconds: 0}, {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]`,
			want: []string{
				"FieldValueInvalid spec.placement.tolerations[0].tolerationSeconds",
				"FieldValueInvalid spec.placement.tolerations[1].tolerationSeconds",
			}},
		{name: "two constraints bound replicas", spec: `
  placement:
    spreadConstraints: [{topologyKey: region, minGroups: 2, maxSkew: 1}, {topologyKey: provider, minGroups: 2}, {topologyKey: zone, maxSkew: 2}]`,
			want: []string{"FieldValueForbidden spec.placement.spreadConstraints[2].maxSkew"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := errorPaths(federation.ValidateFederatedObject(decodeFederated(t, tc.spec)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateFederatedObject() paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateReplicaSchedulingPreference(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{name: "valid spec from the design", spec: `
  targetKind: FederatedDeployment
  totalReplicas: 9
  rebalancePeriod: 5m
  clusters:
    "*": {weight: 1}
    cluster-aws-us-east: {minReplicas: 2, maxReplicas: 6, weight: 2}`},
		{name: "negative replicas", spec: `
  targetKind: FederatedDeployment
  totalReplicas: -3
  clusters: {a: {minReplicas: -1, maxReplicas: -2, weight: -1}}`,
			want: []string{
				"FieldValueInvalid spec.totalReplicas",
				"FieldValueInvalid spec.clusters[a].minReplicas",
				"FieldValueInvalid spec.clusters[a].maxReplicas",
				"FieldValueInvalid spec.clusters[a].weight",
			}},
		{name: "max below min", spec: `
  targetKind: FederatedDeployment
  totalReplicas: 3
  clusters: {b: {minReplicas: 4, maxReplicas: 2}, a: {minReplicas: 1, maxReplicas: 1}}`,
			want: []string{"FieldValueInvalid spec.clusters[b].maxReplicas"}},
		{name: "missing kind, bad period, unknown algorithm and strategy", spec: `
  totalReplicas: 1
  rebalancePeriod: 0s
  algorithm: DHondt
  strategy: Random`,
			want: []string{
				"FieldValueRequired spec.targetKind",
				"FieldValueInvalid spec.rebalancePeriod",
				"FieldValueNotSupported spec.algorithm",
				"FieldValueNotSupported spec.strategy",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rsp := &federation.ReplicaSchedulingPreference{}
			require.NoError(t, yaml.UnmarshalStrict([]byte("spec:\n"+tc.spec), rsp))
			got := errorPaths(federation.ValidateReplicaSchedulingPreference(rsp))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateReplicaSchedulingPreference() paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCluster(t *testing.T) {
	neg := resource.MustParse("-1")
	tests := []struct {
		name, cluster string
		spec          federation.ClusterSpec
		want          []string
	}{
		{name: "pull", spec: federation.ClusterSpec{Mode: federation.ClusterModePull, Region: "edge"}},
		{name: "pull with a connection", spec: federation.ClusterSpec{Mode: federation.ClusterModePull,
			APIEndpoint: "https://10.0.0.1:6443", CABundle: []byte("x"), SecretRef: &federation.LocalSecretReference{Name: "s"},
			ProxyURL: "https://proxy", InsecureSkipTLSVerify: true},
			want: []string{"FieldValueForbidden spec.apiEndpoint", "FieldValueForbidden spec.caBundle",
				"FieldValueForbidden spec.secretRef", "FieldValueForbidden spec.proxyURL", "FieldValueForbidden spec.insecureSkipTLSVerify"}},
		{name: "pull, name too long for its namespace", cluster: strings.Repeat("a", 49), spec: federation.ClusterSpec{Mode: federation.ClusterModePull},
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "unknown mode", spec: federation.ClusterSpec{Mode: "Carrier"}, want: []string{"FieldValueNotSupported spec.mode"}},
		{name: "valid", spec: federation.ClusterSpec{APIEndpoint: "https://10.0.0.1:6443", Region: "us-east-1",
			Taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}}},
		{name: "missing endpoint", want: []string{"FieldValueRequired spec.apiEndpoint"}},
		{name: "bad endpoint, proxy, secret, taints and cost", spec: federation.ClusterSpec{
			APIEndpoint: "10.0.0.1:6443", ProxyURL: "::", SecretRef: &federation.LocalSecretReference{},
			Taints: []corev1.Taint{{Effect: "Sometimes"}}, Cost: &neg,
		}, want: []string{
			"FieldValueInvalid spec.apiEndpoint",
			"FieldValueInvalid spec.proxyURL",
			"FieldValueRequired spec.secretRef.name",
			"FieldValueRequired spec.taints[0].key",
			"FieldValueNotSupported spec.taints[0].effect",
			"FieldValueInvalid spec.cost",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &federation.Cluster{Spec: tc.spec}
			c.Name = tc.cluster
			if c.Name == "" {
				c.Name = "edge-1"
			}
			got := errorPaths(federation.ValidateCluster(c))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateCluster() paths (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateClusterConnection: ValidateCluster used to accept http endpoints and
// endpoints with user information, which federation/kube always refused, and quoted URLs with
// their passwords in its errors.
func TestValidateClusterConnection(t *testing.T) {
	tests := []struct {
		name string
		spec federation.ClusterSpec
		want []string
	}{
		{name: "https with a path", spec: federation.ClusterSpec{APIEndpoint: "https://rancher.example.com/k8s/clusters/c-1"}},
		{name: "proxy with a password", spec: federation.ClusterSpec{APIEndpoint: "https://eu.example.com", ProxyURL: "socks5://alice:hunter2@proxy:1080"}},
		{name: "http", spec: federation.ClusterSpec{APIEndpoint: "http://eu.example.com"},
			want: []string{"FieldValueInvalid spec.apiEndpoint"}},
		{name: "user information", spec: federation.ClusterSpec{APIEndpoint: "https://alice:hunter2@eu.example.com"},
			want: []string{"FieldValueInvalid spec.apiEndpoint"}},
		{name: "http and user information", spec: federation.ClusterSpec{APIEndpoint: "http://alice:hunter2@eu.example.com"},
			want: []string{"FieldValueInvalid spec.apiEndpoint", "FieldValueInvalid spec.apiEndpoint"}},
		{name: "query", spec: federation.ClusterSpec{APIEndpoint: "https://eu.example.com/?token=hunter2"},
			want: []string{"FieldValueInvalid spec.apiEndpoint"}},
		{name: "no scheme, user information", spec: federation.ClusterSpec{APIEndpoint: "alice:hunter2@eu.example.com"},
			want: []string{"FieldValueInvalid spec.apiEndpoint"}},
		{name: "malformed, user information", spec: federation.ClusterSpec{APIEndpoint: "https://alice:hunter2@[::1"},
			want: []string{"FieldValueInvalid spec.apiEndpoint"}},
		{name: "proxy scheme", spec: federation.ClusterSpec{APIEndpoint: "https://eu.example.com", ProxyURL: "ftp://alice:hunter2@proxy"},
			want: []string{"FieldValueNotSupported spec.proxyURL.scheme"}},
		{name: "malformed proxy", spec: federation.ClusterSpec{APIEndpoint: "https://eu.example.com", ProxyURL: "socks5://alice:hunter2@[proxy"},
			want: []string{"FieldValueInvalid spec.proxyURL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := federation.ValidateCluster(&federation.Cluster{Spec: tc.spec})
			if diff := cmp.Diff(tc.want, errorPaths(errs)); diff != "" {
				t.Errorf("ValidateCluster() paths (-want +got):\n%s", diff)
			}
			for _, secret := range []string{"hunter2", "alice"} {
				require.NotContains(t, fmt.Sprint(errs.ToAggregate()), secret)
			}
		})
	}
}

func TestInvalidError(t *testing.T) {
	err := federation.NewInvalidError("FederatedDeployment", federation.Key{Namespace: "prod", Name: "web"},
		field.ErrorList{field.Duplicate(field.NewPath("spec", "overrides").Index(1).Child("clusterName"), "eu")})
	require.True(t, errors.Is(err, federation.ErrInvalidObject))
	require.Equal(t, `FederatedDeployment prod/web is invalid: spec.overrides[1].clusterName: Duplicate value: "eu"`, err.Error())
	require.NoError(t, federation.NewInvalidError("X", federation.Key{}, nil))
}

func TestDefaults(t *testing.T) {
	rsp := &federation.ReplicaSchedulingPreference{Spec: federation.ReplicaSchedulingPreferenceSpec{
		Clusters: map[string]federation.ClusterPreferences{"*": {Weight: 1}, "a": {MinReplicas: ptr(int64(0)), Weight: 2}},
	}}
	federation.DefaultReplicaSchedulingPreference(rsp)
	federation.DefaultReplicaSchedulingPreference(rsp) // idempotent
	want := federation.ReplicaSchedulingPreferenceSpec{
		RebalancePeriod: &metav1.Duration{Duration: federation.DefaultRebalancePeriod},
		Clusters: map[string]federation.ClusterPreferences{
			"*": {MinReplicas: ptr(int64(1)), Weight: 1},
			"a": {MinReplicas: ptr(int64(0)), Weight: 2},
		},
	}
	if diff := cmp.Diff(want, rsp.Spec); diff != "" {
		t.Errorf("DefaultReplicaSchedulingPreference (-want +got):\n%s", diff)
	}

	obj := decodeFederated(t, `
  overrides: [{clusterName: a, clusterOverrides: [{path: /spec/replicas, value: 4}, {op: add, path: /x, value: 1}]}]`)
	federation.DefaultFederatedObject(obj)
	ops := obj.Spec.Overrides[0].ClusterOverrides
	require.Equal(t, []string{"replace", "add"}, []string{ops[0].Op, ops[1].Op})
	require.Equal(t, federation.DefaultRevisionHistoryLimit, *obj.Spec.RevisionHistoryLimit)
}

// TestDefaultsKeepDrainedClusterValid: {maxReplicas: 0} is how a cluster is drained; the
// default minReplicas must not exceed it and make the whole preference invalid.
func TestDefaultsKeepDrainedClusterValid(t *testing.T) {
	rsp := &federation.ReplicaSchedulingPreference{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  clusters:
    "*": {weight: 1}
    drained: {maxReplicas: 0}
    small: {maxReplicas: 3}
    pinned: {minReplicas: 2, maxReplicas: 2}
`), rsp))
	federation.DefaultReplicaSchedulingPreference(rsp)
	require.Empty(t, federation.ValidateReplicaSchedulingPreference(rsp))
	got := map[string]int64{}
	for name, p := range rsp.Spec.Clusters {
		got[name] = *p.MinReplicas
	}
	if diff := cmp.Diff(map[string]int64{"*": 1, "drained": 0, "small": 1, "pinned": 2}, got); diff != "" {
		t.Errorf("defaulted minReplicas (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// A FederatedNamespace governs the namespace it lives in, so its name must be that namespace:
// one named otherwise would manage (and, deleted, delete) another team's namespace.
func TestValidateFederatedNamespaceName(t *testing.T) {
	for _, tc := range []struct {
		name, kind, objName, namespace string
		want                           []string
	}{
		{name: "name is the namespace", kind: "FederatedNamespace", objName: "team", namespace: "team"},
		{name: "name is another namespace", kind: "FederatedNamespace", objName: "other-team", namespace: "team",
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "other kinds may be named freely", kind: "FederatedDeployment", objName: "web", namespace: "team"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decodeFederated(t, "  placement: {clusters: [{name: a}]}")
			obj.APIVersion, obj.Kind = federation.TypesGroupVersion.String(), tc.kind
			obj.Name, obj.Namespace = tc.objName, tc.namespace
			errs := federation.ValidateFederatedObject(obj)
			if diff := cmp.Diff(tc.want, errorPaths(errs)); diff != "" {
				t.Errorf("ValidateFederatedObject() paths (-want +got):\n%s", diff)
			}
			for _, e := range errs {
				require.Contains(t, e.Error(), `"team"`, "the message names the namespace it must be")
			}
		})
	}
}

// TestValidateMember: the rules a member's API server refuses a workload for on every
// create, with its field paths; other kinds are the server's own business.
func TestValidateMember(t *testing.T) {
	for _, tc := range []struct {
		name, obj string
		want      []string
	}{
		{name: "valid deployment", obj: `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a, tier: web}}, spec: {containers: [{name: a, image: a}]}}}}`},
		{name: "no selector", obj: `{apiVersion: apps/v1, kind: StatefulSet, spec: {template: {spec: {containers: [{name: a, image: a}]}}}}`,
			want: []string{"spec.selector: Required value"}},
		{name: "empty selector", obj: `{apiVersion: apps/v1, kind: DaemonSet, spec: {selector: {}, template: {spec: {containers: [{name: a, image: a}]}}}}`,
			want: []string{"spec.selector: Invalid value: {}: empty selector is invalid for daemonset"}},
		{name: "labels do not match", obj: `{apiVersion: apps/v1, kind: ReplicaSet, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: a, image: a}]}}}}`,
			want: []string{"spec.template.metadata.labels: Invalid value: {\"app\":\"b\"}: `selector` does not match template `labels`"}},
		{name: "no containers", obj: `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}}}}`,
			want: []string{"spec.template.spec.containers: Required value"}},
		{name: "job", obj: `{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {restartPolicy: Always, containers: [{image: a}]}}}}`,
			want: []string{"spec.template.spec.containers[0].name: Required value", `spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"`}},
		{name: "job without selector is fine", obj: `{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: a}]}}}}`},
		{name: "other kinds", obj: `{apiVersion: v1, kind: Service, spec: {}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.obj), &u.Object); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range federation.ValidateMember(u) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// The member object takes the federated object's namespace and name: a template that names
// others is refused with an error at the field, not silently rewritten (found by the hostile
// input table, test/hostile).
func TestValidateTemplateIdentity(t *testing.T) {
	tests := []struct {
		name     string
		metadata string
		want     []string
	}{
		{name: "none", metadata: `{labels: {app: web}}`},
		{name: "the same", metadata: `{name: web, namespace: shop}`},
		{name: "another namespace", metadata: `{namespace: kube-system}`, want: []string{"FieldValueInvalid spec.template.metadata.namespace"}},
		{name: "another name", metadata: `{name: other}`, want: []string{"FieldValueInvalid spec.template.metadata.name"}},
		{name: "not a string", metadata: `{namespace: 3, name: [x]}`, want: []string{"FieldValueInvalid spec.template.metadata.name", "FieldValueInvalid spec.template.metadata.namespace"}},
		{name: "metadata not an object", metadata: `yes`, want: []string{"FieldValueInvalid spec.template.metadata"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &federation.FederatedObject{}
			require.NoError(t, yaml.Unmarshal([]byte(`{metadata: {name: web, namespace: shop}, spec: {template: {metadata: `+tc.metadata+`}}}`), obj))
			if diff := cmp.Diff(tc.want, errorPaths(federation.ValidateFederatedObject(obj))); diff != "" {
				t.Errorf("ValidateFederatedObject (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatePropagationPolicy(t *testing.T) {
	tests := []struct {
		name      string
		cluster   bool
		namespace string
		spec      string
		want      []string
	}{
		{name: "valid", spec: `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  priority: 5
  placement: {clusters: [{name: a}]}
  scheduling: {totalReplicas: 3, clusters: {"*": {weight: 1}}}
  conflictResolution: Overwrite`},
		{name: "valid cluster policy with a namespace", cluster: true, spec: `
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: web, name: settings}]`},
		{name: "valid policy naming its own namespace", namespace: "web", spec: `
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: web, name: settings}]`},
		{name: "policy naming another namespace", namespace: "web", spec: `
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: shop, name: settings}]`,
			want: []string{"FieldValueForbidden spec.resourceSelectors[0].namespace"}},
		{name: "preemption and removal", spec: `
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  preemption: Sometimes
  removal: Keep`,
			want: []string{"FieldValueNotSupported spec.preemption", "FieldValueNotSupported spec.removal"}},
		{name: "no selectors", spec: `
  priority: 1`, want: []string{"FieldValueRequired spec.resourceSelectors"}},
		{name: "bad selectors", spec: `
  resourceSelectors:
  - {apiVersion: "", kind: ""}
  - {apiVersion: apps/v1/x, kind: Deployment, name: "Bad_Name", namespace: other}
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {"bad key!": x}}}`,
			want: []string{
				"FieldValueRequired spec.resourceSelectors[0].apiVersion",
				"FieldValueRequired spec.resourceSelectors[0].kind",
				"FieldValueInvalid spec.resourceSelectors[1].apiVersion",
				"FieldValueInvalid spec.resourceSelectors[1].name",
				"FieldValueForbidden spec.resourceSelectors[1].namespace",
				"FieldValueInvalid spec.resourceSelectors[2].labelSelector.matchLabels[bad key!]",
			}},
		{name: "bad placement, scheduling and conflict resolution", spec: `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {maxClusters: -1}
  scheduling: {totalReplicas: -1, algorithm: DHondt, rebalancePeriod: 0s, clusters: {a: {weight: -1}}}
  conflictResolution: Merge`,
			want: []string{
				"FieldValueInvalid spec.placement.maxClusters",
				"FieldValueInvalid spec.scheduling.totalReplicas",
				"FieldValueInvalid spec.scheduling.rebalancePeriod",
				"FieldValueNotSupported spec.scheduling.algorithm",
				"FieldValueInvalid spec.scheduling.clusters[a].weight",
				"FieldValueNotSupported spec.conflictResolution",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if tc.cluster {
				p := &federation.ClusterPropagationPolicy{}
				require.NoError(t, yaml.UnmarshalStrict([]byte("spec:\n"+tc.spec), p))
				got = errorPaths(federation.ValidateClusterPropagationPolicy(p))
			} else {
				p := &federation.PropagationPolicy{}
				require.NoError(t, yaml.UnmarshalStrict([]byte("spec:\n"+tc.spec), p))
				p.Namespace = tc.namespace
				got = errorPaths(federation.ValidatePropagationPolicy(p))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssignmentName(t *testing.T) {
	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ns := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	long := strings.Repeat("n", 250)
	tests := []struct {
		gvr             schema.GroupVersionResource
		namespace, name string
		want            string
	}{
		{deploy, "prod", "web", "deployments.apps.prod.web"},
		{cm, "prod", "web", "configmaps.core.prod.web"},
		{ns, "", "prod", "namespaces.core.cluster-scoped.prod"},
		{cm, "prod", long, "configmaps.core.prod." + long[:253-17-len("configmaps.core.prod.")] + ".56827cd946e50976"},
	}
	for _, tc := range tests {
		got := federation.AssignmentName(tc.gvr, tc.namespace, tc.name)
		if got != tc.want {
			t.Errorf("AssignmentName(%v, %q, %.20q...) = %q, want %q", tc.gvr, tc.namespace, tc.name, got, tc.want)
		}
		if len(got) > 253 {
			t.Errorf("AssignmentName(...) has %d characters, more than a name may", len(got))
		}
	}
}
