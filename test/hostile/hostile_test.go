// Package hostile_test feeds every loop hostile input, one object at a time next to a
// well-formed one: each hostile object gets a clear error in its status (and a warning event
// where the loop records events: sync), naming the field or the cluster, and the loops keep
// serving the well-formed object.
package hostile_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// want is what a hostile object's status must say.
type want struct {
	// conditions: type -> "Status Reason" (e.g. "False InvalidObject").
	conditions map[string]string
	// message is in the message of every condition of conditions that is not True (when
	// clusters is nil; else those name the clusters and their reasons), of every cluster
	// entry of clusters that has a propagation reason, and of the event.
	message string
	// clusters: name -> propagation reason.
	clusters map[string]string
	// event is the reason of a warning event sync records ("" for none expected).
	event string
}

const (
	deploymentTemplate = `{spec: {replicas: 2, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: nginx}]}}}}`
	configMapTemplate  = `{data: {k: v}}`
)

// federated returns a federated object of kind in namespace apps named x with spec (YAML).
func federated(t *testing.T, kind, spec string) *unstructured.Unstructured {
	t.Helper()
	return obj(t, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: `+kind+`, metadata: {name: x, namespace: apps}, spec: `+spec+`}`)
}

func deep(n int) map[string]any {
	m := map[string]any{"leaf": "x"}
	for range n {
		m = map[string]any{"a": m}
	}
	return m
}

var valid = map[string]string{
	federation.ConditionScheduled:  "True Scheduled",
	federation.ConditionPropagated: "True Propagated",
	federation.ConditionReady:      "True Ready",
}

func TestHostileInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  federation.TypeConfig
		// make builds the hostile object; extra are created before it (an RSP).
		make  func(t *testing.T) *unstructured.Unstructured
		extra []string
		want  want
	}{{
		name: "huge object", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			u := federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, template: {data: {}}}`)
			require.NoError(t, unstructured.SetNestedField(u.Object, strings.Repeat("x", 3<<20), "spec", "template", "data", "blob"))
			return u
		},
		want: want{conditions: valid},
	}, {
		name: "deeply nested", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			u := federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, template: `+configMapTemplate+`}`)
			require.NoError(t, unstructured.SetNestedField(u.Object, deep(2000), "spec", "template", "nested"))
			return u
		},
		want: want{conditions: valid},
	}, {
		name: "wrong type in the template", typ: federation.DeploymentType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedDeployment", `{placement: {clusterSelector: {}}, template: {spec: {replicas: three}}}`)
		},
		want: want{conditions: map[string]string{"Scheduled": "False InvalidObject", "Propagated": "False InvalidObject"},
			message: `spec.template.spec.replicas: Invalid value: "three"`, event: plan.ReasonInvalidObject},
	}, {
		name: "wrong type in an override", typ: federation.DeploymentType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedDeployment", `{placement: {clusterSelector: {}}, overrides: [{clusterName: a, clusterOverrides: [{path: /spec/replicas, value: many}]}], template: `+deploymentTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False NotPropagated"}, message: `cluster "a"`,
			clusters: map[string]string{"a": plan.ReasonCreationFailed, "b": "", "c": ""}, event: plan.ReasonCreationFailed},
	}, {
		name: "override of a path that does not exist", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, overrides: [{clusterName: a, clusterOverrides: [{path: /nothing/here, value: 1}]}], template: `+configMapTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False NotPropagated"}, message: "/nothing does not exist",
			clusters: map[string]string{"a": plan.ReasonRenderFailed, "b": "", "c": ""}},
	}, {
		name: "override with an unknown op", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, overrides: [{clusterName: a, clusterOverrides: [{op: explode, path: /data/k, value: w}]}], template: `+configMapTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False InvalidObject"}, message: `spec.overrides[0].clusterOverrides[0].op: Unsupported value: "explode"`, event: plan.ReasonInvalidObject},
	}, {
		// The fake keeps unknown fields; a real server prunes them (test/sync checks that sync
		// does not fight the pruning).
		name: "unknown fields", typ: federation.DeploymentType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedDeployment", `{placement: {clusterSelector: {}}, surprise: 1, template: {bogus: 1, spec: {replicaz: 3, replicas: 2, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: nginx}]}}}}}`)
		},
		want: want{conditions: valid},
	}, {
		// JSON cannot carry it: the API turns it into U+FFFD, and that is what propagates.
		name: "invalid UTF-8 in data", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			u := federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, template: {data: {}}}`)
			require.NoError(t, unstructured.SetNestedField(u.Object, "bad\xff\xfe", "spec", "template", "data", "k"))
			return u
		},
		want: want{conditions: valid},
	}, {
		name: "invalid UTF-8 in a label", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			u := federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, template: `+configMapTemplate+`}`)
			require.NoError(t, unstructured.SetNestedField(u.Object, "bad\xff", "spec", "template", "metadata", "labels", "team"))
			return u
		},
		want: want{conditions: map[string]string{"Propagated": "False NotPropagated"}, message: "metadata.labels: Invalid value",
			clusters: map[string]string{"a": plan.ReasonCreationFailed, "b": plan.ReasonCreationFailed, "c": plan.ReasonCreationFailed}, event: plan.ReasonCreationFailed},
	}, {
		name: "negative replicas", typ: federation.DeploymentType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedDeployment", `{placement: {clusterSelector: {}}, template: {spec: {replicas: -3}}}`)
		},
		want: want{conditions: map[string]string{"Scheduled": "False InvalidObject", "Propagated": "False InvalidObject"},
			message: "spec.template.spec.replicas: Invalid value: -3: must be non-negative", event: plan.ReasonInvalidObject},
	}, {
		name: "negative numbers in a preference", typ: federation.DeploymentType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedDeployment", `{placement: {clusterSelector: {}}, template: `+deploymentTemplate+`}`)
		},
		extra: []string{`{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference, metadata: {name: x, namespace: apps}, spec: {targetKind: FederatedDeployment, totalReplicas: -5, clusters: {"*": {weight: -1}}}}`},
		want:  want{conditions: map[string]string{"Scheduled": "False InvalidPreference"}, message: "spec.totalReplicas: Invalid value: -5"},
	}, {
		name: "placement selector that does not parse", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {matchExpressions: [{key: region, operator: Bogus, values: [x]}]}}, template: `+configMapTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Scheduled": "False InvalidPlacement", "Propagated": "False InvalidObject"},
			message: `spec.placement.clusterSelector.matchExpressions[0].operator: Invalid value: "Bogus"`, event: plan.ReasonInvalidObject},
	}, {
		name: "placement selector with an invalid key", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {matchLabels: {"a/b/c": "x y"}}}, template: `+configMapTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Scheduled": "False InvalidPlacement", "Propagated": "False InvalidObject"},
			message: "spec.placement.clusterSelector.matchLabels[a/b/c]", event: plan.ReasonInvalidObject},
	}, {
		name: "override selector that does not parse", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, overrides: [{clusterSelector: {matchExpressions: [{key: "", operator: In}]}, clusterOverrides: [{path: /data/k, value: w}]}], template: `+configMapTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False InvalidObject"}, message: "spec.overrides[0].clusterSelector.matchExpressions[0]", event: plan.ReasonInvalidObject},
	}, {
		name: "template naming another namespace", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, template: {metadata: {namespace: kube-system}, data: {k: v}}}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False InvalidObject"}, message: `spec.template.metadata.namespace: Invalid value: "kube-system"`, event: plan.ReasonInvalidObject},
	}, {
		name: "override moving the object to another namespace", typ: federation.ConfigMapType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return federated(t, "FederatedConfigMap", `{placement: {clusterSelector: {}}, overrides: [{clusterName: a, clusterOverrides: [{op: add, path: /metadata/namespace, value: kube-system}]}], template: `+configMapTemplate+`}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False InvalidObject"}, message: "/metadata/namespace identifies the object", event: plan.ReasonInvalidObject},
	}, {
		name: "a system namespace without adoption", typ: federation.NamespaceType,
		make: func(t *testing.T) *unstructured.Unstructured {
			return obj(t, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedNamespace, metadata: {name: kube-system, namespace: kube-system}, spec: {placement: {clusterSelector: {}}}}`)
		},
		want: want{conditions: map[string]string{"Propagated": "False NotPropagated"}, message: "was not created by the federation",
			clusters: map[string]string{"a": plan.ReasonAlreadyExists, "b": plan.ReasonAlreadyExists, "c": plan.ReasonAlreadyExists}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for _, doc := range tc.extra {
				_, err := e.host.Create(ctx, federation.ReplicaSchedulingPreferenceGVR, obj(t, doc))
				require.NoError(t, err)
			}
			u := tc.make(t)
			_, err := e.host.Create(ctx, tc.typ.FederatedGVR(), u)
			require.NoError(t, err)
			e.goodNeighbour(t)
			e.rounds(t, 4)
			e.requireGoodNeighbour(t)
			e.check(t, tc.typ, u.GetNamespace(), u.GetName(), tc.want)
		})
	}
}

