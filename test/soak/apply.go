package soak

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// Apply carries out one event of the script. It returns an error only when the harness
// itself cannot go on (the user's write failing for a reason that does not pass); an event
// with nothing to act on (a drift of a member object that does not exist) is skipped and
// reported as skipped.
func (w *World) Apply(ctx context.Context, e Event) (skipped bool, err error) {
	err = w.apply(ctx, e)
	if errors.Is(err, errGone) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("soak: %s: %w", e, err)
	}
	return false, nil
}

func (w *World) apply(ctx context.Context, e Event) error {
	if ok, err := w.applyFeature(ctx, e); ok {
		return err
	}
	typ := typeOf(e.Kind)
	switch e.Op {
	case OpAddCluster:
		return w.addMember(ctx, e.Cluster, int(e.Value))
	case OpRemoveCluster:
		w.mu.Lock()
		w.leaving[e.Cluster] = true
		w.mu.Unlock()
		return w.userDelete(ctx, federation.ClusterGVR, "", e.Cluster)
	case OpPartition, OpHeal:
		return w.setPartition(e.Cluster, e.Op == OpPartition)
	case OpTaint:
		return w.setTaint(ctx, e.Cluster, e.Value > 0)
	case OpCreate:
		return w.create(ctx, typ, e)
	case OpEditTemplate:
		return w.userEdit(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name, func(u *unstructured.Unstructured) bool {
			_ = unstructured.SetNestedMap(u.Object, workloadTemplate(e), "spec", "template")
			return true
		})
	case OpEditOverride:
		return w.userEdit(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name, func(u *unstructured.Unstructured) bool {
			setOverride(u, e.Kind, e.Cluster, e.Value)
			if e.Deps > 0 && e.Value%2 == 1 {
				pointAtAltSecret(u, e.Cluster, e.Deps)
			}
			return true
		})
	case OpEditPlacement:
		return w.userEdit(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name, func(u *unstructured.Unstructured) bool {
			p := e.Placement.render()
			if f, ok, _ := unstructured.NestedMap(u.Object, "spec", "placement", "failover"); ok {
				p["failover"] = f // the user edits where it goes, not how it fails over
			}
			_ = unstructured.SetNestedMap(u.Object, p, "spec", "placement")
			return true
		})
	case OpEditPreference:
		return w.editPreference(ctx, e)
	case OpDelete:
		return w.delete(ctx, typ, e)
	case OpDrift, OpDriftDelete, OpForeignWrite:
		return w.memberWrite(typ, e)
	case OpConflicts:
		c := w.Host
		if e.Cluster != "" {
			m, ok := w.Fleet.Member(e.Cluster)
			if !ok {
				return errGone
			}
			c = m
		}
		conflict := apierrors.NewConflict(schema.GroupResource{}, "", errors.New("soak: injected conflict"))
		c.FailOn(fake.VerbUpdate, conflict, int(e.Value))
		if c == w.Host {
			c.FailOn(fake.VerbUpdateStatus, conflict, int(e.Value))
			c.FailOn(fake.VerbPatch, conflict, int(e.Value))
		}
		return nil
	case OpLatency:
		m, ok := w.Fleet.Member(e.Cluster)
		if !ok {
			return errGone
		}
		if w.Config.Run {
			// Reads, watches and probes wait in the fake; writes wait in the World's hooks
			// (World.delay), so that a write is known while it waits.
			for _, v := range []fake.Verb{fake.VerbGet, fake.VerbList, fake.VerbWatch, fake.VerbHealth, fake.VerbVersion, fake.VerbDiscovery} {
				m.SetLatency(v, e.Duration)
			}
		}
		w.mu.Lock()
		w.latency[e.Cluster] = e.Duration
		w.mu.Unlock()
		return nil
	case OpClockJump:
		w.Clock.Step(e.Duration)
		w.mu.Lock()
		w.jumped += e.Duration
		w.mu.Unlock()
		return nil
	}
	return fmt.Errorf("unknown op %q", e.Op)
}

// setPartition cuts member name off, or heals it.
func (w *World) setPartition(name string, on bool) error {
	m, ok := w.Fleet.Member(name)
	if !ok {
		return errGone
	}
	w.mu.Lock()
	w.partition[name] = on
	w.mu.Unlock()
	if on {
		m.Partition()
	} else {
		m.Heal()
	}
	return nil
}

