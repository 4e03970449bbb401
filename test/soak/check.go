package soak

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// checker checks the World at quiescence. Every expectation is computed from the fakes' state
// (read without API calls) with fedkit's pure functions.
type checker struct {
	w *World
	// cut are members partitioned on purpose during the check (their Cluster is not Ready):
	// their entries must be stale and left out of the sums.
	cut      map[string]bool
	clusters []federation.Cluster
	members  map[string]*fake.Cluster
	left     map[string][]string // "Kind ns/name" -> MembersLeftBehind messages
}

func (c *checker) violate(rule Rule, object, format string, args ...any) {
	c.w.violate(rule, object, format, args...)
}

// check runs every check of a quiescent World.
func (w *World) check(phase string, cut map[string]bool) {
	w.at(phase, -1)
	c := &checker{w: w, cut: cut, members: w.members(), left: map[string][]string{}}
	for _, u := range w.Host.Objects(federation.ClusterGVR) {
		cl, err := federation.ClusterFromUnstructured(u)
		if err != nil {
			c.violate(RuleDeletionCompleted, "Cluster "+u.GetName(), "does not decode: %v", err)
			continue
		}
		if cl.DeletionTimestamp != nil {
			c.violate(RuleDeletionCompleted, "Cluster "+cl.Name, "still being deleted (finalizers %v)", cl.Finalizers)
		}
		c.clusters = append(c.clusters, *cl)
	}
	for _, e := range w.Events() {
		if e.Reason == "MembersLeftBehind" {
			k := e.Kind + " " + objectRef(e.Namespace, e.Name)
			c.left[k] = append(c.left[k], e.Message)
		}
	}
	for _, typ := range kinds() {
		c.checkType(typ)
	}
	c.checkMemberObjects()
	c.checkOrphans()
	c.checkForeign()
	c.checkReleased()
	c.checkFeatures()
	c.checkKinds()
	w.stepRules(nil)
	w.checkInvariants(true)
}

// leftBehind reports whether a MembersLeftBehind event of the federated object (or of the
// Cluster) announced what remains in cluster.
func (c *checker) leftBehind(fedKey, cluster string) bool {
	for _, k := range []string{fedKey, "Cluster " + cluster} {
		for _, msg := range c.left[k] {
			if strings.Contains(msg, cluster+" (") || strings.Contains(msg, fmt.Sprintf("%q", cluster)) || strings.Contains(msg, " more") {
				return true
			}
		}
	}
	return false
}

func (c *checker) ready(name string) bool {
	for i := range c.clusters {
		if c.clusters[i].Name == name {
			return meta.IsStatusConditionTrue(c.clusters[i].Status.Conditions, federation.ConditionReady)
		}
	}
	return false
}

func revisionOf(u *unstructured.Unstructured) int64 {
	n, _ := strconv.ParseInt(u.GetAnnotations()[federation.RevisionAnnotation], 10, 64)
	return n
}

// managed reports whether u carries this federation's identity (the loops' default,
// federation.ManagedByValue): another federation's objects are not this one's.
func managed(u *unstructured.Unstructured) bool {
	return u != nil && u.GetLabels()[federation.ManagedByLabel] == federation.ManagedByValue
}

// checkType checks every federated object of typ against its members.
func (c *checker) checkType(typ federation.TypeConfig) {
	for _, u := range c.w.Host.Objects(typ.FederatedGVR()) {
		name := typ.Federated.Kind + " " + objectRef(u.GetNamespace(), u.GetName())
		if u.GetDeletionTimestamp() != nil {
			c.violate(RuleDeletionCompleted, name, "deletion did not complete (finalizers %v)", u.GetFinalizers())
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			c.violate(RulePlacedRuns, name, "does not decode: %v", err)
			continue
		}
		federation.DefaultFederatedObject(fed)
		if c.w.Config.Dump != "" && c.w.Config.Dump == objectRef(fed.Namespace, fed.Name) {
			if data, err := yaml.Marshal(u.Object); err == nil {
				c.violate(RuleDump, name, "Config.Dump:\n%s", data)
			}
		}
		c.checkObject(typ, name, fed)
	}
}

