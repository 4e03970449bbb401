package status_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/kinds"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

func widgetWith(rules *federation.KindRules) federation.TypeConfig {
	t := fedtest.WidgetType
	t.Rules = rules
	return t
}

// TestRulesExtractor: a kind without Go code is judged by the defaults of the common shape,
// its desired count read at its ReplicasPath, and its rules over them; a rule that fails or
// does not compile is an error naming it, never a guess.
func TestRulesExtractor(t *testing.T) {
	int64p := func(n int64) *int64 { return &n }
	health := &federation.KindRules{
		Ready:         "self.status.phase == 'Running' && self.status.healthy",
		Message:       "'phase ' + self.status.phase",
		ReadyReplicas: "has(self.status.readyReplicas) ? self.status.readyReplicas : 0",
		Status:        map[string]string{"phase": "self.status.phase"},
	}
	for _, tc := range []struct {
		name  string
		rules *federation.KindRules
		obj   string
		want  status.Observation
		err   error
	}{
		{"defaults: desired count from spec.replicas, ready without conditions", nil,
			`{metadata: {generation: 2}, spec: {replicas: 3}, status: {replicas: 1, observedGeneration: 2}}`,
			status.Observation{Replicas: int64p(3), ObservedGeneration: int64p(2), Ready: true, Remote: map[string]any{"replicas": int64(1), "observedGeneration": int64(2)}}, nil},
		{"defaults: generation behind", nil,
			`{metadata: {generation: 3}, spec: {}, status: {observedGeneration: 2}}`,
			status.Observation{Replicas: int64p(1), ObservedGeneration: int64p(2), Message: "observedGeneration 2 behind generation 3", Remote: map[string]any{"observedGeneration": int64(2)}}, nil},
		{"defaults: a Ready condition False", nil,
			`{metadata: {generation: 1}, spec: {replicas: 2}, status: {conditions: [{type: Ready, status: "False", reason: Degraded}]}}`,
			status.Observation{Replicas: int64p(2), Message: "condition Ready is False (Degraded)",
				Remote: map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Degraded"}}}}, nil},
		{"rules: ready", health,
			`{metadata: {generation: 1}, spec: {replicas: 2}, status: {phase: Running, healthy: true, readyReplicas: 2}}`,
			status.Observation{Replicas: int64p(2), ReadyReplicas: int64p(2), Ready: true, Remote: map[string]any{"phase": "Running"}}, nil},
		{"rules: not ready, with the message rule's words", health,
			`{metadata: {generation: 1}, spec: {replicas: 2}, status: {phase: Degraded, healthy: false}}`,
			status.Observation{Replicas: int64p(2), ReadyReplicas: int64p(0), Message: "phase Degraded", Remote: map[string]any{"phase": "Degraded"}}, nil},
		{"rules: the controller behind wins over ready", health,
			`{metadata: {generation: 4}, spec: {replicas: 2}, status: {phase: Running, healthy: true, observedGeneration: 3}}`,
			status.Observation{Replicas: int64p(2), ReadyReplicas: int64p(0), ObservedGeneration: int64p(3), Message: "observedGeneration 3 behind generation 4", Remote: map[string]any{"phase": "Running"}}, nil},
		{"rules: a rule fails on the object", health,
			`{metadata: {generation: 1}, spec: {replicas: 2}}`, status.Observation{}, kinds.ErrRuleFailed},
		{"rules: do not compile", &federation.KindRules{Ready: "self.status.phase =="},
			`{metadata: {generation: 1}, spec: {}}`, status.Observation{}, kinds.ErrInvalidRules},
		{"defaults: a replica count of the wrong type", nil,
			`{metadata: {generation: 1}, spec: {replicas: many}}`, status.Observation{}, status.ErrInvalidMemberStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := fedtest.Decode(t, tc.obj)
			normalize(obj.Object)
			got, err := status.RulesExtractor(widgetWith(tc.rules))(obj)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v; want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// normalize makes YAML's numbers the API server's int64s.
func normalize(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case float64:
			m[k] = int64(x)
		case map[string]any:
			normalize(x)
		case []any:
			for _, it := range x {
				if mm, ok := it.(map[string]any); ok {
					normalize(mm)
				}
			}
		}
	}
}

// events records the Events of a loop.
type events struct {
	mu   gosync.Mutex
	list []string
}

func (e *events) Eventf(_ runtime.Object, typ, reason, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, typ+" "+reason+" "+fmt.Sprintf(format, args...))
}

// TestCollectorReportsRuleFailure: a FederatedWidget whose health rule fails on the member
// object (its status not written yet, and the rule does not guard it) is Ready=False naming
// the rule and the cluster, with one Warning; once the member reports, it is Ready.
func TestCollectorReportsRuleFailure(t *testing.T) {
	env := fedtest.New(t, fedtest.Options{Namespaces: []string{"shop"}, Members: []fedtest.Member{{Name: "eu"}}})
	eu := env.Member(t, "eu")
	fedtest.InstallWidgets(t, env.Host, eu)
	fedtest.Create(t, eu, federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	typ := widgetWith(&federation.KindRules{Ready: "self.status.phase == 'Running'"})
	crd, err := federation.CRDFor(typ)
	if err != nil {
		t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := env.Host.Create(ctx, fedtest.CRDGVR, &unstructured.Unstructured{Object: u}); err != nil {
		t.Fatal(err)
	}
	fedtest.Create(t, env.Host, typ.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedWidget, metadata: {name: w, namespace: shop},
  spec: {template: {spec: {replicas: 1, color: blue}}, placement: {clusters: [{name: eu}]}}}`)
	sy, err := fedsync.New(env.Host, env.Fleet, typ, fedsync.Options{Clock: env.Clock})
	if err != nil {
		t.Fatal(err)
	}
	rec := &events{}
	c, err := status.New(env.Host, env.Fleet, typ, status.Options{Clock: env.Clock, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	key := federation.Key{Namespace: "shop", Name: "w"}
	pass := func() *federation.FederatedObject {
		t.Helper()
		for _, r := range []interface {
			Reconcile(context.Context, federation.Key) (federation.Result, error)
		}{sy, c} {
			if _, err := r.Reconcile(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		got, err := env.Host.Get(ctx, typ.FederatedGVR(), "shop", "w")
		if err != nil {
			t.Fatal(err)
		}
		fed, err := federation.FederatedObjectFromUnstructured(got)
		if err != nil {
			t.Fatal(err)
		}
		return fed
	}
	pass()
	fed := pass()
	ready := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionReady)
	if ready == nil || ready.Status != "False" || !strings.Contains(ready.Message, "spec.rules.ready") || !strings.Contains(ready.Message, "eu") {
		t.Fatalf("Ready = %+v; want False naming the rule and the cluster", ready)
	}
	if len(rec.list) != 1 || !strings.Contains(rec.list[0], status.EventKindRulesFailed) || !strings.Contains(rec.list[0], "cluster eu") {
		t.Errorf("events = %q; want one %s Warning naming cluster eu", rec.list, status.EventKindRulesFailed)
	}

	w, err := eu.Get(ctx, typ.TargetGVR(), "shop", "w")
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(w.Object, "Running", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if _, err := eu.UpdateStatus(ctx, typ.TargetGVR(), w); err != nil {
		t.Fatal(err)
	}
	fed = pass()
	if ready := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionReady); ready == nil || ready.Status != "True" {
		t.Errorf("Ready = %+v; want True once the member reports Running", ready)
	}
	if len(rec.list) != 2 {
		t.Errorf("events = %q; want the Warning, then Ready", rec.list)
	}
}
