package soak

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// kindsOn reports whether the soak of cfg has the configured kind (Features.Kinds; not in Run
// mode).
func kindsOn(cfg Config) bool { return cfg.Without.on().Kinds && !cfg.Run }

// kindsWatch is what the configured kind's rules remember between steps.
type kindsWatch struct {
	// set is the rule set the FederatedTypeConfig holds (-1: none on the host).
	set int64
	// kept are the member objects a disabled type or invalid rules must leave as they are:
	// each widget, and each ConfigMap a widget refers to there, with the rule that keeps it.
	kept map[string]keptObject
	// keptRule is the rule kept is held by ("" when nothing is kept).
	keptRule Rule
	// readyFailing counts, by FederatedWidget, the checks in a row that found it Ready while
	// a rule failed on a member it counts fresh.
	readyFailing map[string]int
}

// keptObject is a member object as it was when its type was disabled or its rules made invalid.
type keptObject struct {
	cluster, kind, ns, name string
	uid                     string
	state                   string // "" for a dependency: it must stay, what it holds may change
}

// applyKinds carries out the configured kind's events; ok is false for an op that is not one
// of them.
func (w *World) applyKinds(ctx context.Context, e Event) (ok bool, err error) {
	typ := widgetType(rulesBase)
	switch e.Op {
	case OpEnable:
		return true, w.enable(ctx, e.Value)
	case OpDisable:
		w.keep(RuleDisabledKept)
		w.mu.Lock()
		w.kindsState.set = -1
		w.mu.Unlock()
		return true, w.userDelete(ctx, federation.FederatedTypeConfigGVR, "", federation.TypeConfigName(typ))
	case OpWidget:
		u := federatedWidget(e)
		err := w.userEdit(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name, func(cur *unstructured.Unstructured) bool {
			cur.Object["spec"] = u.Object["spec"]
			return true
		})
		if errors.Is(err, errGone) {
			if _, err = w.userCreate(ctx, typ.FederatedGVR(), u); apierrors.IsAlreadyExists(err) {
				return true, errGone // still being deleted
			}
		}
		return true, err
	case OpWidgetOverride:
		return true, w.userEdit(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name, func(u *unstructured.Unstructured) bool {
			setWidgetOverride(u, e.Cluster, e.Value)
			return true
		})
	case OpWidgetDelete:
		return true, w.userDelete(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name)
	}
	return false, nil
}

