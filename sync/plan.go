package sync

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
)

// Action is what sync does to the member object in one cluster.
type Action string

// String returns the action's name, "None" for ActionNone.
func (a Action) String() string {
	if a == ActionNone {
		return "None"
	}
	return string(a)
}

// Actions. ActionNone also covers "cannot act now": Change.Reason says why.
const (
	// ActionNone (the zero Action): the member object is as rendered, or nothing can be done
	// now (see Reason).
	ActionNone Action = ""
	// ActionCreate: the object is placed in the cluster and absent there.
	ActionCreate Action = "Create"
	// ActionUpdate: the object differs from the render in the fields the federation owns, or
	// the desired state changed, or sync adopts an object it did not create.
	ActionUpdate Action = "Update"
	// ActionDelete: the object is no longer placed in the cluster (or the federated object is
	// being deleted) and the federation manages it there.
	ActionDelete Action = "Delete"
	// ActionOrphan: like ActionDelete, but the federated object is deleted with
	// federation.OrphanAnnotation (or the cluster leaves the federation under RemovalOrphan):
	// the federation's labels and annotations are removed and the object stays.
	ActionOrphan Action = "Orphan"
)

// Propagation reasons, written to status.clusters[].propagation ("" means in sync).
const (
	// ReasonClusterNotReady: the Cluster's Ready condition is not True; sync writes nothing
	// there (and deletes nothing) until it is. Also when the Cluster says Ready but the
	// cluster set says its client is not (it could not build it yet): the object is then
	// retried with backoff.
	ReasonClusterNotReady = "ClusterNotReady"
	// ReasonClusterUnreachable: the member's API server could not be reached.
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonClusterNotFound: the cluster set has no client for the cluster (a set builds its
	// clients on its own watch, so a pass can come first); the object is retried with backoff.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonCreationFailed, ReasonUpdateFailed, ReasonDeletionFailed: the member's API
	// server refused the write; the message has its answer.
	ReasonCreationFailed = "CreationFailed"
	ReasonUpdateFailed   = "UpdateFailed"
	ReasonDeletionFailed = "DeletionFailed"
	// ReasonAlreadyExists: an object of the same name exists in the member and the
	// federation did not create it; sync leaves it alone unless adoption is allowed.
	ReasonAlreadyExists = "AlreadyExists"
	// ReasonManagedByOther: the member object belongs to another federation (its managed-by
	// label has another value); sync never takes it over.
	ReasonManagedByOther = "ManagedByOther"
	// ReasonRenderFailed: the template and overrides cannot be rendered for the cluster (an
	// override path that does not exist, a value of the wrong type).
	ReasonRenderFailed = "RenderFailed"
	// ReasonWaitingForRemoval: the member object is being deleted (it has a
	// deletionTimestamp and finalizers); sync waits until it is gone.
	ReasonWaitingForRemoval = "WaitingForRemoval"
	// ReasonTypeNotServed: the member's API server does not serve the target type (its CRD
	// is not installed there).
	ReasonTypeNotServed = "TypeNotServed"
	// ReasonNamespaceTerminating: the member namespace is being deleted and refuses new
	// objects.
	ReasonNamespaceTerminating = "NamespaceTerminating"
	// ReasonWaitingForNamespace: the member namespace does not exist and a FederatedNamespace
	// governs it; sync waits for that to create it.
	ReasonWaitingForNamespace = "WaitingForNamespace"
	// ReasonNamespaceNotPlaced: the member namespace does not exist and a FederatedNamespace
	// governs it, but does not place it in this cluster (or is being deleted, or its placement
	// is invalid): the namespace will not come until its placement changes.
	ReasonNamespaceNotPlaced = "NamespaceNotPlaced"
	// ReasonSystemNamespace: the member object is a system namespace, one every cluster has
	// and its own components live in (default, kube-node-lease, kube-public, kube-system),
	// and would have been deleted. A FederatedNamespace may adopt one
	// (federation.AdoptAnnotation), but sync never deletes one: it orphans it instead
	// (ActionOrphan) and warns.
	ReasonSystemNamespace = "SystemNamespace"
	// ReasonHostNamespace: the member object is a namespace of the host itself, the host
	// being also a member (the member Namespace has the uid of the host's: see
	// [MemberState].Host), and would have been deleted, with the federation's own objects in
	// it. Sync orphans it instead (ActionOrphan) and warns, as for ReasonSystemNamespace.
	ReasonHostNamespace = "HostNamespace"
)

// protectedNamespace reports whether reason is one of a namespace sync orphans rather than
// deletes (a warning event each time).
func protectedNamespace(reason string) bool {
	return reason == ReasonSystemNamespace || reason == ReasonHostNamespace
}

// isNamespaceType reports whether typ federates core Namespaces (FederatedNamespace).
func isNamespaceType(typ federation.TypeConfig) bool {
	return typ.Target.Group == "" && typ.Target.Kind == "Namespace"
}

// createdBySync reports whether obj is a core Namespace that sync created for the objects it
// propagates (CreatedNamespaceAnnotation): such a namespace is released by those objects'
// passes when nothing else lives in it, never deleted by a FederatedNamespace.
func createdBySync(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetKind() == "Namespace" && obj.GetAPIVersion() == "v1" &&
		obj.GetAnnotations()[CreatedNamespaceAnnotation] == "true"
}

// systemNamespace reports whether obj is a core Namespace that sync never deletes (see
// ReasonSystemNamespace).
func systemNamespace(obj *unstructured.Unstructured) bool {
	if obj.GetKind() != "Namespace" || obj.GetAPIVersion() != "v1" {
		return false
	}
	switch obj.GetName() {
	case "default", "kube-node-lease", "kube-public", "kube-system":
		return true
	}
	return false
}

// Change is the decision for one cluster: plain data, computed by [Plan] without I/O.
type Change struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Action is what to do.
	Action Action
	// Reason is the propagation reason when the cluster is not (or cannot be made) in sync
	// by this change, e.g. ReasonClusterNotReady; "" otherwise.
	Reason string
	// Message explains Reason, naming the cluster and the cause.
	Message string
	// Desired is the rendered object for ActionCreate and ActionUpdate. It shares memory
	// with the federated object's template, and clusters whose render is the same (no
	// overrides, no member object yet, the same replica count) share one Desired: treat it as
	// read-only, and DeepCopy it before changing it.
	Desired *unstructured.Unstructured
	// Live is the member object as read, nil when absent.
	Live *unstructured.Unstructured
	// Drift lists the JSON pointers of owned fields where Live differs from Desired, when
	// that is why the object is updated (at most a few, for messages and previews).
	Drift []string
	// Placed reports whether the object is placed in the cluster.
	Placed bool
	// Revision is the revision the cluster's object is rendered from, for placed clusters:
	// PlanInput.Revision, or during a staged rollout the older one it keeps
	// (PlanInput.Previous).
	Revision int64
}

