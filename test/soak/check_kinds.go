package soak

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	kindrules "github.com/fedkit/fedkit/kinds"
	"github.com/fedkit/fedkit/status"
)

// The configured kind's rules (see the package documentation).
const (
	// RuleDisabledKept (every step): while a configured type is disabled (its
	// FederatedTypeConfig deleted), no member object of its kind, and no ConfigMap such an
	// object refers to, is deleted or changed by the federation.
	RuleDisabledKept Rule = "disabled-kept"
	// RuleInvalidRules (every step): rules that do not compile or fail on some objects delete
	// and change no member object of the kind nor the ConfigMaps they refer to, and an object
	// whose member a rule fails on is never reported Ready.
	RuleInvalidRules Rule = "invalid-rules-kept"
	// RuleTypeConfigReported (every step): a FederatedTypeConfig whose generation the control
	// plane observed says in its Ready condition whether its rules compile (False,
	// InvalidRules, naming the rule) or its type runs (True).
	RuleTypeConfigReported Rule = "typeconfig-reported"
	// RuleKindStatus: a configured kind's federated objects aggregate what their members
	// report, judged by the kind's rules (status.KindExtractor).
	RuleKindStatus Rule = "kind-status-aggregates"
)

// typeConfig reads the widgets' FederatedTypeConfig on the host and the type it configures.
func (w *World) typeConfig() (*federation.FederatedTypeConfig, federation.TypeConfig, bool) {
	u, err := w.Host.Peek(federation.FederatedTypeConfigGVR, "", federation.TypeConfigName(widgetType(rulesBase)))
	if err != nil {
		return nil, federation.TypeConfig{}, false
	}
	ftc := &federation.FederatedTypeConfig{}
	if err := federation.FromUnstructured(u, ftc); err != nil {
		return nil, federation.TypeConfig{}, false
	}
	t, err := ftc.TypeConfig()
	return ftc, t, err == nil
}

// checkKinds checks the configured kind's rules after a step.
func (w *World) checkKinds() {
	if !kindsOn(w.Config) {
		return
	}
	w.checkKept()
	ftc, typ, ok := w.typeConfig()
	if !ok {
		return
	}
	w.checkReported(ftc, typ)
	if _, err := kindrules.Compile(typ); err == nil {
		w.checkNotReadyOnFailure(typ)
	}
}

// checkKept: the member objects a disabled type or invalid rules keep are there, as they were.
func (w *World) checkKept() {
	w.mu.Lock()
	kept, rule := w.kindsState.kept, w.kindsState.keptRule
	leaving := sortedKeys(w.leaving)
	w.mu.Unlock()
	if rule == "" {
		return
	}
	members := w.members()
	for _, k := range sortedKeys(kept) {
		o := kept[k]
		m := members[o.cluster]
		if m == nil || contains(leaving, o.cluster) || (rule == RuleInvalidRules && w.moving(o.cluster)) {
			continue
		}
		gvr := widgetType(rulesBase).TargetGVR()
		if o.kind == "ConfigMap" {
			gvr = configMapsGVR
		}
		obj, err := m.Peek(gvr, o.ns, o.name)
		what := fmt.Sprintf("%s %s in %s", o.kind, objectRef(o.ns, o.name), o.cluster)
		switch {
		case err != nil || string(obj.GetUID()) != o.uid:
			w.violate(rule, what, "deleted (%v)", err)
		case obj.GetDeletionTimestamp() != nil:
			w.violate(rule, what, "being deleted (finalizers %v)", obj.GetFinalizers())
		case o.state != "" && widgetState(obj, rule) != o.state:
			w.violate(rule, what, "changed: %s, was %s", widgetState(obj, rule), o.state)
		}
	}
}

