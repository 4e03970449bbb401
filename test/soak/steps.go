package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// The rules checked after every step (and every round of the first settling): each compares
// the fakes' state now with what it was after the step before, with fedkit's pure functions.

// stepWatch is what the rules after every step remember of the step before.
type stepWatch struct {
	prev stepState
	// deletedClaims are the member claims (uid by memberKey) that were in their cluster when
	// the user deleted what they belong to (the host's claim, the user's own federated
	// claim): their removal is the user's, whenever it completes. A cluster out of reach
	// then (a partition, the control plane's outage) has its copy removed only when it is
	// back, by which time the user may have made a claim of the same name again.
	deletedClaims map[string]string
}

// stepState is what the rules after every step read of the fakes, without API calls.
type stepState struct {
	clusters []federation.Cluster
	members  map[string]*fake.Cluster
	// claims and secrets are the managed member PersistentVolumeClaims and Secrets, uid by
	// memberKey.
	claims, secrets map[string]string
	// kubeFed is the uid of each member object KubeFed made, by memberKey ("" once gone).
	kubeFed map[string]string
	// schedules is every federated object's schedule, by "Kind namespace/name".
	schedules map[string]scheduleView
	// blocked is, by "Kind namespace/name" of a divided workload, the clusters where an
	// object of its name that the federation does not manage blocks it, and its status says
	// so.
	blocked map[string]map[string]bool
	// running is, for the blocked clusters, what the workload's managed copy there runs
	// (spec.replicas): a blocked cluster may be scheduled that much, no more.
	running map[string]map[string]int64
	// secretsAllowed is, by namespace/name, where a Secret may be (nil: computed on demand).
	secretsAllowed map[string]secretPlaces
	// host is every object of the resources the rules read, by "resource ns/name".
	host map[string]*unstructured.Unstructured
	// generated is, by namespace/name of the objects policies generated, the uid of their
	// managed member copies per cluster.
	generated map[string]map[string]string
	// fed is every federated object, by kind.
	fed map[string][]*unstructured.Unstructured
}

// scheduleView is an object's status.schedule as the outage rule compares it.
type scheduleView struct {
	uid       string
	replicas  map[string]int64 // per cluster
	evictions []string         // the clusters losing replicas
	generated string           // the generated-by label: dependencies and policies move with what they follow
}