// MemberState is what sync knows about the member object in one cluster.
type MemberState struct {
	// Object is the member object as read (from a cache or the API), nil when absent.
	Object *unstructured.Unstructured
	// Err is set when the member could not be read: nothing is decided for the cluster, and
	// its reason comes from the error.
	Err error
	// Verified is the member object's resourceVersion when sync last wrote it or last found
	// it in line with the render. When Object still has it, nobody has changed the object
	// since and the owned-field comparison is skipped. Empty when unknown.
	Verified string
	// VerifiedInput is the render input key (see [InputKey]) Verified was checked against.
	// When Object still has resourceVersion Verified and the input key is unchanged, the
	// cluster is in sync without even being rendered: what makes a resync cheap.
	VerifiedInput string
	// Unchanged reports that the object was not read: the member cache said it is still at
	// resourceVersion Verified, and VerifiedInput is the cluster's current input key. Object
	// is nil then, and the cluster is in sync.
	Unchanged bool
	// Dropped are the owned paths (JSON pointers) the member's API server did not keep when
	// sync last wrote the object: fields its types do not have, which a real server prunes.
	// A difference there is not drift, so another writer's change to the object does not
	// make sync write it again in vain. Empty when unknown.
	Dropped []string
	// Host reports that Object is the host's own (the host is also a member: a Namespace
	// with the uid of the host's Namespace of that name). Sync never deletes it: it is
	// orphaned (ReasonHostNamespace).
	Host bool
}