// moving reports whether the federation may rightly move what runs in cluster whatever the
// rules of a kind: a Cluster not Ready, or with a NoExecute taint (a drain, an eviction).
func (w *World) moving(cluster string) bool {
	u, err := w.Host.Peek(federation.ClusterGVR, "", cluster)
	if err != nil {
		return true
	}
	c, err := federation.ClusterFromUnstructured(u)
	if err != nil || !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
		return true
	}
	for _, t := range c.Spec.Taints {
		if t.Effect == "NoExecute" {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkReported: once the control plane observed the configuration's generation, its Ready
// condition says what kindrules.Compile says of its rules.
func (w *World) checkReported(ftc *federation.FederatedTypeConfig, typ federation.TypeConfig) {
	if ftc.Status.ObservedGeneration != ftc.Generation {
		return
	}
	name := "FederatedTypeConfig " + ftc.Name
	ready := meta.FindStatusCondition(ftc.Status.Conditions, federation.ConditionReady)
	_, err := kindrules.Compile(typ)
	switch {
	case ready == nil:
		w.violate(RuleTypeConfigReported, name, "generation %d observed, no Ready condition", ftc.Generation)
	case err != nil && (ready.Status != "False" || ready.Reason != controlplane.ReasonInvalidRules):
		w.violate(RuleTypeConfigReported, name, "its rules do not compile (%v), yet Ready is %s (%s: %s)", err, ready.Status, ready.Reason, ready.Message)
	case err != nil && !strings.Contains(ready.Message, "spec.rules."):
		w.violate(RuleTypeConfigReported, name, "Ready False does not name the rule at fault: %s", ready.Message)
	case err == nil && (ready.Status != "True" || ready.Reason != controlplane.ReasonTypeRunning):
		w.violate(RuleTypeConfigReported, name, "its rules compile, yet Ready is %s (%s: %s)", ready.Status, ready.Reason, ready.Message)
	}
}

// checkNotReadyOnFailure: no federated object of typ is Ready for its generation while a rule
// of typ fails on one of its members that status.clusters counts fresh (kinds' Evaluate).
func (w *World) checkNotReadyOnFailure(typ federation.TypeConfig) {
	rules, err := kindrules.Compile(typ)
	if err != nil || rules == nil {
		return
	}
	members := w.members()
	failing := map[string]string{}
	for _, u := range w.Host.Objects(typ.FederatedGVR()) {
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			continue
		}
		name := typ.Federated.Kind + " " + objectRef(fed.Namespace, fed.Name)
		ready := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionReady)
		if ready == nil || ready.Status != "True" || ready.ObservedGeneration != fed.Generation {
			continue
		}
		for _, e := range fed.Status.Clusters {
			m := members[e.Name]
			if e.Stale || m == nil {
				continue
			}
			obj, err := m.Peek(typ.TargetGVR(), fed.Namespace, fed.Name)
			if err != nil {
				continue
			}
			if _, err := rules.Evaluate(obj); err != nil {
				failing[name] = fmt.Sprintf("in %s: %v", e.Name, err)
			}
		}
	}
	w.readyWhileFailing(failing)
}

// readyWhileFailing reports the objects checkNotReadyOnFailure found Ready while a rule fails
// on a member: those found so at readyFailingChecks checks in a row (the collector judges
// with new rules from the first round that reads them, and its status write may fail).
func (w *World) readyWhileFailing(failing map[string]string) {
	w.mu.Lock()
	prev := w.kindsState.readyFailing
	next := map[string]int{}
	for name := range failing {
		next[name] = prev[name] + 1
	}
	w.kindsState.readyFailing = next
	w.mu.Unlock()
	for _, name := range sortedKeys(failing) {
		if next[name] >= readyFailingChecks {
			w.violate(RuleInvalidRules, name, "Ready True at %d checks in a row, yet a rule fails on a member it counts fresh: %s", next[name], failing[name])
		}
	}
}

// readyFailingChecks: see readyWhileFailing.
const readyFailingChecks = 3

// checkKinds checks the configured kind at quiescence: every rule of checkType for its
// federated objects, managed member objects without one, and their status by the kind's rules.
func (c *checker) checkKinds() {
	if !kindsOn(c.w.Config) {
		return
	}
	ftc, typ, ok := c.w.typeConfig()
	if !ok {
		return
	}
	if ftc.Status.ObservedGeneration != ftc.Generation {
		c.violate(RuleTypeConfigReported, "FederatedTypeConfig "+ftc.Name, "at quiescence, status.observedGeneration %d, generation %d", ftc.Status.ObservedGeneration, ftc.Generation)
	}
	if _, err := kindrules.Compile(typ); err != nil {
		return // invalid rules at the end: the episodes mend them; checkReported says the rest
	}
	c.checkType(typ)
	c.checkKindMembers(typ)
	for _, u := range c.w.Host.Objects(typ.FederatedGVR()) {
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil || fed.DeletionTimestamp != nil {
			continue
		}
		c.checkKindStatus(typ, fed)
	}
}