// stepState reads the fakes.
func (w *World) stepState() stepState {
	s := stepState{members: w.members(), claims: map[string]string{}, secrets: map[string]string{}, kubeFed: map[string]string{},
		blocked: map[string]map[string]bool{}, running: map[string]map[string]int64{}, host: map[string]*unstructured.Unstructured{}, fed: w.federatedObjects()}
	s.schedules = schedulesOf(s.fed)
	for _, u := range w.Host.Objects(federation.ClusterGVR) {
		if cl, err := federation.ClusterFromUnstructured(u); err == nil {
			s.clusters = append(s.clusters, *cl)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{secretsGVR, claimsGVR} {
		for _, u := range w.Host.Objects(gvr) {
			s.host[gvr.Resource+" "+objectRef(u.GetNamespace(), u.GetName())] = u
		}
	}
	for _, typ := range []federation.TypeConfig{federation.SecretType, federation.PersistentVolumeClaimType, federation.DeploymentType} {
		for _, u := range s.fed[typ.Federated.Kind] {
			s.host[typ.FederatedResource+" "+objectRef(u.GetNamespace(), u.GetName())] = u
		}
	}
	for name, m := range s.members {
		for _, u := range m.Objects(claimsGVR) {
			// Managed or released (a claim its workload left stays, released): either way
			// the federation put it there.
			if (managed(u) || u.GetAnnotations()[federation.ReleasedAnnotation] != "") && u.GetDeletionTimestamp() == nil {
				s.claims[memberKey(name, claimsGVR, u.GetNamespace(), u.GetName())] = string(u.GetUID())
			}
		}
		for _, u := range m.Objects(secretsGVR) {
			if managed(u) {
				s.secrets[memberKey(name, secretsGVR, u.GetNamespace(), u.GetName())] = string(u.GetUID())
			}
		}
	}
	w.mu.Lock()
	kf := slices.Clone(w.kubeFed)
	w.mu.Unlock()
	for _, k := range kf {
		if m, ok := s.members[k.cluster]; ok {
			if u, err := m.Peek(k.typ.TargetGVR(), k.ns, k.name); err == nil && u.GetDeletionTimestamp() == nil {
				s.kubeFed[memberKey(k.cluster, k.typ.TargetGVR(), k.ns, k.name)] = string(u.GetUID())
			}
		}
	}
	w.readBlocked(&s)
	s.generated = w.generatedCopies(s)
	return s
}

// federatedObjects reads every federated object of the host, by kind.
func (w *World) federatedObjects() map[string][]*unstructured.Unstructured {
	out := map[string][]*unstructured.Unstructured{}
	for _, typ := range kinds() {
		out[typ.Federated.Kind] = w.Host.Objects(typ.FederatedGVR())
	}
	return out
}

// schedulesOf is every object's schedule, of fed (by kind).
func schedulesOf(fed map[string][]*unstructured.Unstructured) map[string]scheduleView {
	out := map[string]scheduleView{}
	for _, typ := range kinds() {
		for _, u := range fed[typ.Federated.Kind] {
			if u.GetDeletionTimestamp() != nil {
				continue
			}
			v := scheduleView{uid: string(u.GetUID()), generated: u.GetLabels()[federation.GeneratedByLabel]}
			if _, ok, _ := unstructured.NestedMap(u.Object, "status", "schedule"); ok {
				v.replicas = map[string]int64{}
				cl, _, _ := unstructured.NestedSlice(u.Object, "status", "schedule", "clusters")
				for _, c := range cl {
					m, _ := c.(map[string]any)
					name, _ := m["name"].(string)
					n, _, _ := unstructured.NestedInt64(m, "replicas")
					v.replicas[name] = n
				}
				ev, _, _ := unstructured.NestedSlice(u.Object, "status", "schedule", "evictions")
				for _, e := range ev {
					m, _ := e.(map[string]any)
					name, _ := m["cluster"].(string)
					v.evictions = append(v.evictions, name)
				}
				slices.Sort(v.evictions)
			}
			out[typ.Federated.Kind+" "+objectRef(u.GetNamespace(), u.GetName())] = v
		}
	}
	return out
}

// readBlocked finds, for every divided workload, the clusters where its status.clusters says
// sync cannot write it now (federation.PropagationBlocked: an object of its name that is not
// the federation's, a refused write, a cluster out of reach...): the scheduler knows.
func (w *World) readBlocked(s *stepState) {
	typ := federation.DeploymentType
	for _, u := range s.fed[typ.Federated.Kind] {
		entries, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
		for _, x := range entries {
			e, _ := x.(map[string]any)
			cluster, _ := e["name"].(string)
			if p, _ := e["propagation"].(string); !federation.PropagationBlocked(p) || s.members[cluster] == nil {
				continue
			}
			if _, err := w.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, u.GetNamespace(), u.GetName()); err != nil {
				break // not divided
			}
			k := typ.Federated.Kind + " " + objectRef(u.GetNamespace(), u.GetName())
			if s.blocked[k] == nil {
				s.blocked[k], s.running[k] = map[string]bool{}, map[string]int64{}
			}
			s.blocked[k][cluster] = true
			if obj, err := s.members[cluster].Peek(typ.TargetGVR(), u.GetNamespace(), u.GetName()); err == nil && managed(obj) {
				r, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
				if !found {
					r = 1
				}
				s.running[k][cluster] = r
			}
		}
	}
}

// afterStep runs the rules after a step (or a round of the first settling) whose events were
// events.
func (w *World) afterStep(events []Event) {
	if !w.Config.Run || w.Config.SampleRun { // see the package doc, What is checked after every step
		w.sample(events)
	}
	w.stepRules(events)
	w.checkInvariants(false)
}

// stepRules checks the rules after every step, then remembers the state for the next.
func (w *World) stepRules(events []Event) {
	prev, cur := w.steps.prev, w.stepState()
	touched := touchedBy(events)
	w.checkUntouched()
	w.checkUserMade()
	w.checkSystemNamespaces(cur)
	w.checkClaims(prev, cur)
	w.checkSecrets(prev, cur)
	w.checkOutage(prev, cur, touched, events)
	w.checkBlocked(prev, cur, touched)
	w.checkKubeFed(prev, cur)
	w.checkAutoscale()
	w.noteUnselected(prev, cur)
	w.checkKinds()
	w.steps.prev = cur
}

// touchedBy lists the objects the user's events edited ("Kind namespace/name"), and "policy"
// and "native" when a policy or a native Deployment changed (which moves generated objects).
func touchedBy(events []Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range events {
		switch e.Op {
		case OpEditPreference:
			out[federation.DeploymentType.Federated.Kind+" "+e.Key.String()] = true
		case OpPolicy, OpPolicyInvalid, OpPolicyDelete:
			out["policy"] = true
		case OpNative, OpNativeDelete:
			out["native"] = true
		case OpCreate, OpDelete, OpEditTemplate, OpEditOverride, OpEditPlacement, OpMigrate:
			out[e.Kind+" "+e.Key.String()] = true
		}
	}
	return out
}

// checkUntouched: objects no federation manages are as they started (RuleForeignUntouched).
func (w *World) checkUntouched() {
	w.mu.Lock()
	objs := slices.Clone(w.untouched)
	w.mu.Unlock()
	for _, o := range objs {
		m, ok := w.Fleet.Member(o.cluster)
		if !ok {
			continue
		}
		obj, err := m.Peek(o.gvr, o.ns, o.name)
		what := fmt.Sprintf("%s %s in %s", o.gvr.Resource, objectRef(o.ns, o.name), o.cluster)
		switch {
		case err != nil:
			w.violate(RuleForeignUntouched, what, "no federation manages it, and it is gone: %v", err)
		case string(obj.GetUID()) != o.uid:
			w.violate(RuleForeignUntouched, what, "no federation manages it, and it was deleted and made again (uid %s, was %s)", obj.GetUID(), o.uid)
		case untouchedState(obj) != o.state:
			w.violate(RuleForeignUntouched, what, "no federation manages it, and it was changed: %s, was %s", untouchedState(obj), o.state)
		default:
			continue
		}
		w.mu.Lock() // reported once
		w.untouched = slices.DeleteFunc(w.untouched, func(u untouchedObject) bool { return u == o })
		w.mu.Unlock()
	}
}

// checkSystemNamespaces: no federated object in a system namespace (federation.SystemNamespace)
// on the host, and none of its member copies managed (RuleSystemNamespaces).
func (w *World) checkSystemNamespaces(s stepState) {
	for _, typ := range kinds() {
		if !typ.Namespaced {
			continue
		}
		for _, u := range s.fed[typ.Federated.Kind] {
			if !federation.SystemNamespace(u.GetNamespace()) {
				continue
			}
			w.violate(RuleSystemNamespaces, typ.Federated.Kind+" "+objectRef(u.GetNamespace(), u.GetName()), "federated on the host from a system namespace (labels %v, annotations %v)", u.GetLabels(), u.GetAnnotations())
			for _, name := range sortedKeys(s.members) {
				if obj, err := s.members[name].Peek(typ.TargetGVR(), u.GetNamespace(), u.GetName()); err == nil && managed(obj) {
					w.violate(RuleSystemNamespaces, memberRef(typ.Target.Kind, obj, name), "managed by the federation in a system namespace")
				}
			}
		}
	}
}

// memberRef names a member object: "Kind namespace/name in cluster".
func memberRef(kind string, u *unstructured.Unstructured, cluster string) string {
	return fmt.Sprintf("%s %s in %s", kind, objectRef(u.GetNamespace(), u.GetName()), cluster)
}

// splitMemberKey splits a memberKey into its cluster, namespace and name.
func splitMemberKey(k string) (cluster, ns, name string) {
	parts := strings.SplitN(k, "/", 4)
	return parts[0], parts[2], parts[3]
}

// checkClaims: a managed member claim that went since the step before went because the
// user deleted it (the host's claim, or its FederatedPersistentVolumeClaim when it is the
// user's), dropped the cluster from the claim's own placement, or the cluster left
// (RuleClaimKept).
func (w *World) checkClaims(prev, cur stepState) {
	typ := federation.PersistentVolumeClaimType
	w.noteDeletedClaims(prev, cur)
	for _, k := range sortedKeys(prev.claims) {
		if cur.claims[k] == prev.claims[k] {
			continue
		}
		cluster, ns, name := splitMemberKey(k)
		if _, joined := cur.members[cluster]; !joined || w.isLeaving(cluster) || namespaceGoing(cur.members[cluster], ns) {
			continue
		}
		if w.steps.deletedClaims[k] == prev.claims[k] {
			continue // the user deleted it earlier; its cluster was out of reach then
		}
		if explicit, _ := claimRemovedByUser(prev, cur, typ, cluster, ns, name); explicit {
			continue
		}
		fed := cur.host[typ.FederatedResource+" "+objectRef(ns, name)]
		w.violate(RuleClaimKept, fmt.Sprintf("PersistentVolumeClaim %s in %s", objectRef(ns, name), cluster),
			"deleted (uid %s), though the user neither deleted it nor dropped the cluster from its placement; its federated object now: %s", prev.claims[k], describeFed(fed))
	}
}

// noteDeletedClaims remembers the member claims of prev and cur whose host claim, or whose
// federated claim the user made, is gone or being deleted (claimDeleted): what removes them
// later removes what the user deleted.
func (w *World) noteDeletedClaims(prev, cur stepState) {
	typ := federation.PersistentVolumeClaimType
	for _, s := range []stepState{prev, cur} {
		for k, uid := range s.claims {
			_, ns, name := splitMemberKey(k)
			if !claimDeleted(prev, typ, ns, name) && !claimDeleted(cur, typ, ns, name) {
				continue
			}
			if w.steps.deletedClaims == nil {
				w.steps.deletedClaims = map[string]string{}
			}
			w.steps.deletedClaims[k] = uid
		}
	}
}

// claimDeleted reports whether, in s, the user deleted claim ns/name: the host's claim is
// gone or being deleted, or the user's own federated claim is being deleted.
func claimDeleted(s stepState, typ federation.TypeConfig, ns, name string) bool {
	if native := s.host[claimsGVR.Resource+" "+objectRef(ns, name)]; native == nil || native.GetDeletionTimestamp() != nil {
		return true
	}
	fed := s.host[typ.FederatedResource+" "+objectRef(ns, name)]
	return fed != nil && fed.GetLabels()[federation.GeneratedByLabel] == "" && fed.GetDeletionTimestamp() != nil
}

// claimRemovedByUser reports whether the user asked for claim ns/name to leave cluster, in
// the state before or after the step: the host's claim deleted, the user's own federated
// claim deleted or placing it elsewhere.
func claimRemovedByUser(prev, cur stepState, typ federation.TypeConfig, cluster, ns, name string) (bool, string) {
	for _, s := range []stepState{prev, cur} {
		if native := s.host[claimsGVR.Resource+" "+objectRef(ns, name)]; native == nil || native.GetDeletionTimestamp() != nil {
			return true, "the host's claim is gone"
		}
		fed := s.host[typ.FederatedResource+" "+objectRef(ns, name)]
		if fed != nil && fed.GetAnnotations()[federation.ClaimRemovalAnnotation] == federation.ClaimRemovalDelete {
			return true, "its federated claim asks for its claims to be deleted"
		}
		if fed == nil || fed.GetLabels()[federation.GeneratedByLabel] != "" {
			continue // the dependencies loop's: the user asked nothing
		}
		if fed.GetDeletionTimestamp() != nil {
			return true, "the user deleted its federated claim"
		}
		if fed.GetAnnotations()[federation.ClaimRemovalAnnotation] == federation.ClaimRemovalDelete {
			return true, "its federated claim asks for its claims to be deleted"
		}
		if !ownPlacementSelects(fed, s.clusters, cluster) {
			return true, "its own placement does not select the cluster"
		}
	}
	return false, ""
}

// ownPlacementSelects reports whether u's own spec.placement (without the clusters its
// dependents require) selects cluster.
func ownPlacementSelects(u *unstructured.Unstructured, clusters []federation.Cluster, cluster string) bool {
	fed, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return true // an object that does not decode places nothing new: keep quiet
	}
	sel, err := placement.Select(fed.Spec.Placement, clusters)
	return err != nil || slices.Contains(sel, cluster)
}