// PlanInput is everything [Plan] needs to decide what sync does for one federated object.
type PlanInput struct {
	// Type is the federated type.
	Type federation.TypeConfig
	// Object is the federated object, defaulted (federation.DefaultFederatedObject).
	Object *federation.FederatedObject
	// Clusters are the Cluster objects of the federation.
	Clusters []federation.Cluster
	// Members holds the member object of each cluster that was read. A cluster that is not
	// in the map is treated as not read (no decision beyond its readiness).
	Members map[string]MemberState
	// Revision is the federated object's current revision, written to the members'
	// revision annotation.
	Revision int64
	// Identity is the value of federation.ManagedByLabel on the objects this federation
	// manages ("" = federation.ManagedByValue).
	Identity string
	// Adopt lets sync take over a member object of the same name that no federation
	// manages (the Syncer's policy, or federation.AdoptAnnotation on the object).
	Adopt bool
	// Renderer renders member objects; nil uses the default retention table.
	Renderer *override.Renderer
	// ClusterRemoval says what happens to the member objects in a cluster whose Cluster is
	// being deleted: orphaned ("" or RemovalOrphan) or deleted (RemovalDelete).
	ClusterRemoval ClusterRemovalPolicy
	// Previous is set during a staged rollout (spec.rollout, see [DecideRollout]): the older
	// revision that the clusters it lists keep. Their objects are rendered from it; every
	// other placed cluster's from Object at Revision. nil: every cluster runs Revision.
	Previous *PreviousRevision
	// WaitForScheduler is the Syncer's Options.WaitForScheduler: a scheduler runs for the
	// type, and without a schedule for the object's current generation nothing is decided
	// (see [Targets].Waiting).
	WaitForScheduler bool

	// fields is the member type's schema (see fieldSchema), which the Syncer builds once;
	// nil: Plan builds it.
	fields *fieldSchema
}

// memberSchema returns the member type's schema: in.fields, else built from in.Type.
func (in PlanInput) memberSchema() *fieldSchema {
	if in.fields != nil {
		return in.fields
	}
	return schemaFor(in.Type.Target)
}

// Targets is where a federated object goes: the clusters and their replicas.
type Targets struct {
	// Replicas per placed cluster: the scheduled count, or nil to keep the template's.
	Replicas map[string]*int64
	// Order is the placed clusters in placement order.
	Order []string
	// NotReady are clusters the object would be placed in, or that status.clusters lists
	// (sync propagated there before), whose Ready condition is not True: sync neither writes
	// nor deletes there, and reports them ClusterNotReady.
	NotReady []string
	// Unplaced are the clusters of NotReady that are there only because status.clusters
	// lists them: no longer placed, but what sync put there may still run.
	Unplaced []string
	// Scheduled reports whether the targets come from the scheduler's status.schedule.
	Scheduled bool
	// Unsatisfiable is placement's ErrUnsatisfiable message, when the selection is a best
	// effort.
	Unsatisfiable string
	// Waiting is set by [Plan] with PlanInput.WaitForScheduler when the object has no
	// schedule for its current generation: ReasonWaitingForSchedule (the scheduler has not
	// looked at it yet) or ReasonNotScheduled (it refused it). Nothing is placed then and no
	// change planned: nothing is created, updated or deleted anywhere.
	Waiting string
}

// TargetsFor decides where a federated object goes. When the scheduler has written a
// schedule for the object's current generation (its Scheduled condition observed it), the
// schedule's clusters and replica counts are used; otherwise spec.placement is evaluated over
// the clusters and the template's replica count is kept. Clusters that placement leaves out
// only because they are not ready are listed in NotReady, and so are the clusters of
// status.clusters that are not ready and no longer placed: the object sync put there may
// still run, and nothing can be removed until the cluster is back (a preference that sets the
// placement aside, then a partition that makes the scheduler drop the cluster, would
// otherwise make it vanish from the status while its object runs on). An invalid placement is
// an error wrapping placement.ErrInvalidPlacement.
func TargetsFor(obj *federation.FederatedObject, typ federation.TypeConfig, clusters []federation.Cluster) (Targets, error) {
	t := Targets{Replicas: map[string]*int64{}}
	// A Cluster being deleted is leaving the federation: nothing is placed there any more.
	leaving := map[string]bool{}
	for i := range clusters {
		if clusters[i].DeletionTimestamp != nil {
			leaving[clusters[i].Name] = true
		}
	}
	if len(leaving) > 0 {
		clusters = slices.DeleteFunc(slices.Clone(clusters), func(c federation.Cluster) bool { return leaving[c.Name] })
	}
	d, err := placement.Evaluate(obj.Spec.Placement, clusters)
	switch {
	case errors.Is(err, placement.ErrUnsatisfiable):
		t.Unsatisfiable = err.Error()
	case err != nil:
		return Targets{}, err
	}
	for _, x := range d.Excluded {
		if x.Rule == placement.NotReady {
			t.NotReady = append(t.NotReady, x.Cluster)
		}
	}
	ready := readyClusters(clusters)
	if s := currentSchedule(obj); s != nil {
		t.Scheduled = true
		for _, c := range s.Clusters {
			if leaving[c.Name] {
				continue
			}
			if !ready[c.Name] {
				if !slices.Contains(t.NotReady, c.Name) {
					t.NotReady = append(t.NotReady, c.Name)
				}
				continue
			}
			t.Order = append(t.Order, c.Name)
			if typ.Divisible() {
				n := c.Replicas
				t.Replicas[c.Name] = &n
			} else {
				t.Replicas[c.Name] = nil
			}
		}
		t.Unplaced = unreachablePrevious(obj, t, ready, leaving)
		t.NotReady = append(t.NotReady, t.Unplaced...)
		return t, nil
	}
	for _, c := range d.Selected {
		t.Order = append(t.Order, c.Name)
		t.Replicas[c.Name] = nil
	}
	t.Unplaced = unreachablePrevious(obj, t, ready, leaving)
	t.NotReady = append(t.NotReady, t.Unplaced...)
	return t, nil
}