// check compares a hostile object's status with w, and requires the status to stay small
// (nothing of a huge object is copied into it).
func (e *env) check(t *testing.T, typ federation.TypeConfig, ns, name string, w want) {
	t.Helper()
	f := e.fed(t, typ, ns, name)
	for typ, sr := range w.conditions {
		c := meta.FindStatusCondition(f.Status.Conditions, typ)
		require.NotNil(t, c, "no %s condition", typ)
		require.Equal(t, sr, string(c.Status)+" "+c.Reason, "%s: %s", typ, c.Message)
		switch {
		case c.Status == metav1.ConditionTrue:
		case w.clusters != nil:
			// The condition names the clusters and their reasons; each entry says why.
			for name, reason := range w.clusters {
				if reason != "" {
					require.Contains(t, c.Message, name+": "+reason, typ)
				}
			}
		default:
			require.Contains(t, c.Message, w.message, typ)
		}
	}
	if w.clusters != nil {
		got := map[string]string{}
		for _, c := range f.Status.Clusters {
			got[c.Name] = c.Propagation
			if c.Propagation != "" {
				require.Contains(t, c.Message, w.message, c.Name)
			}
		}
		require.Equal(t, w.clusters, got)
	}
	if w.event != "" {
		require.True(t, e.events.has("Warning "+w.event+" "+ns+"/"+name+": ", w.message), "no %s warning naming %q: %v", w.event, w.message, e.events.list())
	}
	data, err := json.Marshal(f.Status)
	require.NoError(t, err)
	require.Less(t, len(data), 16<<10, "a status of %d bytes", len(data))
}