// describeFed says, for a violation, what a federated object's placement and status say.
func describeFed(u *unstructured.Unstructured) string {
	if u == nil {
		return "none"
	}
	p, _, _ := unstructured.NestedMap(u.Object, "spec", "placement")
	return fmt.Sprintf("generated-by %q, deleting %t, placement %v, required-by-clusters %q", u.GetLabels()[federation.GeneratedByLabel],
		u.GetDeletionTimestamp() != nil, p, u.GetAnnotations()[federation.RequiredByClustersAnnotation])
}

// namespaceGoing reports whether namespace ns is gone or being deleted in member m.
func namespaceGoing(m *fake.Cluster, ns string) bool {
	if m == nil {
		return true
	}
	u, err := m.Peek(federation.NamespaceType.TargetGVR(), "", ns)
	return err != nil || u.GetDeletionTimestamp() != nil
}

// isLeaving reports whether the Cluster of member name is being deleted.
func (w *World) isLeaving(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leaving[name]
}

// secretPlaces is where a Secret may be: clusters its own placement selects, clusters its
// own placement excludes explicitly (excludeClusters, an untolerated taint), and clusters a
// workload referring to it there, after overrides, is placed in or runs in.
type secretPlaces struct {
	own, excluded, referenced map[string]bool
	user                      bool // the user federated it (else the dependencies loop did, or nobody)
}