// RolloutClusters are the clusters a staged rollout lays its stages over: the placed ones,
// ready or not (Order and NotReady), but not those that left the placement (Unplaced): a
// cluster that leaves the placement leaves the rollout.
func (t Targets) RolloutClusters() []string {
	out := make([]string, 0, len(t.Order)+len(t.NotReady))
	out = append(out, t.Order...)
	for _, c := range t.NotReady {
		if !slices.Contains(t.Unplaced, c) {
			out = append(out, c)
		}
	}
	return out
}

// unreachablePrevious returns the clusters of status.clusters that are known, not ready, not
// leaving, and in neither t.Order nor t.NotReady.
func unreachablePrevious(obj *federation.FederatedObject, t Targets, ready, leaving map[string]bool) []string {
	var out []string
	for _, c := range obj.Status.Clusters {
		isReady, known := ready[c.Name]
		if !known || isReady || leaving[c.Name] || slices.Contains(t.Order, c.Name) || slices.Contains(t.NotReady, c.Name) || slices.Contains(out, c.Name) {
			continue
		}
		out = append(out, c.Name)
	}
	return out
}

// currentSchedule returns status.schedule when the Scheduled condition observed the object's
// generation, else nil.
func currentSchedule(obj *federation.FederatedObject) *federation.Schedule {
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled)
	if c == nil || obj.Status.Schedule == nil || c.ObservedGeneration != obj.Generation {
		return nil
	}
	return obj.Status.Schedule
}

// scheduleOutdated reports whether a scheduler has written a schedule before but not yet for
// this generation: sync then waits rather than push the template's replica count for a
// moment.
func scheduleOutdated(obj *federation.FederatedObject) bool {
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled)
	return c != nil && obj.Status.Schedule != nil && c.ObservedGeneration < obj.Generation
}

// scheduledBeforeReady reports whether the current schedule left out, as not ready, a cluster
// that is Ready now: the scheduler has yet to place it again, and until it has, the schedule's
// silence about that cluster does not mean "delete what runs there" (sync then waits).
func scheduledBeforeReady(obj *federation.FederatedObject, clusters []federation.Cluster) bool {
	s := currentSchedule(obj)
	if s == nil || len(s.NotReady) == 0 {
		return false
	}
	ready := readyClusters(clusters)
	for _, name := range s.NotReady {
		if ready[name] {
			return true
		}
	}
	return false
}

func readyClusters(clusters []federation.Cluster) map[string]bool {
	out := make(map[string]bool, len(clusters))
	for i := range clusters {
		out[clusters[i].Name] = meta.IsStatusConditionTrue(clusters[i].Status.Conditions, federation.ConditionReady)
	}
	return out
}