// checkKindMembers: no managed member object of typ lives on without its federated object,
// unless a MembersLeftBehind event announced it.
func (c *checker) checkKindMembers(typ federation.TypeConfig) {
	for _, cname := range sortedKeys(c.members) {
		for _, obj := range c.members[cname].Objects(typ.TargetGVR()) {
			if obj.GetDeletionTimestamp() != nil {
				c.violate(RuleDeletionCompleted, memberRef(typ.Target.Kind, obj, cname), "still being deleted (finalizers %v)", obj.GetFinalizers())
			}
			fname := obj.GetLabels()[federation.FederatedNameLabel]
			if !managed(obj) || fname == "" {
				continue
			}
			fkey := objectRef(obj.GetLabels()[federation.FederatedNamespaceLabel], fname)
			if _, err := c.w.Host.Peek(typ.FederatedGVR(), obj.GetNamespace(), fname); err != nil && !c.leftBehind(typ.Federated.Kind+" "+fkey, cname) {
				c.violate(RulePlacedOnly, memberRef(typ.Target.Kind, obj, cname), "managed, and its %s is gone", typ.Federated.Kind)
			}
		}
	}
}

// checkKindStatus: status.aggregated sums what the kind's rules read from the members with
// fresh entries, each fresh entry carries its member's values, and Ready is True exactly when
// every placed member is ready by the rules (once sync propagated the generation).
func (c *checker) checkKindStatus(typ federation.TypeConfig, fed *federation.FederatedObject) {
	name := typ.Federated.Kind + " " + objectRef(fed.Namespace, fed.Name)
	extract := status.KindExtractor(typ)
	var want federation.AggregatedStatus
	allReady := true
	for _, e := range fed.Status.Clusters {
		m := c.members[e.Name]
		if e.Stale || m == nil || c.cut[e.Name] || !c.ready(e.Name) {
			allReady = false
			continue
		}
		want.Clusters++
		obj, err := m.Peek(typ.TargetGVR(), fed.Namespace, fed.Name)
		if err != nil || !managed(obj) {
			allReady = false
			continue
		}
		o, err := extract(obj)
		if err != nil {
			allReady = false
			c.violate(RuleKindStatus, name, "a rule fails on its member in %s at quiescence: %v", e.Name, err)
			continue
		}
		allReady = allReady && o.Ready
		want.Replicas += ptrv0(o.Replicas)
		want.ReadyReplicas += ptrv0(o.ReadyReplicas)
		want.AvailableReplicas += ptrv0(o.AvailableReplicas)
		want.UpdatedReplicas += ptrv0(o.UpdatedReplicas)
		if got := ptrv0(e.ReadyReplicas); got != ptrv0(o.ReadyReplicas) {
			c.violate(RuleKindStatus, name, "%s: readyReplicas %d, the rules read %d", e.Name, got, ptrv0(o.ReadyReplicas))
		}
		if e.RemoteStatus == nil || fmt.Sprint(e.RemoteStatus.Object) != fmt.Sprint(o.Remote) {
			c.violate(RuleKindStatus, name, "%s: remoteStatus %v, the rules read %v", e.Name, remoteOf(e), o.Remote)
		}
	}
	got := fed.Status.Aggregated
	switch {
	case len(fed.Status.Clusters) > 0 && 2*int(want.Clusters) <= len(fed.Status.Clusters):
		return // no quorum: the last good values stay
	case got == nil:
		c.violate(RuleKindStatus, name, "no status.aggregated; the rules read %+v", want)
		return
	case got.Replicas != want.Replicas || got.ReadyReplicas != want.ReadyReplicas || got.AvailableReplicas != want.AvailableReplicas || got.UpdatedReplicas != want.UpdatedReplicas:
		c.violate(RuleKindStatus, name, "status.aggregated %+v, the rules read %+v", *got, want)
	}
	ready := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionReady)
	prop := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionPropagated)
	propagated := prop != nil && prop.Status == "True" && len(fed.Status.Clusters) > 0
	switch {
	case ready == nil:
		c.violate(RuleKindStatus, name, "no Ready condition")
	case ready.Status == "True" && !allReady:
		c.violate(RuleKindStatus, name, "Ready True, yet a placed member is not ready by the rules")
	case ready.Status != "True" && allReady && propagated:
		c.violate(RuleKindStatus, name, "Ready %s (%s: %s), yet every placed member is ready by the rules", ready.Status, ready.Reason, ready.Message)
	}
}

func ptrv0(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func remoteOf(e federation.MemberStatus) any {
	if e.RemoteStatus == nil {
		return nil
	}
	return e.RemoteStatus.Object
}