// secretPlacesOf computes where every Secret of the host may be.
func secretPlacesOf(s stepState) map[string]secretPlaces {
	out := map[string]secretPlaces{}
	get := func(ref string) secretPlaces {
		p, ok := out[ref]
		if !ok {
			p = secretPlaces{own: map[string]bool{}, excluded: map[string]bool{}, referenced: map[string]bool{}}
		}
		return p
	}
	typ := federation.SecretType
	for key, u := range s.host {
		if !strings.HasPrefix(key, typ.FederatedResource+" ") || u.GetLabels()[federation.GeneratedByLabel] != "" {
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			continue
		}
		ref := objectRef(fed.Namespace, fed.Name)
		p := get(ref)
		p.user = true
		var running, names []string
		for _, e := range fed.Status.Clusters {
			running = append(running, e.Name)
		}
		for _, c := range s.clusters {
			names = append(names, c.Name)
		}
		in := placement.Input{Placement: fed.Spec.Placement, Clusters: s.clusters, Running: running}
		d, _ := placement.Place(in)
		for _, c := range d.Selected {
			p.own[c.Name] = true
		}
		for c := range placement.Refused(in, names) {
			p.excluded[c] = true // an explicit exclusion, which no workload's need overrides
		}
		out[ref] = p
	}
	for key, u := range s.host {
		// A workload being deleted counts too: its copies run until sync removes them, and
		// they need what they refer to.
		if !strings.HasPrefix(key, federation.DeploymentType.FederatedResource+" ") {
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil || !fed.Spec.PropagateDependencies {
			continue
		}
		for cluster, refs := range referencesByCluster(fed, s) {
			for _, r := range refs {
				if r.Kind != dependencies.KindSecret {
					continue
				}
				ref := objectRef(fed.Namespace, r.Name)
				p := get(ref)
				p.referenced[cluster] = true
				out[ref] = p
			}
		}
	}
	return out
}

// referencesByCluster is what each cluster's copy of workload fed refers to, after its
// overrides (dependencies.WorkloadOf, as the dependencies loop reads it): for the clusters
// it is placed in or listed in (dependencies.Clusters) and those where its managed copy runs
// still.
func referencesByCluster(fed *federation.FederatedObject, s stepState) map[string][]dependencies.Reference {
	typ := federation.DeploymentType
	w, err := dependencies.WorkloadOf(typ, dependencies.Builtin()[typ.Target], fed, s.clusters)
	if err != nil {
		return nil
	}
	where := slices.Clone(w.Clusters)
	for name, m := range s.members {
		if u, err := m.Peek(typ.TargetGVR(), fed.Namespace, fed.Name); err == nil && managed(u) && !slices.Contains(where, name) {
			where = append(where, name)
		}
	}
	out := map[string][]dependencies.Reference{}
	for _, c := range where {
		if refs, ok := w.ByCluster[c]; ok {
			out[c] = refs
		} else {
			out[c] = w.References
		}
	}
	return out
}

// checkSecrets: a Secret copy that appeared in a member since the step before (a new uid) is
// not in a cluster its own placement excludes (RuleSecretExcluded), and is where its own
// placement or a workload referring to it there puts it (RuleSecretReferenced), by the
// host's state before the step or after it.
func (w *World) checkSecrets(prev, cur stepState) {
	var fresh []string
	for _, k := range sortedKeys(cur.secrets) {
		if prev.secrets[k] != cur.secrets[k] {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) == 0 {
		return
	}
	if prev.secretsAllowed == nil {
		prev.secretsAllowed = secretPlacesOf(prev)
	}
	cur.secretsAllowed = secretPlacesOf(cur)
	for _, k := range fresh {
		cluster, ns, name := splitMemberKey(k)
		ref := objectRef(ns, name)
		before, after := prev.secretsAllowed[ref], cur.secretsAllowed[ref]
		what := fmt.Sprintf("Secret %s in %s", ref, cluster)
		switch {
		case before.excluded[cluster] && after.excluded[cluster]:
			w.violate(RuleSecretExcluded, what, "sent to a cluster its own placement excludes (own placement selects %v; referred to there: %t)",
				sortedKeys(after.own), after.referenced[cluster] || before.referenced[cluster])
		case !before.own[cluster] && !after.own[cluster] && !before.referenced[cluster] && !after.referenced[cluster]:
			w.violate(RuleSecretReferenced, what, "sent where neither its own placement (%v) nor a workload that refers to it there after overrides is placed (referred to in %v); workloads that refer to it: %s",
				sortedKeys(after.own), sortedKeys(after.referenced), referrers(cur, ns, name))
		}
	}
}

// checkOutage: while the control plane is cut off from every member, and until every member
// is back and Ready, nothing moves in a cluster it counts lost (RuleOutageMovesNothing): it
// gains no replicas and joins no schedule, and where a copy of the object ran when the outage
// began (outage.copies) no eviction of it begins and it loses none and leaves none but by an
// eviction, decided before, ending. An object first scheduled meanwhile is not moved. What
// the user edited meanwhile, or before and not yet scheduled, is exempt, and so is what follows an edited object: the objects
// policies generate after a policy or native change; the dependencies the dependencies loop
// generates follow their workloads, whose moves are the ones reported.
func (w *World) checkOutage(prev, cur stepState, touched map[string]bool, events []Event) {
	w.mu.Lock()
	o := w.outage
	w.mu.Unlock()
	if o == nil {
		return
	}
	for k := range touched {
		o.exempt[k] = true
	}
	// The clusters the control plane has counted lost (not Ready): what it does elsewhere it
	// does on data it still has.
	lost := map[string]bool{}
	for _, c := range cur.clusters {
		if !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			lost[c.Name] = true
		}
	}
	// What the control plane did while it counted a cluster Ready was its judgement, not
	// the outage's: a cluster is judged from the check before the one that first finds it
	// lost (a round runs the monitor before the scheduler). In Run mode the loops run in
	// any order, and the scheduler may have moved something a moment before the monitor
	// counted the cluster lost: a cluster is judged from the first check that finds it lost.
	for _, c := range cur.clusters {
		switch _, known := o.lostAt[c.Name]; {
		case !lost[c.Name]:
			delete(o.lostAt, c.Name)
		case known:
		case w.Config.Run:
			o.lostAt[c.Name] = cur.schedules
		default:
			o.lostAt[c.Name] = prev.schedules
		}
	}
	for _, k := range sortedKeys(o.before) {
		was, now := o.before[k], cur.schedules[k]
		switch {
		case now.uid != was.uid, o.exempt[k], was.replicas == nil, was.generated == federation.GeneratedByDependencies,
			(o.exempt["policy"] || o.exempt["native"]) && was.generated == federation.GeneratedByPropagation:
			continue
		}
		base := func(c string) scheduleView {
			if v, ok := o.lostAt[c][k]; ok && v.uid == was.uid {
				return v
			}
			return was
		}
		if why := moved(base, now, lost, o.copies[k]); why != "" {
			d := placement.FleetDisruption(cur.clusters, w.Clock.Now(), placement.DisruptionOptions{})
			w.violate(RuleOutageMovesNothing, k, "the control plane is cut off from the members (since step %d; still cut off: %v; placement.FleetDisruption: disrupted %t, lost %v, %s): %s; schedule %v became %v, evictions %v became %v; NoExecute taints: %s; %s",
				o.since, sortedKeys(o.cut), d.Disrupted, d.Lost, d.Message, why, was.replicas, now.replicas, was.evictions, now.evictions, noExecute(cur.clusters), scheduledSummary(cur, k))
			o.exempt[k] = true // reported once
		}
	}
	for _, e := range events {
		if e.Op == OpHeal {
			delete(o.cut, e.Cluster)
		}
	}
	if len(o.cut) == 0 && len(w.recovering()) == 0 {
		w.mu.Lock()
		w.outage = nil // every member is back and Ready
		w.mu.Unlock()
	}
}

// noExecute names, for a violation's message, the clusters with a NoExecute taint and when
// each was added.
func noExecute(clusters []federation.Cluster) string {
	var out []string
	for _, c := range clusters {
		for _, t := range c.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoExecute {
				at := "?"
				if t.TimeAdded != nil {
					at = t.TimeAdded.UTC().Format(time.TimeOnly)
				}
				out = append(out, fmt.Sprintf("%s %s since %s", c.Name, t.Key, at))
			}
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// scheduledSummary is, for a violation's message, the Scheduled condition of the object of
// key k ("Kind namespace/name") and its status.clusters.
func scheduledSummary(s stepState, k string) string {
	kind, ref, _ := strings.Cut(k, " ")
	for _, u := range s.fed[kind] {
		if objectRef(u.GetNamespace(), u.GetName()) != ref {
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			return err.Error()
		}
		msg := "no Scheduled condition"
		if c := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionScheduled); c != nil {
			msg = fmt.Sprintf("Scheduled %s %s: %s", c.Status, c.Reason, c.Message)
		}
		var entries []string
		for _, m := range fed.Status.Clusters {
			entries = append(entries, fmt.Sprintf("[%s %q revision %d/%d replicas %d available %d stale %t]", m.Name, m.Propagation, m.Revision, m.ObservedRevision, ptrv(m.Replicas), ptrv(m.AvailableReplicas), m.Stale))
		}
		return msg + "; status.clusters " + strings.Join(entries, "")
	}
	return "not on the host"
}

// moved says how an object's schedule moved to now in a lost cluster since base (its
// schedule at the check the cluster is judged from, outage.lostAt, else when the outage
// began), "" when it did not. Nothing can be written in a cluster cut off, so its copy runs
// what it ran when the outage began (copies: its spec.replicas, -1 for a kind without). The
// cluster gained replicas, or joined, beyond what the schedule gave it and its copy runs;
// or, where a copy ran, an eviction of it began, or it left, or lost replicas its copy ran,
// without an eviction (decided before) ending there.
func moved(base func(cluster string) scheduleView, now scheduleView, lost map[string]bool, copies map[string]int64) string {
	for _, c := range sortedKeys(lost) {
		was := base(c)
		r, had := was.replicas[c]
		n, has := now.replicas[c]
		ran, copied := copies[c]
		kept, most := r, r
		if copied && ran >= 0 {
			kept, most = min(r, ran), max(r, ran)
		}
		evicted := slices.Contains(was.evictions, c)
		switch {
		case copied && !evicted && slices.Contains(now.evictions, c):
			return fmt.Sprintf("an eviction of %s began (schedule %v)", c, was.replicas)
		case has && (n > most || (!had && !copied)):
			return fmt.Sprintf("%s gained replicas (%d to %d, its copy ran %d; schedule %v)", c, r, n, ran, was.replicas)
		case had && (!has || n < kept) && !evicted && copied:
			return fmt.Sprintf("%s left the schedule or lost replicas its copy ran (%d of %d to %d, present %t; schedule %v)", c, kept, r, n, has, was.replicas)
		}
	}
	return ""
}

// checkBlocked: a divided workload blocked in a cluster, by the step before and after it,
// gets no more replicas there than it had, or than its copy there runs
// (RuleBlockedTakesNothing), unless the user edited it.
func (w *World) checkBlocked(prev, cur stepState, touched map[string]bool) {
	for _, k := range sortedKeys(cur.blocked) {
		if touched[k] || prev.schedules[k].uid != cur.schedules[k].uid {
			continue
		}
		for _, c := range sortedKeys(cur.blocked[k]) {
			if !prev.blocked[k][c] {
				continue
			}
			was, now := prev.schedules[k].replicas[c], cur.schedules[k].replicas[c]
			if runs := max(prev.running[k][c], cur.running[k][c]); now > max(was, runs) {
				w.violate(RuleBlockedTakesNothing, k, "sync cannot write it in cluster %s (its status says so), and its replicas there went from %d to %d, more than its copy there runs (%d) (schedule %v)",
					c, was, now, runs, cur.schedules[k].replicas)
			}
		}
	}
}

// checkKubeFed: a member object KubeFed made, whose migrated object is on the host and
// places it in its cluster, is never deleted or made again (RuleAdoptedInPlace).
func (w *World) checkKubeFed(prev, cur stepState) {
	w.mu.Lock()
	kf := slices.Clone(w.kubeFed)
	w.mu.Unlock()
	for _, k := range kf {
		mk := memberKey(k.cluster, k.typ.TargetGVR(), k.ns, k.name)
		if prev.kubeFed[mk] == "" || cur.kubeFed[mk] == prev.kubeFed[mk] {
			continue
		}
		if _, joined := cur.members[k.cluster]; !joined || w.isLeaving(k.cluster) || !w.migratedObject(k.typ, k.ns, k.name) {
			continue
		}
		u, err := w.Host.Peek(k.typ.FederatedGVR(), k.ns, k.name)
		if err != nil || u.GetDeletionTimestamp() != nil || !ownPlacementSelects(u, cur.clusters, k.cluster) {
			continue // the user deleted the migrated object, or placed it elsewhere
		}
		w.violate(RuleAdoptedInPlace, fmt.Sprintf("%s %s in %s", k.typ.Target.Kind, objectRef(k.ns, k.name), k.cluster),
			"KubeFed made it and its migrated %s places it there, yet it was deleted or made again (uid %s, now %q)", k.typ.Federated.Kind, prev.kubeFed[mk], cur.kubeFed[mk])
	}
}

// step returns the step (or round) violations name.
func (w *World) step() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.where.step
}

// referrers describes, for a violation, the workloads of namespace ns whose template refers to
// Secret name: their clusters (dependencies.Clusters), whether they are being deleted, and
// whether they propagate their dependencies.
func referrers(s stepState, ns, name string) string {
	var out []string
	for _, k := range sortedKeys(s.host) {
		u := s.host[k]
		if !strings.HasPrefix(k, federation.DeploymentType.FederatedResource+" ") || u.GetNamespace() != ns {
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			continue
		}
		refs, _ := dependencies.Builtin()[federation.DeploymentType.Target](fed.Spec.Template.Object)
		if !slices.ContainsFunc(refs, func(r dependencies.Reference) bool { return r.Kind == dependencies.KindSecret && r.Name == name }) {
			continue
		}
		out = append(out, fmt.Sprintf("%s (propagateDependencies %t, deleting %t, generated-by %q, clusters %v)", fed.Name, fed.Spec.PropagateDependencies,
			fed.DeletionTimestamp != nil, fed.Labels[federation.GeneratedByLabel], dependencies.Clusters(fed)))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}