// Plan decides what sync does in every cluster for one federated object: create, update,
// delete, orphan or nothing, with the rendered object and the reason when a cluster cannot be
// brought in line. It is pure: the same input gives the same changes, in cluster name order.
//
// The rules, per cluster:
//   - a cluster that is not ready gets no writes and no deletes (ReasonClusterNotReady);
//   - a member object the federation does not manage (no managed-by label with this
//     federation's identity) is never modified or deleted: if the object is placed there,
//     the cluster reports ReasonAlreadyExists (or ReasonManagedByOther) unless adoption is
//     allowed and no other federation manages it;
//   - placed and absent: create; placed and present: update when the desired-state hash
//     differs or, if the object changed since sync last wrote or verified it, when an owned
//     field differs (see [Change].Drift); nothing otherwise;
//   - not placed, or the federated object is being deleted: delete what the federation
//     manages there. The deletion of an object with federation.OrphanAnnotation orphans
//     instead (a placement change still deletes), and so does a cluster leaving the
//     federation under RemovalOrphan; a system namespace is orphaned, never deleted
//     (ReasonSystemNamespace).
//
// An invalid placement is returned as an error and no change is planned. With
// PlanInput.WaitForScheduler, an object without a schedule for its current generation gets no
// change either, and Targets.Waiting says why (a deletion never waits).
func Plan(in PlanInput) ([]Change, Targets, error) {
	var t Targets
	if in.Object.DeletionTimestamp == nil {
		if in.WaitForScheduler {
			if reason, _ := scheduleWait(in.Object); reason != "" {
				return nil, Targets{Waiting: reason}, nil
			}
		}
		var err error
		if t, err = TargetsFor(in.Object, in.Type, in.Clusters); err != nil {
			return nil, Targets{}, err
		}
	}
	return planFor(in, t), t, nil
}

// planFor is Plan for targets already decided by TargetsFor (nothing for an object being
// deleted).
func planFor(in PlanInput, t Targets) []Change {
	obj := in.Object
	if isNamespaceType(in.Type) && obj.Name != obj.Namespace {
		// A FederatedNamespace governs its own namespace only (see ValidateFederatedObject): one
		// named otherwise never created anything, and deletes nothing when deleted.
		return nil
	}
	deleting := obj.DeletionTimestamp != nil
	ready := readyClusters(in.Clusters)
	placed := make(map[string]bool, len(t.Order))
	for _, n := range t.Order {
		placed[n] = true
	}

	// Render once for every placed cluster that was read.
	renders := renderPlaced(in, t)

	names := make([]string, 0, len(in.Clusters))
	for i := range in.Clusters {
		names = append(names, in.Clusters[i].Name)
	}
	slices.Sort(names)
	identity := identityOr(in.Identity)
	orphan := orphanOnDeletion(obj)
	fields := in.memberSchema()
	out := make([]Change, 0, len(names)) // at most one per cluster: no growing and copying
	for _, name := range names {
		ms, read := in.Members[name]
		ch := Change{Cluster: name, Placed: placed[name], Live: ms.Object}
		switch {
		case !ready[name]:
			// Listed before: sync may have put the object there, and cannot tell until the
			// cluster is back, so the entry stays (a deletion waits for it too).
			if placed[name] || slices.Contains(t.NotReady, name) || managedBy(ms.Object, identity) || listed(obj, name) {
				ch.Reason = ReasonClusterNotReady
				ch.Message = fmt.Sprintf("cluster %q is not ready; nothing is written there until it is", name)
				ch.Placed = ch.Placed || slices.Contains(t.NotReady, name)
				out = append(out, ch)
			}
			continue
		case !read:
			if placed[name] {
				out = append(out, ch) // not read: nothing decided
			}
			continue
		case ms.Err != nil:
			if placed[name] || deleting {
				ch.Reason, ch.Message = readFailure(name, ms.Err)
				out = append(out, ch)
			}
			continue
		}
		r := renders[name]
		if !placed[name] {
			r = rendered{}
		}
		ch = decideMember(ch, ms, r, fields, identity, in.Adopt, deleting, orphanIn(in, name, orphan))
		if ch.Placed || ch.Action != ActionNone || ch.Reason != "" {
			out = append(out, ch)
		}
	}
	if len(out) == 0 {
		return nil // nothing for any cluster: nil, as ever
	}
	return withRevisions(in, out)
}

// listed reports whether status.clusters has an entry for cluster.
func listed(obj *federation.FederatedObject, cluster string) bool {
	for i := range obj.Status.Clusters {
		if obj.Status.Clusters[i].Name == cluster {
			return true
		}
	}
	return false
}

