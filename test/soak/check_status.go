package soak

import (
	"fmt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// checkAggregate recomputes status.aggregated from the member objects: the sums over the
// fresh entries (every entry, once faults are off, but those of the clusters cut off on
// purpose, which must be stale).
func (c *checker) checkAggregate(typ federation.TypeConfig, name string, fed *federation.FederatedObject, ns, mname string) {
	var want federation.AggregatedStatus
	for _, e := range fed.Status.Clusters {
		if c.cut[e.Name] || !c.ready(e.Name) {
			if !e.Stale {
				c.violate(RuleStatusMatches, name, "%s is not Ready, its entry is not stale", e.Name)
			}
			want.StaleClusters++
			continue
		}
		if e.Stale {
			c.violate(RuleStatusMatches, name, "%s is Ready and was read, its entry is stale", e.Name)
		}
		want.Clusters++
		m := c.members[e.Name]
		if m == nil || typ.Federated.Kind != federation.DeploymentType.Federated.Kind {
			continue
		}
		obj, err := m.Peek(typ.TargetGVR(), ns, mname)
		if err != nil || !managed(obj) {
			continue
		}
		get := func(fields ...string) int64 {
			n, _, _ := unstructured.NestedInt64(obj.Object, fields...)
			return n
		}
		replicas, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		want.Replicas += replicas
		want.ReadyReplicas += get("status", "readyReplicas")
		want.AvailableReplicas += get("status", "availableReplicas")
		want.UpdatedReplicas += get("status", "updatedReplicas")
	}
	got := fed.Status.Aggregated
	switch {
	case 2*int(want.Clusters) <= len(fed.Status.Clusters) && len(fed.Status.Clusters) > 0:
		return // no quorum: the last good values stay, by design
	case got == nil:
		c.violate(RuleStatusMatches, name, "no status.aggregated; want %+v", want)
	case typ.Federated.Kind != federation.DeploymentType.Federated.Kind:
		if got.Clusters != want.Clusters || got.StaleClusters != want.StaleClusters {
			c.violate(RuleStatusMatches, name, "status.aggregated %+v, want clusters %d, staleClusters %d", *got, want.Clusters, want.StaleClusters)
		}
	case *got != want:
		c.violate(RuleStatusMatches, name, "status.aggregated %+v, the members say %+v", *got, want)
	}
}

// checkMemberObjects looks at every member object of the soak's kinds: none half-deleted;
// none that fedkit manages for a federated object that no longer exists, unless a
// MembersLeftBehind event announced it.
func (c *checker) checkMemberObjects() {
	for _, typ := range kinds() {
		fedKeys := map[string]bool{}
		for _, u := range c.w.Host.Objects(typ.FederatedGVR()) {
			fedKeys[objectRef(u.GetNamespace(), u.GetName())] = true
		}
		for _, cname := range sortedKeys(c.members) {
			for _, obj := range c.members[cname].Objects(typ.TargetGVR()) {
				if obj.GetDeletionTimestamp() != nil && typ.Federated.Kind != federation.NamespaceType.Federated.Kind {
					c.violate(RuleDeletionCompleted, memberRef(typ.Target.Kind, obj, cname), "still being deleted (finalizers %v)", obj.GetFinalizers())
				}
				fname := obj.GetLabels()[federation.FederatedNameLabel]
				if !managed(obj) || fname == "" {
					continue
				}
				fkey := objectRef(obj.GetLabels()[federation.FederatedNamespaceLabel], fname)
				if !fedKeys[fkey] && !c.leftBehind(typ.Federated.Kind+" "+fkey, cname) {
					c.violate(RulePlacedOnly, memberRef(typ.Target.Kind, obj, cname), "managed, and its %s is gone", typ.Federated.Kind)
				}
			}
		}
	}
	for _, name := range c.w.removedNames() {
		m := c.w.removedCluster(name)
		for _, typ := range kinds() {
			for _, obj := range m.Objects(typ.TargetGVR()) {
				if managed(obj) && obj.GetLabels()[federation.FederatedNameLabel] != "" && !c.leftBehind("", name) {
					c.violate(RuleOrphaned, memberRef(typ.Target.Kind, obj, name), "its cluster left the federation: still managed, not orphaned")
				}
			}
		}
	}
}

// fedkitMarks are the labels and annotations an orphaned object must have lost.
var fedkitMarks = []string{
	federation.ManagedByLabel, federation.FederatedNameLabel, federation.FederatedNamespaceLabel,
	federation.DesiredHashAnnotation, federation.RevisionAnnotation,
	federation.ManagedLabelsAnnotation, federation.ManagedAnnotationsAnnotation, federation.ManagedFinalizersAnnotation,
}

// checkOrphans: objects orphaned by a deletion remain, without fedkit's marks.
func (c *checker) checkOrphans() {
	c.w.mu.Lock()
	orphans := append([]orphanRecord(nil), c.w.orphans...)
	c.w.mu.Unlock()
	for _, o := range orphans {
		m := c.members[o.cluster]
		if m == nil {
			m = c.w.removedCluster(o.cluster)
		}
		if c.leftBehind(o.fed, o.cluster) {
			// The deletion timed out before the object could be orphaned there: it stayed
			// managed, and a later federated object of the same name may have taken it.
			continue
		}
		obj, err := m.Peek(o.gvr, o.ns, o.name)
		if err != nil && o.ns != "" {
			if ns, nerr := m.Peek(federation.NamespaceType.TargetGVR(), "", o.ns); nerr != nil || ns.GetDeletionTimestamp() != nil {
				// Its namespace went (its FederatedNamespace left the cluster): an orphan is
				// no longer the federation's, and a namespace's deletion takes what it holds.
				continue
			}
		}
		if err != nil {
			c.violate(RuleOrphaned, o.fed, "deleted with orphan: its object in %s is gone: %v", o.cluster, err)
			continue
		}
		if uid := string(obj.GetUID()); uid != o.uid {
			c.violate(RuleOrphaned, o.fed, "deleted with orphan: its object in %s is gone: uid %s there now, was %s (labels %v)", o.cluster, uid, o.uid, obj.GetLabels())
			continue
		}
		for _, k := range fedkitMarks {
			_, l := obj.GetLabels()[k]
			_, a := obj.GetAnnotations()[k]
			if l || a {
				c.violate(RuleOrphaned, o.fed, "deleted with orphan: its object in %s still carries %s", o.cluster, k)
			}
		}
	}
}

// checkForeign: other controllers' annotations survive on the objects they annotated.
func (c *checker) checkForeign() {
	c.w.mu.Lock()
	marks := append([]foreignMark(nil), c.w.foreign...)
	c.w.mu.Unlock()
	last := map[foreignMark]foreignMark{} // per object, the last value written
	for _, f := range marks {
		k := f
		k.val = ""
		last[k] = f
	}
	for _, f := range last {
		m := c.members[f.cluster]
		if m == nil {
			continue
		}
		obj, err := m.Peek(f.gvr, f.ns, f.name)
		if err != nil || string(obj.GetUID()) != f.uid {
			continue // deleted since (placement, drift, deletion): the mark went with it
		}
		if got := obj.GetAnnotations()[f.key]; got != f.val {
			c.violate(RuleForeignAnnotations, fmt.Sprintf("%s %s in %s", f.gvr.Resource, objectRef(f.ns, f.name), f.cluster), "another controller's annotation %s=%q became %q", f.key, f.val, got)
		}
	}
}