func (c *checker) checkObject(typ federation.TypeConfig, name string, fed *federation.FederatedObject) {
	rev := revisionOf(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"annotations": toAny(fed.Annotations)}}})
	if fed.Status.ObservedGeneration != fed.Generation {
		c.violate(RuleStatusMatches, name, "status.observedGeneration %d, generation %d", fed.Status.ObservedGeneration, fed.Generation)
	}
	targets, err := plan.TargetsFor(fed, typ, c.clusters, c.w.Clock.Now())
	if err != nil {
		c.violate(RulePlacedRuns, name, "TargetsFor: %v", err)
		return
	}
	c.checkSchedule(typ, name, fed, targets)
	d, err := c.syncPlan(typ, fed, rev)
	if err != nil {
		c.violate(RulePlacedRuns, name, "Plan: %v", err)
		return
	}

	ns, mname := memberName(typ, federation.Key{Namespace: fed.Namespace, Name: fed.Name})
	placed := map[string]bool{}
	for _, n := range targets.Order {
		placed[n] = true
	}
	entries := map[string]federation.MemberStatus{}
	for _, e := range fed.Status.Clusters {
		entries[e.Name] = e
	}
	collisions, cutListed := 0, 0
	for _, cname := range sortedKeys(c.members) {
		obj, _ := c.members[cname].Peek(typ.TargetGVR(), ns, mname)
		e, listed := entries[cname]
		switch {
		case c.cut[cname]:
			if listed {
				cutListed++
			}
		case !placed[cname] && listed && e.Propagation == plan.ReasonNamespaceInUse:
			// A FederatedNamespace that left cname keeps the namespace while the federation's
			// objects live in it: one must.
			if c.inUse(cname, mname) == "" {
				c.violate(RuleStatusMatches, name, "status.clusters says %s is in use in %s, where nothing the federation placed lives in it", mname, cname)
			}
		case !placed[cname]:
			if managed(obj) && !c.leftBehind(name, cname) {
				c.violate(RulePlacedOnly, name, "a managed object runs in %s, where it is not placed%s (uid %s, resourceVersion %s, created %s)", cname, deleting(obj),
					obj.GetUID(), obj.GetResourceVersion(), obj.GetCreationTimestamp().UTC().Format(time.RFC3339))
			}
			if listed {
				c.violate(RuleStatusMatches, name, "status.clusters lists %s, where it is not placed", cname)
			}
		case obj == nil:
			c.violate(RulePlacedRuns, name, "placed in %s, absent there (entry %+v)", cname, e)
		case !managed(obj):
			collisions++
			if e.Propagation != plan.ReasonAlreadyExists && e.Propagation != plan.ReasonManagedByOther {
				c.violate(RuleStatusMatches, name, "%s holds an object no federation manages, propagation %q", cname, e.Propagation)
			}
		default:
			c.checkMember(typ, name, fed, rev, targets, d, cname, obj, e, listed)
		}
	}
	prop := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionPropagated)
	switch {
	case prop == nil:
		c.violate(RuleStatusMatches, name, "no Propagated condition")
	case cutListed > 0:
		// A cluster that is not Ready still holds the object: sync waits for it.
	case collisions == 0 && (prop.Status != "True" || fed.Status.SyncedRevision != rev):
		c.violate(RuleStatusMatches, name, "Propagated %s (%s: %s), syncedRevision %d, revision %d", prop.Status, prop.Reason, prop.Message, fed.Status.SyncedRevision, rev)
	case collisions > 0 && prop.Status != "False":
		c.violate(RuleStatusMatches, name, "%d cluster(s) hold objects no federation manages, yet Propagated is %s", collisions, prop.Status)
	}
	c.checkAggregate(typ, name, fed, ns, mname)
}

// syncPlan is sync's decision (plan.Decide) for fed over every member that is not cut off,
// as the Syncer makes it: at the fake clock's now, waiting for the scheduler, with the
// revision history a staged rollout decides from (sync.RevisionHistory of the host's
// ControllerRevisions).
func (c *checker) syncPlan(typ federation.TypeConfig, fed *federation.FederatedObject, rev int64) (plan.Decision, error) {
	ns, mname := memberName(typ, federation.Key{Namespace: fed.Namespace, Name: fed.Name})
	members := map[string]plan.MemberState{}
	for cname, m := range c.members {
		if c.cut[cname] {
			continue
		}
		obj, _ := m.Peek(typ.TargetGVR(), ns, mname)
		members[cname] = plan.MemberState{Object: obj}
	}
	var history []plan.Revision
	if fed.Spec.Rollout != nil {
		var revs []unstructured.Unstructured
		for _, u := range c.w.Host.Objects(controllerRevisionsGVR) {
			if u.GetNamespace() == fed.Namespace {
				revs = append(revs, *u)
			}
		}
		history = fedsync.RevisionHistory(revs, fed.UID)
	}
	return plan.Decide(plan.Input{
		Type: typ, Object: fed, Clusters: c.clusters, Revision: rev, Members: members,
		Now: c.w.Clock.Now(), History: history, WaitForScheduler: true,
	})
}

// controllerRevisionsGVR is where sync keeps the revision history.
var controllerRevisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}

