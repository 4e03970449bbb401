package soak

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/migrate"
)

// applyFeature carries out the events of the features (see [Features]); ok is false for an
// op that is not one of theirs.
func (w *World) applyFeature(ctx context.Context, e Event) (ok bool, err error) {
	if ok, err := w.applyKinds(ctx, e); ok {
		return true, err
	}
	switch e.Op {
	case OpPolicy:
		return true, w.writePolicy(ctx, e, policyObject(e))
	case OpPolicyInvalid:
		return true, w.breakPolicy(ctx, e)
	case OpPolicyDelete:
		return true, w.userDelete(ctx, policyGVR(e.Kind), e.Key.Namespace, e.Key.Name)
	case OpNative:
		return true, w.writeNative(ctx, nativeObject(e.Kind, e.Key, e.Value, e.Deps, e.Target))
	case OpNativeDelete:
		return true, w.userDelete(ctx, nativeGVR(e.Kind), e.Key.Namespace, e.Key.Name)
	case OpIsolate:
		return true, w.isolate()
	case OpSlow:
		return true, w.setSlow(e.Cluster, e.Duration)
	case OpLookalike:
		return true, w.seedLookalike(e)
	case OpKubeFed:
		return true, w.seedKubeFed(e)
	case OpMigrate:
		return true, w.migrate(ctx, e)
	}
	return false, nil
}

// writePolicy creates policy u, or replaces its spec.
func (w *World) writePolicy(ctx context.Context, e Event, u *unstructured.Unstructured) error {
	gvr := policyGVR(e.Kind)
	err := w.userEdit(ctx, gvr, u.GetNamespace(), u.GetName(), func(cur *unstructured.Unstructured) bool {
		cur.Object["spec"] = u.Object["spec"]
		return true
	})
	if errors.Is(err, errGone) {
		_, err = w.userCreate(ctx, gvr, u)
		if apierrors.IsAlreadyExists(err) {
			return errGone // still being deleted
		}
	}
	if apierrors.IsInvalid(err) {
		return errGone // the API server refused it: nothing changed
	}
	return err
}

// breakPolicy makes a policy invalid in a way the API server's schema accepts (when it
// refuses it after all, the event is skipped: the policy stays as it was).
func (w *World) breakPolicy(ctx context.Context, e Event) error {
	err := w.userEdit(ctx, policyGVR(e.Kind), e.Key.Namespace, e.Key.Name, func(u *unstructured.Unstructured) bool {
		breakPolicy(u, e.Value)
		return true
	})
	if apierrors.IsInvalid(err) {
		return errGone
	}
	return err
}

// writeNative creates a native object on the host, or replaces its content (a claim's spec
// is immutable: it is left as it is).
func (w *World) writeNative(ctx context.Context, u *unstructured.Unstructured) error {
	gvr := nativeGVR(u.GetKind())
	err := w.userEdit(ctx, gvr, u.GetNamespace(), u.GetName(), func(cur *unstructured.Unstructured) bool {
		if u.GetKind() == "PersistentVolumeClaim" {
			return false
		}
		for k, v := range u.Object {
			if k != "metadata" && k != "status" {
				cur.Object[k] = v
			}
		}
		cur.SetLabels(u.GetLabels())
		return true
	})
	if errors.Is(err, errGone) {
		_, err = w.userCreate(ctx, gvr, u)
		if apierrors.IsAlreadyExists(err) {
			return errGone // still being deleted
		}
	}
	return err
}

// outage is the control plane cut off from every member at once (OpIsolate), until every
// member it cut off is back and Ready.
type outage struct {
	cut map[string]bool // members still cut off
	// before is every object's schedule when the outage began; exempt the objects the
	// user edited since.
	before map[string]scheduleView
	exempt map[string]bool
	since  int
	// copies are, by object, the clusters that ran a managed copy of it when the outage
	// began, with its spec.replicas (-1 for a kind without): only there can anything move. A
	// cluster scheduled where sync had made no copy (not yet, or it could not) runs nothing,
	// and under the not-ready taint's NoSchedule it is a new placement, refused.
	copies map[string]map[string]int64
	// lostAt is, by cluster lost now, every object's schedule at the check it is judged
	// from: the one before it was found lost (in Run mode the one that found it lost).
	lostAt map[string]map[string]scheduleView
}

// isolate cuts the control plane off from every member.
func (w *World) isolate() error {
	fed := w.federatedObjects()
	o := &outage{cut: map[string]bool{}, before: schedulesOf(fed), exempt: map[string]bool{}, since: w.step(), copies: w.copiesOf(fed),
		lostAt: map[string]map[string]scheduleView{}}
	// An edit the scheduler has not acted on yet takes effect during the outage: the user's
	// move, not the outage's.
	for k, u := range keyed(fed) {
		if scheduledGeneration(u) < u.GetGeneration() {
			o.exempt[k] = true
		}
	}
	// An object already moving, or placed in a cluster already lost (not Ready) when the
	// outage began, moves for that cluster's own outage: not this one's to judge.
	lost := map[string]bool{}
	for _, u := range w.Host.Objects(federation.ClusterGVR) {
		if c, err := federation.ClusterFromUnstructured(u); err == nil && !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			lost[c.Name] = true
		}
	}
	for k, v := range o.before {
		for c := range v.replicas {
			if lost[c] || len(v.evictions) > 0 {
				o.exempt[k] = true
			}
		}
	}
	for _, name := range w.Fleet.Names() {
		if err := w.setPartition(name, true); err != nil {
			return err
		}
		o.cut[name] = true
	}
	w.mu.Lock()
	w.outage = o
	w.mu.Unlock()
	return nil
}