// drainTaint is the taint a user puts on a Cluster's spec.taints to drain it.
const drainTaint = "soak/drain"

// setTaint puts the drain taint (NoExecute) on cluster name's spec.taints, or removes it.
func (w *World) setTaint(ctx context.Context, name string, on bool) error {
	if _, ok := w.Fleet.Member(name); !ok {
		return errGone
	}
	err := w.userEdit(ctx, federation.ClusterGVR, "", name, func(u *unstructured.Unstructured) bool {
		taints, _, _ := unstructured.NestedSlice(u.Object, "spec", "taints")
		had := len(taints)
		taints = slices.DeleteFunc(taints, func(x any) bool {
			m, _ := x.(map[string]any)
			return m["key"] == drainTaint
		})
		if on {
			taints = append(taints, map[string]any{"key": drainTaint, "value": "true", "effect": "NoExecute"})
		} else if len(taints) == had {
			return false
		}
		_ = unstructured.SetNestedSlice(u.Object, taints, "spec", "taints")
		return true
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	if on {
		w.tainted[name] = true
	} else {
		delete(w.tainted, name)
	}
	w.mu.Unlock()
	return nil
}

// create creates a federated object (and its RSP), or brings a deleted name back. A name
// whose previous object is still being deleted cannot come back yet: skipped.
func (w *World) create(ctx context.Context, typ federation.TypeConfig, e Event) error {
	if typ.Federated.Kind == federation.NamespaceType.Federated.Kind {
		if _, err := w.userCreate(ctx, federation.NamespaceType.TargetGVR(), namespaceObject(e.Key.Namespace)); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if e.Total > 0 {
		if err := w.putPreference(ctx, e.Key, e.Total, ""); err != nil {
			return err
		}
	}
	obj := federatedObject(typ, e.Key, e.Value, e.Placement)
	_ = unstructured.SetNestedMap(obj.Object, workloadTemplate(e), "spec", "template")
	if e.Deps > 0 {
		_ = unstructured.SetNestedField(obj.Object, true, "spec", "propagateDependencies")
	}
	if e.Rollout {
		_ = unstructured.SetNestedMap(obj.Object, stagedRollout(), "spec", "rollout")
	}
	if e.Failover != nil {
		f, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e.Failover)
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedMap(obj.Object, f, "spec", "placement", "failover")
	}
	_, err := w.userCreate(ctx, typ.FederatedGVR(), obj)
	if apierrors.IsAlreadyExists(err) {
		return errGone
	}
	return err
}

// editPreference changes a FederatedDeployment's RSP: total replicas and the heavy cluster;
// a total of 0 deletes it.
func (w *World) editPreference(ctx context.Context, e Event) error {
	if e.Total == 0 {
		return w.userDelete(ctx, federation.ReplicaSchedulingPreferenceGVR, e.Key.Namespace, e.Key.Name)
	}
	return w.putPreference(ctx, e.Key, e.Total, e.Cluster)
}

func (w *World) putPreference(ctx context.Context, key federation.Key, total int64, heavy string) error {
	want := preference(key, total, heavy)
	err := w.userEdit(ctx, federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name, func(u *unstructured.Unstructured) bool {
		u.Object["spec"] = want.Object["spec"]
		return true
	})
	if errors.Is(err, errGone) {
		_, err = w.userCreate(ctx, federation.ReplicaSchedulingPreferenceGVR, want)
		if apierrors.IsAlreadyExists(err) {
			return nil // a deleted RSP still going: the next edit puts it back
		}
	}
	return err
}

// delete deletes a federated object (and its RSP), first annotating it to orphan its member
// objects when asked; the managed member objects it has then in the clusters its schedule
// lists are remembered, to check they remain. A copy in a cluster the object is leaving may
// have its delete decided already, and a delete under way (sent, not yet answered) is not
// called back either: neither is checked.
func (w *World) delete(ctx context.Context, typ federation.TypeConfig, e Event) error {
	if e.Orphan {
		var scheduled map[string]bool // nil: no schedule, every cluster
		err := w.userEdit(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name, func(u *unstructured.Unstructured) bool {
			if _, ok, _ := unstructured.NestedMap(u.Object, "status", "schedule"); ok {
				scheduled = map[string]bool{}
				cs, _, _ := unstructured.NestedSlice(u.Object, "status", "schedule", "clusters")
				for _, c := range cs {
					if m, ok := c.(map[string]any); ok {
						name, _ := m["name"].(string)
						scheduled[name] = true
					}
				}
			}
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[federation.OrphanAnnotation] = "true"
			u.SetAnnotations(ann)
			return true
		})
		if err != nil {
			return err
		}
		ns, name := memberName(typ, e.Key)
		for cname, c := range w.members() {
			if scheduled != nil && !scheduled[cname] {
				continue
			}
			obj, err := c.Peek(typ.TargetGVR(), ns, name)
			if err != nil || !managed(obj) {
				continue
			}
			w.mu.Lock()
			if w.inflight[memberKey(cname, typ.TargetGVR(), ns, name)] > 0 {
				w.mu.Unlock()
				w.Config.Logf("%s %s: its delete in %s is under way already; it is not checked as orphaned", typ.Federated.Kind, e.Key, cname)
				continue
			}
			w.orphans = append(w.orphans, orphanRecord{cluster: cname, gvr: typ.TargetGVR(), ns: ns, name: name, uid: string(obj.GetUID()), fed: typ.Federated.Kind + " " + e.Key.String()})
			w.mu.Unlock()
		}
	}
	if typ.Federated.Kind == federation.DeploymentType.Federated.Kind {
		if err := w.userDelete(ctx, federation.ReplicaSchedulingPreferenceGVR, e.Key.Namespace, e.Key.Name); err != nil {
			return err
		}
	}
	return w.userDelete(ctx, typ.FederatedGVR(), e.Key.Namespace, e.Key.Name)
}

// memberName is the namespace and name of a federated object's member objects.
func memberName(typ federation.TypeConfig, key federation.Key) (string, string) {
	if !typ.Namespaced {
		return "", key.Name
	}
	return key.Namespace, key.Name
}

// memberWrite is someone else's write in a member: drift of an owned field, a deletion, or
// another controller's annotation (which must cause no federation write).
func (w *World) memberWrite(typ federation.TypeConfig, e Event) error {
	m, ok := w.Fleet.Member(e.Cluster)
	if !ok {
		return errGone
	}
	ns, name := memberName(typ, e.Key)
	gvr := typ.TargetGVR()
	obj, err := m.Peek(gvr, ns, name)
	if err != nil || !managed(obj) || obj.GetDeletionTimestamp() != nil {
		return errGone // nothing of ours there to touch
	}
	switch e.Op {
	case OpDriftDelete:
		if typ.Federated.Kind == federation.NamespaceType.Federated.Kind {
			return errGone // deleting a whole member namespace is not drift
		}
		return m.DriftDelete(gvr, ns, name)
	case OpForeignWrite:
		val := fmt.Sprint(e.Value)
		err := m.Drift(gvr, ns, name, func(u *unstructured.Unstructured) {
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[foreignAnnotation] = val
			u.SetAnnotations(ann)
		})
		if err == nil {
			w.mu.Lock()
			w.foreign = append(w.foreign, foreignMark{cluster: e.Cluster, gvr: gvr, ns: ns, name: name, uid: string(obj.GetUID()), key: foreignAnnotation, val: val})
			w.mu.Unlock()
		}
		return err
	}
	return m.Drift(gvr, ns, name, func(u *unstructured.Unstructured) { drift(typ.Federated.Kind, u, e.Value) })
}

// drift changes a field the federation owns, as a person with kubectl would.
func drift(kind string, u *unstructured.Unstructured, v int64) {
	switch kind {
	case federation.DeploymentType.Federated.Kind:
		if v%2 == 0 {
			_ = unstructured.SetNestedField(u.Object, 10+v%7, "spec", "replicas")
			return
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		if len(containers) > 0 {
			containers[0].(map[string]any)["image"] = fmt.Sprintf("evil:%d", v)
			_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
		}
	case federation.ServiceType.Federated.Kind:
		_ = unstructured.SetNestedField(u.Object, map[string]any{"app": fmt.Sprintf("drift-%d", v)}, "spec", "selector")
	case federation.ConfigMapType.Federated.Kind:
		_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("drift-%d", v), "data", "value")
	default:
		labels := u.GetLabels()
		labels["soak"] = fmt.Sprintf("drift-%d", v)
		u.SetLabels(labels)
	}
}