// A FederatedNamespace that adopted a system namespace, then is deleted, would delete that
// namespace in every member (kube-node-lease: where the kubelets' heartbeats live; the API
// server refuses only default, kube-system and kube-public). Sync orphans it instead and
// warns, per cluster; the FederatedNamespace goes; the well-formed neighbour is untouched.
func TestDeletingAFederatedSystemNamespaceKeepsIt(t *testing.T) {
	for _, name := range []string{"kube-node-lease", "kube-system", "default", "kube-public"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.host.Create(ctx, federation.NamespaceType.FederatedGVR(), obj(t, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedNamespace,
metadata: {name: `+name+`, namespace: `+name+`, annotations: {federation.k8s.io/adopt: "true"}},
spec: {template: {metadata: {labels: {team: platform}}}, placement: {clusterSelector: {}}}}`))
			require.NoError(t, err)
			e.goodNeighbour(t)
			e.rounds(t, 3)
			require.NoError(t, e.host.Delete(ctx, federation.NamespaceType.FederatedGVR(), name, name, metav1.DeleteOptions{}))
			e.rounds(t, 3)

			_, err = e.host.Peek(federation.NamespaceType.FederatedGVR(), name, name)
			require.True(t, apierrors.IsNotFound(err), "the FederatedNamespace is gone: %v", err)
			for _, c := range e.fleet.Names() {
				m, _ := e.fleet.Member(c)
				ns, err := m.Peek(federation.NamespaceType.TargetGVR(), "", name)
				require.NoError(t, err, "%s: %s was deleted", c, name)
				require.Nil(t, ns.GetDeletionTimestamp(), "%s: %s is being deleted", c, name)
				require.NotContains(t, ns.GetLabels(), federation.ManagedByLabel, "%s: orphaned", c)
				require.True(t, e.events.has("Warning "+plan.ReasonSystemNamespace+" "+name+"/"+name+": ", `cluster "`+c+`"`), "no warning for %s: %v", c, e.events.list())
			}
			e.requireGoodNeighbour(t)
		})
	}
}