// orphanOnDeletion reports whether obj is being deleted with federation.OrphanAnnotation: its
// member objects are then orphaned. The annotation means nothing else: a cluster that leaves
// the placement of an object that carries it has its member object deleted, as in KubeFed.
func orphanOnDeletion(obj *federation.FederatedObject) bool {
	return obj.DeletionTimestamp != nil && obj.GetAnnotations()[federation.OrphanAnnotation] == "true"
}

// orphanIn reports whether the managed object in cluster is orphaned rather than deleted when
// it goes: the federated object is being deleted and asks for it (orphan, see
// orphanOnDeletion), or the cluster is leaving the federation and the policy keeps what runs
// there.
func orphanIn(in PlanInput, cluster string, orphan bool) bool {
	if orphan {
		return true
	}
	for i := range in.Clusters {
		if in.Clusters[i].Name == cluster {
			return in.Clusters[i].DeletionTimestamp != nil && in.ClusterRemoval != RemovalDelete
		}
	}
	return false
}

// rendered is one cluster's render.
type rendered struct {
	obj *unstructured.Unstructured
	err error
	// unchanged: the member object is as sync last wrote or verified it, for the same
	// input; it was not rendered.
	unchanged bool
}

// unchanged reports whether the member object in ms is as sync left it, for input key k.
func unchanged(ms MemberState, k string) bool {
	return ms.Object != nil && ms.Verified != "" && ms.Verified == ms.Object.GetResourceVersion() && ms.VerifiedInput == k
}

// InputKey identifies everything a cluster's render depends on besides the member object:
// the federated object (uid and generation: its spec), the revision, the cluster's replicas
// and labels (selector overrides), and the identity. Equal keys render equal objects from an
// unchanged member object.
func InputKey(in PlanInput, t Targets, cluster string) string {
	for i := range in.Clusters {
		if in.Clusters[i].Name == cluster {
			return inputKey(in, t, cluster, in.Clusters[i].Labels)
		}
	}
	return inputKey(in, t, cluster, nil)
}

// inputKeys returns the InputKey of every cluster, computed at once.
func inputKeys(in PlanInput, t Targets) map[string]string {
	out := make(map[string]string, len(in.Clusters))
	for i := range in.Clusters {
		out[in.Clusters[i].Name] = inputKey(in, t, in.Clusters[i].Name, in.Clusters[i].Labels)
	}
	return out
}

func inputKey(in PlanInput, t Targets, cluster string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(string(in.Object.UID))
	b.WriteByte('/')
	b.WriteString(strconv.FormatInt(in.Object.Generation, 10))
	b.WriteByte('/')
	b.WriteString(strconv.FormatInt(in.revisionFor(cluster), 10))
	b.WriteByte('/')
	b.WriteString(identityOr(in.Identity))
	b.WriteByte('/')
	if r := t.Replicas[cluster]; r != nil {
		b.WriteString(strconv.FormatInt(*r, 10))
	} else {
		b.WriteByte('-')
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString("/" + k + "=" + labels[k])
	}
	return b.String()
}

func renderPlaced(in PlanInput, t Targets) map[string]rendered {
	labels := clusterLabels(in.Clusters)
	members := make([]override.Member, 0, len(t.Order))
	out := make(map[string]rendered, len(t.Order))
	for _, name := range t.Order {
		ms, ok := in.Members[name]
		if !ok || ms.Err != nil {
			continue
		}
		if ms.Unchanged || (ms.Object != nil && ms.Verified != "" && unchanged(ms, inputKey(in, t, name, labels[name]))) {
			out[name] = rendered{unchanged: true}
			continue
		}
		members = append(members, override.Member{Name: name, Labels: labels[name], Replicas: t.Replicas[name], Existing: ms.Object})
	}
	members, held := heldBack(in, members)
	for i, res := range renderMembers(renderer(in), renderInput(in), members) {
		out[members[i].Name] = withIdentity(rendered{obj: res.Object, err: res.Err}, in.Identity)
	}
	if len(held) > 0 {
		prev := in.forCluster(held[0].Name)
		for i, res := range renderMembers(renderer(in), renderInput(prev), held) {
			out[held[i].Name] = withIdentity(rendered{obj: res.Object, err: res.Err}, in.Identity)
		}
	}
	return out
}