// copiesOf returns, for each federated object of fed (by "Kind namespace/name"), the member
// clusters that run a managed copy of it, with the copy's spec.replicas (-1 without).
func (w *World) copiesOf(fed map[string][]*unstructured.Unstructured) map[string]map[string]int64 {
	members := w.members()
	out := map[string]map[string]int64{}
	for _, typ := range kinds() {
		for _, u := range fed[typ.Federated.Kind] {
			ns := u.GetNamespace()
			if !typ.Namespaced {
				ns = ""
			}
			in := map[string]int64{}
			for name, m := range members {
				if c, err := m.Peek(typ.TargetGVR(), ns, u.GetName()); err == nil && managed(c) {
					in[name] = -1
					if n, ok, _ := unstructured.NestedInt64(c.Object, "spec", "replicas"); ok {
						in[name] = n
					}
				}
			}
			out[typ.Federated.Kind+" "+objectRef(u.GetNamespace(), u.GetName())] = in
		}
	}
	return out
}

// keyed returns the federated objects of fed by "Kind namespace/name".
func keyed(fed map[string][]*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for kind, objs := range fed {
		for _, u := range objs {
			out[kind+" "+objectRef(u.GetNamespace(), u.GetName())] = u
		}
	}
	return out
}

// scheduledGeneration is the observedGeneration of u's Scheduled condition, 0 without one.
func scheduledGeneration(u *unstructured.Unstructured) int64 {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		if c, _ := x.(map[string]any); c["type"] == federation.ConditionScheduled {
			g, _, _ := unstructured.NestedInt64(c, "observedGeneration")
			return g
		}
	}
	return 0
}

// Fault images and rollout times of the members' simulated workloads.
const (
	// defaultReadyAfter is how long a new generation of a workload takes to be reported.
	defaultReadyAfter = 20 * time.Second
	// brokenImage never starts anywhere; flakyImage never starts in every third member.
	brokenImage = "nginx:1.29"
	flakyImage  = "nginx:1.28"
)

// workloads is member name's simulated controllers: slow rolling updates where the script
// made it slow, and the images that never start while faults are on.
func (w *World) workloads(name string) fake.Workloads {
	w.mu.Lock()
	defer w.mu.Unlock()
	cfg := fake.Workloads{Apps: true, ReadyAfter: defaultReadyAfter, LoadBalancers: true}
	if d := w.slowness[name]; d > 0 && w.faults {
		cfg.ReadyAfter = d
	}
	if w.faults && !w.Config.Without.AppFailover {
		cfg.FailingImages = []string{brokenImage}
		if w.index[name]%3 == 0 {
			cfg.FailingImages = append(cfg.FailingImages, flakyImage)
		}
	}
	return cfg
}

// setSlow makes cluster's rolling updates take d from now on (0: the default).
func (w *World) setSlow(cluster string, d time.Duration) error {
	m, ok := w.Fleet.Member(cluster)
	if !ok {
		return errGone
	}
	w.mu.Lock()
	w.slowness[cluster] = d
	w.mu.Unlock()
	m.SetWorkloads(w.workloads(cluster))
	return nil
}

// seedLookalike has someone make an object of e.Key's name in a member where there is none:
// no federation manages it, and none may touch it.
func (w *World) seedLookalike(e Event) error {
	m, ok := w.members()[e.Cluster]
	if !ok {
		return errGone
	}
	gvr := nativeGVR(e.Kind)
	if _, err := m.Peek(gvr, e.Key.Namespace, e.Key.Name); err == nil {
		return errGone
	}
	return w.seedUntouched(m, gvr, lookalike(e.Kind, e.Key, "team-first"))
}

// kubeFedCopy is a member object KubeFed made, for the objects migrated later.
type kubeFedCopy struct {
	cluster  string
	typ      federation.TypeConfig
	ns, name string
	uid      string
}

// seedKubeFed puts in the members of e.Placement the objects KubeFed made of e.
func (w *World) seedKubeFed(e Event) error {
	typ := typeOf(e.Kind)
	for _, c := range e.Placement.Clusters {
		m, ok := w.Fleet.Member(c)
		if !ok {
			continue
		}
		if err := m.Seed(kubeFedMember(typ, e.Key, e.Value)); err != nil {
			return err
		}
		obj, err := m.Peek(typ.TargetGVR(), e.Key.Namespace, e.Key.Name)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.kubeFed = append(w.kubeFed, kubeFedCopy{cluster: c, typ: typ, ns: e.Key.Namespace, name: e.Key.Name, uid: string(obj.GetUID())})
		w.mu.Unlock()
	}
	return nil
}

// migrate applies what `kubectl fed migrate` makes of KubeFed's Federated<Kind> of e.
func (w *World) migrate(ctx context.Context, e Event) error {
	res := migrate.Convert([]*unstructured.Unstructured{kubeFedObject(e.Kind, e.Key, e.Value, e.Placement.Clusters)}, migrate.Options{})
	if len(res.Federated) != 1 {
		return fmt.Errorf("migrate %s %s: %d objects out, want 1 (warnings %v)", e.Kind, e.Key, len(res.Federated), res.Warnings)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&res.Federated[0])
	if err != nil {
		return err
	}
	typ := typeOf(e.Kind)
	_, err = w.userCreate(ctx, typ.FederatedGVR(), &unstructured.Unstructured{Object: m})
	if apierrors.IsAlreadyExists(err) {
		return errGone
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.migrated[e.Kind+" "+e.Key.String()] = true
	w.mu.Unlock()
	return nil
}

// migratedObject reports whether the federated object of typ named ns/name came from a
// migration.
func (w *World) migratedObject(typ federation.TypeConfig, ns, name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.migrated[typ.Federated.Kind+" "+objectRef(ns, name)]
}