// enable writes what `kubectl fed enable` writes with rule set set: the FederatedWidget CRD
// (created once) and the FederatedTypeConfig (created, or its spec replaced). Rules that do
// not compile or fail on some widgets start a watch on the member objects (RuleInvalidRules);
// valid ones end it.
func (w *World) enable(ctx context.Context, set int64) error {
	crd, ftc, err := enableObjects(set)
	if err != nil {
		return err
	}
	if _, err := w.userCreate(ctx, crdGVR, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	err = w.userEdit(ctx, federation.FederatedTypeConfigGVR, "", ftc.GetName(), func(cur *unstructured.Unstructured) bool {
		cur.Object["spec"] = ftc.Object["spec"]
		return true
	})
	if errors.Is(err, errGone) {
		_, err = w.userCreate(ctx, federation.FederatedTypeConfigGVR, ftc)
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.kindsState.set = set
	w.kindsState.kept, w.kindsState.keptRule = nil, ""
	w.mu.Unlock()
	if set == rulesNoParse || set == rulesFailing {
		w.keep(RuleInvalidRules)
	}
	return nil
}

// keep records every member widget and the ConfigMaps the widgets refer to, for rule.
func (w *World) keep(rule Rule) {
	typ := widgetType(rulesBase)
	kept := map[string]keptObject{}
	members := w.members()
	for _, cname := range sortedKeys(members) {
		m := members[cname]
		for _, obj := range m.Objects(typ.TargetGVR()) {
			if !managed(obj) || obj.GetDeletionTimestamp() != nil || (rule == RuleInvalidRules && w.pending(obj)) {
				continue
			}
			kept[memberKey(cname, typ.TargetGVR(), obj.GetNamespace(), obj.GetName())] = keptObject{cluster: cname, kind: "Widget",
				ns: obj.GetNamespace(), name: obj.GetName(), uid: string(obj.GetUID()), state: widgetState(obj, rule)}
			ref, _, _ := unstructured.NestedString(obj.Object, "spec", "configRef")
			if ref == "" {
				continue
			}
			if cm, err := m.Peek(configMapsGVR, obj.GetNamespace(), ref); err == nil && managed(cm) && cm.GetDeletionTimestamp() == nil {
				kept[memberKey(cname, configMapsGVR, cm.GetNamespace(), cm.GetName())] = keptObject{cluster: cname, kind: "ConfigMap",
					ns: cm.GetNamespace(), name: cm.GetName(), uid: string(cm.GetUID())}
			}
		}
	}
	w.mu.Lock()
	w.kindsState.kept, w.kindsState.keptRule = kept, rule
	w.mu.Unlock()
}

// widgetState is what of a member widget a disabled type or invalid rules (rule) must not
// change: its labels, annotations and spec, but spec.serial (its own controller's) and, under
// invalid rules, its replica count: the loops still run with the last valid configuration,
// and the scheduler's share follows the fleet (clusters Ready or not, their capacity), not
// the kind's rules (so is the render's hash, federation.DesiredHashAnnotation).
func widgetState(obj *unstructured.Unstructured, rule Rule) string {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	delete(spec, "serial")
	annotations := obj.GetAnnotations()
	if rule == RuleInvalidRules {
		delete(spec, "scale")
		delete(annotations, federation.DesiredHashAnnotation) // the render's hash: of the count too
	}
	return fmt.Sprintf("%v %v %v", obj.GetLabels(), annotations, spec)
}

// widgetController is the members' own controller of widgets: it gives each widget a serial
// number (spec.serial, which rendering retains), then reports it: its generation observed,
// every replica ready, a Ready condition. It writes as the member's controllers do, past the
// federation's write path, and not in a member cut off.
func (w *World) widgetController() error {
	if !kindsOn(w.Config) {
		return nil
	}
	gvr := widgetType(rulesBase).TargetGVR()
	members := w.members()
	for _, cname := range sortedKeys(members) {
		m := members[cname]
		if m.Partitioned() {
			continue
		}
		for _, obj := range m.Objects(gvr) {
			if err := reportWidget(m, cname, obj); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// reportWidget is the widget controller's pass over one widget.
func reportWidget(m *fake.Cluster, cluster string, obj *unstructured.Unstructured) error {
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	gvr := widgetType(rulesBase).TargetGVR()
	if s, _, _ := unstructured.NestedString(obj.Object, "spec", "serial"); s == "" {
		return m.Drift(gvr, obj.GetNamespace(), obj.GetName(), func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, cluster+"-"+obj.GetName(), "spec", "serial")
		})
	}
	count, found, _ := unstructured.NestedInt64(obj.Object, "spec", "scale", "count")
	if !found {
		count = 1
	}
	want := map[string]any{"observedGeneration": obj.GetGeneration(), "readyCount": count,
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Assembled"}}}
	if fmt.Sprint(obj.Object["status"]) == fmt.Sprint(want) {
		return nil
	}
	return m.Drift(gvr, obj.GetNamespace(), obj.GetName(), func(u *unstructured.Unstructured) {
		u.Object["status"] = want
	})
}

// crdGVR is apiextensions.k8s.io/v1 CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installWidgets creates the Widget CRD in c (the host, or a member joining), when the soak
// has the configured kind; one there already stays.
func (w *World) installWidgets(ctx context.Context, c *fake.Cluster) error {
	if !kindsOn(w.Config) {
		return nil
	}
	u, _, err := crdObject(widgetCRD)
	if err != nil {
		return err
	}
	if _, err := c.Create(ctx, crdGVR, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("soak: install %s in %s: %w", u.GetName(), c.Name(), err)
	}
	return nil
}

// pending reports whether sync may rightly still change member widget obj whatever the rules:
// its FederatedWidget is gone or being deleted, or sync has not propagated its generation.
func (w *World) pending(obj *unstructured.Unstructured) bool {
	typ := widgetType(rulesBase)
	u, err := w.Host.Peek(typ.FederatedGVR(), obj.GetNamespace(), obj.GetName())
	if err != nil || u.GetDeletionTimestamp() != nil {
		return true
	}
	fed, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return true
	}
	prop := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionPropagated)
	return fed.Status.ObservedGeneration != fed.Generation || prop == nil || prop.Status != "True" || prop.ObservedGeneration != fed.Generation
}