// renderMembers is r.RenderMembers rendering once for the members whose render is bound to be
// the same, who then share the object: without overrides, the members without a member
// object and with the same replica count (a render then depends on nothing else about the
// cluster). That is most of a first propagation, whose every member is new. A failed shared
// render is done again for each member, so each error names its own cluster.
func renderMembers(r *override.Renderer, in override.Input, members []override.Member) []override.Rendered {
	if len(in.Overrides) > 0 || len(members) < 2 {
		return r.RenderMembers(in, members)
	}
	type sameAs struct{ member, first int }
	var (
		todo    = make([]override.Member, 0, len(members))
		at      = make([]int, len(members)) // members[i]'s render is todo's at[i]
		aliases []sameAs
		firsts  = map[int64]int{} // by replica count (-1: none), the first new member's
	)
	for i, m := range members {
		if m.Existing == nil {
			rep := int64(-1)
			if m.Replicas != nil {
				rep = *m.Replicas
			}
			if j, ok := firsts[rep]; ok {
				aliases = append(aliases, sameAs{i, j})
				continue
			}
			firsts[rep] = i
		}
		at[i] = len(todo)
		todo = append(todo, m)
	}
	if len(aliases) == 0 {
		return r.RenderMembers(in, members)
	}
	done := r.RenderMembers(in, todo)
	out := make([]override.Rendered, len(members))
	var again []int
	for i := range members {
		out[i] = done[at[i]]
	}
	for _, a := range aliases {
		out[a.member] = out[a.first]
		if out[a.first].Err != nil {
			again = append(again, a.member)
		}
	}
	if len(again) > 0 {
		retry := make([]override.Member, len(again))
		for k, i := range again {
			retry[k] = members[i]
		}
		for k, res := range r.RenderMembers(in, retry) {
			out[again[k]] = res
		}
	}
	return out
}

// renderOne renders the object for one cluster again, after a Conflict: the same input as the
// first render of the pass, with the member object read afresh.
func renderOne(in PlanInput, cluster string, existing *unstructured.Unstructured) rendered {
	in = in.forCluster(cluster)
	t, err := TargetsFor(in.Object, in.Type, in.Clusters)
	if err != nil {
		return rendered{err: err}
	}
	input := renderInput(in)
	input.ClusterName, input.ClusterLabels = cluster, clusterLabels(in.Clusters)[cluster]
	input.Replicas, input.Existing = t.Replicas[cluster], existing
	obj, err := renderer(in).Render(input)
	return withIdentity(rendered{obj: obj, err: err}, in.Identity)
}

func renderer(in PlanInput) *override.Renderer {
	if in.Renderer == nil {
		return &override.Renderer{}
	}
	return in.Renderer
}

func renderInput(in PlanInput) override.Input {
	input := override.InputFor(in.Object, in.Type)
	input.Revision = in.Revision
	return input
}

func clusterLabels(clusters []federation.Cluster) map[string]map[string]string {
	out := make(map[string]map[string]string, len(clusters))
	for i := range clusters {
		out[clusters[i].Name] = clusters[i].Labels
	}
	return out
}

// withIdentity sets the managed-by label to this federation's identity. The render's labels
// map is its own (step 5 of the render pipeline), so it may be changed in place.
func withIdentity(r rendered, identity string) rendered {
	identity = identityOr(identity)
	if r.err != nil || r.obj == nil || identity == federation.ManagedByValue {
		return r
	}
	if m, ok := r.obj.Object["metadata"].(map[string]any); ok {
		if l, ok := m["labels"].(map[string]any); ok {
			l[federation.ManagedByLabel] = identity
		}
	}
	return r
}