// checkMember checks one placed cluster's managed object against the render: of the current
// revision, or of the revision a staged rollout under way holds the cluster at (then sync's
// Plan, which renders it, says whether the member runs it).
func (c *checker) checkMember(typ federation.TypeConfig, name string, fed *federation.FederatedObject, rev int64, t plan.Targets, d plan.Decision, cluster string, obj *unstructured.Unstructured, e federation.MemberStatus, listed bool) {
	want := rev
	if d.Rollout != nil {
		if r, ok := d.Rollout.Assign[cluster]; ok {
			want = r
		}
	}
	if !listed {
		c.violate(RuleStatusMatches, name, "placed in %s, missing from status.clusters", cluster)
	} else if e.Propagation != "" || e.Revision != want {
		c.violate(RuleStatusMatches, name, "%s: propagation %q (%s), revision %d, want \"\" and %d", cluster, e.Propagation, e.Message, e.Revision, want)
	}
	if obj.GetDeletionTimestamp() != nil {
		c.violate(RulePlacedRuns, name, "%s: the member object is being deleted", cluster)
	}
	if r := revisionOf(obj); r > rev || r <= 0 {
		c.violate(RulePlacedRuns, name, "%s: member revision %d, federated revision %d", cluster, r, rev)
	}
	for _, ch := range d.Changes {
		if ch.Cluster == cluster && (ch.Action != plan.ActionNone || ch.Reason != "") {
			c.violate(RulePlacedRuns, name, "%s: sync's Plan would still %s (%s %s; drift %v)", cluster, ch.Action, ch.Reason, ch.Message, ch.Drift)
		}
	}
	if want != rev {
		return // held back: Plan rendered the stable revision, and said whether it runs
	}
	in := override.InputFor(fed, typ)
	in.Revision, in.ClusterName, in.Existing = rev, cluster, obj
	in.Replicas = t.Replicas[cluster]
	for i := range c.clusters {
		if c.clusters[i].Name == cluster {
			in.ClusterLabels = c.clusters[i].Labels
		}
	}
	rendered, err := (&override.Renderer{}).Render(in)
	if err != nil {
		c.violate(RulePlacedRuns, name, "%s: render: %v", cluster, err)
		return
	}
	if got, w := obj.GetAnnotations()[federation.DesiredHashAnnotation], rendered.GetAnnotations()[federation.DesiredHashAnnotation]; got != w {
		c.violate(RulePlacedRuns, name, "%s: desired hash %q, the render's %q", cluster, got, w)
	}
}