// decideMember applies the per-cluster rules of Plan to one read, ready cluster. fields is the
// member type's schema (nil when unknown).
func decideMember(ch Change, ms MemberState, r rendered, fields *fieldSchema, identity string, adopt, deleting, orphan bool) Change {
	live := ms.Object
	if (!ch.Placed || deleting) && createdBySync(live) {
		return ch // another Syncer's namespace for its objects: not a FederatedNamespace's to remove
	}
	if live != nil && !managedBy(live, identity) {
		if !ch.Placed || deleting {
			return ch // never ours: leave it alone, report nothing
		}
		if other := managerOf(live); other != "" {
			ch.Reason = ReasonManagedByOther
			ch.Message = fmt.Sprintf("cluster %q: %s is managed by another federation (%s=%s); it is left alone", ch.Cluster, describe(live), federation.ManagedByLabel, other)
			return ch
		}
		if !adopt {
			ch.Reason = ReasonAlreadyExists
			ch.Message = fmt.Sprintf("cluster %q: %s exists and was not created by the federation; set the annotation %s: \"true\" on the federated object to adopt it", ch.Cluster, describe(live), federation.AdoptAnnotation)
			return ch
		}
	}
	if deleting || !ch.Placed {
		if live == nil {
			return ch
		}
		if live.GetDeletionTimestamp() != nil {
			ch.Reason = ReasonWaitingForRemoval
			ch.Message = fmt.Sprintf("cluster %q: %s is being deleted", ch.Cluster, describe(live))
			return ch
		}
		ch.Action = ActionDelete
		switch {
		case orphan:
			ch.Action = ActionOrphan
		case systemNamespace(live):
			ch.Action, ch.Reason = ActionOrphan, ReasonSystemNamespace
			ch.Message = fmt.Sprintf("cluster %q: %s is a system namespace: it is never deleted, only left without the federation's labels", ch.Cluster, describe(live))
		case ms.Host:
			ch.Action, ch.Reason = ActionOrphan, ReasonHostNamespace
			ch.Message = fmt.Sprintf("cluster %q: %s is the host's own namespace (the host is also a member): it is never deleted, only left without the federation's labels", ch.Cluster, describe(live))
		}
		return ch
	}
	if r.err != nil {
		ch.Reason = ReasonRenderFailed
		ch.Message = fedcond.Truncate(r.err.Error(), maxMessage)
		return ch
	}
	if r.unchanged {
		return ch // as sync left it, for the same input
	}
	if r.obj == nil {
		return ch // not rendered: not read
	}
	ch.Desired = r.obj
	switch {
	case live == nil:
		ch.Action = ActionCreate
	case live.GetDeletionTimestamp() != nil:
		ch.Reason = ReasonWaitingForRemoval
		ch.Message = fmt.Sprintf("cluster %q: %s is being deleted; it is created again once it is gone", ch.Cluster, describe(live))
	case !managedBy(live, identity):
		ch.Action = ActionUpdate // adoption
	case hashOf(live) != hashOf(r.obj):
		ch.Action = ActionUpdate
	case ms.Verified != "" && ms.Verified == live.GetResourceVersion():
		// Nobody changed the object since sync wrote or checked it.
	default:
		ch.Drift = slices.DeleteFunc(ownedDiff(r.obj.Object, live.Object, fields), func(p string) bool { return slices.Contains(ms.Dropped, p) })
		if len(ch.Drift) > 0 {
			ch.Action = ActionUpdate
		}
	}
	return ch
}

// readFailure turns a failed member read into a propagation reason and message.
func readFailure(cluster string, err error) (string, string) {
	switch {
	case errors.Is(err, federation.ErrClusterNotFound):
		return ReasonClusterNotFound, fmt.Sprintf("cluster %q: %v", cluster, err)
	case errors.Is(err, federation.ErrClusterNotReady):
		return ReasonClusterNotReady, fmt.Sprintf("cluster %q: %v", cluster, err)
	case typeNotServed(err):
		return ReasonTypeNotServed, fmt.Sprintf("cluster %q does not serve the type: %v", cluster, err)
	}
	return ReasonClusterUnreachable, fedcond.Truncate(fmt.Sprintf("cluster %q: %v", cluster, err), maxMessage)
}

// managedBy reports whether obj carries the managed-by label with value identity.
func managedBy(obj *unstructured.Unstructured, identity string) bool {
	return obj != nil && managerOf(obj) == identity
}

// managerOf returns the managed-by label's value ("" when absent).
func managerOf(obj *unstructured.Unstructured) string {
	// Without GetLabels, which copies the whole map: this runs for every member, every pass.
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "labels", federation.ManagedByLabel)
	s, _ := v.(string)
	return s
}

func hashOf(obj *unstructured.Unstructured) string {
	return obj.GetAnnotations()[federation.DesiredHashAnnotation]
}

func identityOr(id string) string {
	if id == "" {
		return federation.ManagedByValue
	}
	return id
}

func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", obj.GetKind(), ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
}

// maxMessage bounds status messages well below the API's limits.
const maxMessage = 1024

// condition builds a condition of type typ for the object's generation.
func condition(typ string, status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: fedcond.Truncate(message, maxMessage), ObservedGeneration: generation}
}