// checkSchedule checks the schedule against placement: only clusters placement selects; for a
// preference, its total.
func (c *checker) checkSchedule(typ federation.TypeConfig, name string, fed *federation.FederatedObject, t plan.Targets) {
	rsp, rspErr := c.w.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, fed.Namespace, fed.Name)
	p := fed.Spec.Placement
	if rspErr == nil && typ.Federated.Kind == federation.DeploymentType.Federated.Kind {
		if i, _, _ := unstructured.NestedBool(rsp.Object, "spec", "intersectWithClusterSelector"); !i {
			// KubeFed's rule: the preference, not the object's placement, says which clusters.
			p = federation.Placement{ClusterSelector: &metav1.LabelSelector{}}
		}
	} else {
		rsp = nil
	}
	// Clusters leaving the federation (their Cluster being deleted) take nothing new.
	var staying []federation.Cluster
	for _, cl := range c.clusters {
		if cl.DeletionTimestamp == nil {
			staying = append(staying, cl)
		}
	}
	pin := placement.Input{Placement: p, Clusters: staying}
	d, err := placement.Place(pin)
	// The clusters the dependencies loop says dependent workloads run in (placement's Require).
	d.Require(federation.RequiredClusters(fed.Annotations), pin)
	sel := d.Names()
	if err != nil && !errors.Is(err, placement.ErrUnsatisfiable) {
		c.violate(RuleScheduleFollowsPlacement, name, "placement: %v", err)
		return
	}
	s := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionScheduled)
	switch {
	case s == nil || s.ObservedGeneration != fed.Generation:
		c.violate(RuleScheduleFollowsPlacement, name, "Scheduled condition %+v, generation %d", s, fed.Generation)
	case s.Status != "True" && !(s.Reason == "Unschedulable" && (len(sel) == 0 || blockedIn(fed, sel))):
		// Unschedulable is the truth when nothing is selected, or when replicas cannot go
		// where sync cannot write the object (federation.PropagationBlocked).
		c.violate(RuleScheduleFollowsPlacement, name, "Scheduled condition %s %s: %s; placement selects %v", s.Status, s.Reason, s.Message, sel)
	}
	if !t.Scheduled {
		c.violate(RuleScheduleFollowsPlacement, name, "no current schedule")
	}
	// A cluster under a graceful eviction keeps its replicas meanwhile (the schedule lists what
	// it keeps): it counts at the eviction's target, and may have left the placement.
	evicting := map[string]int64{}
	if fed.Status.Schedule != nil {
		for _, e := range fed.Status.Schedule.Evictions {
			if e.State().Keeps() {
				evicting[e.Cluster] = e.Replicas
			}
		}
	}
	// At quiescence every replacement had time to come up: an eviction still running is
	// stuck (karmada#5803), and one still to be released is sync's to finish. An eviction
	// of a cluster out of reach waits for it: sync can neither delete nor release the copy
	// there, so the scheduler holds the eviction until the cluster is back.
	if fed.Status.Schedule != nil {
		for _, e := range fed.Status.Schedule.Evictions {
			if c.cut[e.Cluster] {
				continue
			}
			c.violate(RuleScheduleFollowsPlacement, name, "eviction of %s still in status.schedule at quiescence (%s: %s); status.clusters: %s", e.Cluster, e.Reason, e.Message, memberSummary(fed))
		}
	}
	for _, n := range t.Order {
		if _, ok := evicting[n]; !ok && !slices.Contains(sel, n) {
			c.violate(RuleScheduleFollowsPlacement, name, "scheduled in %s, which placement does not select (%v)", n, sel)
		}
	}
	if typ.Federated.Kind != federation.DeploymentType.Federated.Kind {
		// A placement that tolerates the not-ready taint (a generated dependency's tolerates
		// every taint) selects a cluster cut off too: sync counts it not ready, not placed.
		ready := slices.DeleteFunc(slices.Clone(sel), func(n string) bool { return slices.Contains(t.NotReady, n) })
		if len(t.Order) != len(ready) {
			c.violate(RuleScheduleFollowsPlacement, name, "scheduled in %v, placement selects %v (not ready: %v)", t.Order, sel, t.NotReady)
		}
		return
	}
	if rsp == nil {
		return
	}
	// The total the scheduler divides: the autoscaler's, within the bounds, when it wrote one.
	var pref federation.ReplicaSchedulingPreference
	if err := federation.FromUnstructured(rsp, &pref); err != nil {
		c.violate(RuleScheduleFollowsPlacement, name, "its preference does not decode: %v", err)
		return
	}
	total := int64(federation.FleetTotal(&pref))
	var sum int64
	for _, n := range t.Order {
		if r, ok := evicting[n]; ok {
			sum += r
		} else if r := t.Replicas[n]; r != nil {
			sum += *r
		}
	}
	// Where sync can write the object in no selected cluster (federation.PropagationBlocked:
	// an object of its name that is not the federation's, the copies a deleted policy left
	// unmanaged among them), no cluster takes new replicas: the rest are unplaced, and the
	// Scheduled condition says so.
	if len(sel) > 0 && sum != total && !(sum < total && everyBlocked(fed, sel)) {
		c.violate(RuleScheduleFollowsPlacement, name, "the schedule places %d replicas in %v; the preference asks for %d", sum, t.Order, total)
	}
}

// blockedIn reports whether fed's status says sync cannot write it in one of clusters.
func blockedIn(fed *federation.FederatedObject, clusters []string) bool {
	for _, e := range fed.Status.Clusters {
		if slices.Contains(clusters, e.Name) && federation.PropagationBlocked(e.Propagation) {
			return true
		}
	}
	return false
}

// everyBlocked reports whether sync cannot write fed in any of clusters: each has a status
// entry whose propagation reason says so (federation.PropagationBlocked).
func everyBlocked(fed *federation.FederatedObject, clusters []string) bool {
	for _, n := range clusters {
		if !slices.ContainsFunc(fed.Status.Clusters, func(e federation.MemberStatus) bool {
			return e.Name == n && federation.PropagationBlocked(e.Propagation)
		}) {
			return false
		}
	}
	return true
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// memberSummary is status.clusters in one line, for a violation's message.
func memberSummary(fed *federation.FederatedObject) string {
	out := ""
	for _, m := range fed.Status.Clusters {
		out += fmt.Sprintf("[%s revision %d/%d stale %t available %d]", m.Name, m.Revision, m.ObservedRevision, m.Stale, ptrv(m.AvailableReplicas))
	}
	return out
}

func ptrv(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// inUse returns an object of another federated kind that the federation placed in namespace
// ns of member cluster (sync.FederationObjectIn), "" when none is there.
func (c *checker) inUse(cluster, ns string) string {
	var objs []*unstructured.Unstructured
	for _, typ := range kinds() {
		if typ.Namespaced {
			objs = append(objs, c.members[cluster].Objects(typ.TargetGVR())...)
		}
	}
	return plan.FederationObjectIn("", ns, objs)
}

// deleting says, for a violation's message, whether obj is being deleted and what holds it.
func deleting(obj *unstructured.Unstructured) string {
	if obj == nil || obj.GetDeletionTimestamp() == nil {
		return ""
	}
	return fmt.Sprintf(" (being deleted since %s, finalizers %v)", obj.GetDeletionTimestamp().UTC().Format(time.TimeOnly), obj.GetFinalizers())
}
