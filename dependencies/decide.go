package dependencies

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// Input is what [Decide] decides on: one namespace's workloads and federated dependencies as
// the driver read them, and what Decide asked to see (Decision.Reads). It is read only.
type Input struct {
	// Namespace is the namespace of the pass.
	Namespace string
	// ControlPlaneNamespace is the control plane's own namespace: nothing there follows a
	// workload, and no Secret of it ever does (federation.Credentials). The loop passes
	// Options.ControlPlaneNamespace.
	ControlPlaneNamespace string
	// Now stamps a changed condition's transition, and is when placement.Refused reads a
	// Cluster's taints.
	Now time.Time
	// Workloads are the federated objects of the workload types in Namespace.
	Workloads []WorkloadObject
	// WorkloadKinds are the Federated kinds of the workload types the loop runs over,
	// whether or not Namespace has objects of them. A dependency that a kind not among them
	// required when it was last written (federation.RequiredByKindsAnnotation) is neither
	// narrowed nor retired while its host object exists: the loop cannot see that kind's
	// workloads, whose copies may still use it (Decision.Kept).
	WorkloadKinds []string
	// References are what the Workloads refer to, index for index, as an earlier Decide of
	// this Input found them (Decision.References); nil: Decide reads the templates. The
	// driver hands them back with the reads a Decision asked for, so a pass reads each
	// template once.
	References []References
	// Kinds are, by dependency kind (the Kind* constants), its federated type and its
	// Federated<Kind> objects in Namespace. A kind left out has the built-in type and none.
	Kinds map[string]Federated
	// Fleet are the host's Clusters, when FleetRead. Decide asks for them (Reads.Fleet) when
	// a workload has overrides, or a user's dependency is to be placed. FleetErr is the
	// error of their list.
	Fleet     []federation.Cluster
	FleetRead bool
	FleetErr  error
	// Objects are the host objects Decide asked for (Reads.Objects), by Reference.String()
	// ("ConfigMap/app").
	Objects map[string]HostObject
}

// WorkloadObject is one federated workload as read: its type, the Extractor of its kind
// (nil: nothing of it follows), and the object.
type WorkloadObject struct {
	Type    federation.TypeConfig
	Extract Extractor
	Object  *federation.FederatedObject
}

// Federated is the federated type of a dependency kind and its Federated<Kind> objects of
// the namespace. Err is the error of their list: nothing of the kind is decided then.
type Federated struct {
	Type    federation.TypeConfig
	Objects []*unstructured.Unstructured
	Err     error
}

// HostObject is a host object as read: Object nil when it is not found; Err when the read
// failed.
type HostObject struct {
	Object *unstructured.Unstructured
	Err    error
}

// References is what one workload's pods refer to.
type References struct {
	// Follows: its dependencies follow it (spec.propagateDependencies, in a namespace things
	// follow workloads from).
	Follows bool
	// Workload is it as [Union] needs it ([WorkloadOf]), when Follows and Err is nil.
	Workload Workload
	// Err is why its template, or a cluster's render of it, cannot be read.
	Err error
}

// Decision is what one call of [Decide] decides for a namespace. The driver carries it out
// in order: Hold, then Writes, then LetGo, then Conditions. It is read only.
type Decision struct {
	// Reads, when not empty, is what Decide must see first; only References is set besides.
	// The driver reads it into Input and calls Decide again.
	Reads Reads
	// References are what Input.Workloads refer to, index for index.
	References []References
	// Workloads are those whose dependencies follow them; Dependencies is their [Union].
	Workloads    []Workload
	Dependencies []Dependency
	// Hold are the workloads (indexes of Input.Workloads) that take
	// federation.DependenciesFinalizer, before anything follows them.
	Hold []int
	// Writes are the federated dependencies to create, update or delete. They are sent only
	// when every Hold succeeded.
	Writes []Write
	// LetGo are the workloads whose finalizer goes.
	LetGo []LetGo
	// Conditions are the DependenciesResolved changes. A workload being deleted that the
	// driver let go may be gone: its change is not written.
	Conditions []ConditionChange
	// Errors are what could not be decided (a list or read that failed); what they concern
	// is left as it is.
	Errors []error
	// Requeue is how soon to look again; 0: no need.
	Requeue time.Duration
	// Kept are the federated dependencies left where they are placed, at least, because
	// kinds the loop does not run over required them (Input.WorkloadKinds).
	Kept []Kept
}

// Kept is a federated dependency of Type the loop does not narrow nor retire, and the kinds
// that required it which it does not run over.
type Kept struct {
	Type  federation.TypeConfig
	Name  string
	Kinds []string
}

// Reads is what Decide must see before it decides.
type Reads struct {
	// Fleet: the host's Clusters.
	Fleet bool
	// Objects are host objects to get.
	Objects []Reference
}

// Empty reports whether r asks for nothing.
func (r Reads) Empty() bool { return !r.Fleet && len(r.Objects) == 0 }

// Verb is what a [Write] does.
type Verb string

const (
	// Create creates Write.Object.
	Create Verb = "create"
	// Update updates to Write.Object, locked on its resourceVersion.
	Update Verb = "update"
	// Delete deletes Write.Object, locked on its uid and resourceVersion: only the version
	// decided on goes (a cache that lags may not show what was recorded since, such as the
	// clusters its copies are released in).
	Delete Verb = "delete"
)

// Write is one host write of a federated dependency of Type (its Federated<Kind>).
type Write struct {
	Verb   Verb
	Type   federation.TypeConfig
	Object *unstructured.Unstructured
}

// LetGo is a workload whose finalizer goes. One being orphaned (Orphaning) goes only once
// every Hold and Write succeeded and the Decision has no Errors: only then are the clusters
// its copies' dependencies are released in recorded.
type LetGo struct {
	Workload  int
	Orphaning bool
}

// ConditionChange is a workload's new DependenciesResolved condition (nil: it is removed),
// and the event that marks the change, if any.
type ConditionChange struct {
	Workload  int
	Condition *metav1.Condition
	Event     *Event
}

// Event is an event to record on a workload.
type Event struct {
	Type, Reason, Message string
}

// Decide decides one pass over a namespace: which workloads the loop's finalizer holds or
// lets go, the federated dependencies to create, update or delete, and each workload's
// DependenciesResolved condition. It is pure: the same Input gives the same Decision. Its
// rules are the package's (see the package documentation, "The rules"). When Input lacks
// what it must see, the Decision asks for it (Reads) and decides nothing else.
//
// The error is the Clusters' list, when a workload's overrides need them.
func Decide(in Input) (Decision, error) {
	x := newDecider(in)
	if err := x.references(); err != nil || !x.reads.Empty() {
		return Decision{Reads: x.reads}, err
	}
	d := Decision{References: x.refs, Workloads: x.workloads()}
	d.Dependencies = Union(d.Workloads)
	if x.reserved == "" {
		x.follow(d.Dependencies)
	}
	if !x.reads.Empty() {
		return Decision{Reads: x.reads, References: x.refs}, nil
	}
	if slices.ContainsFunc(d.Dependencies, func(dep Dependency) bool { return dep.Kind == KindSecret }) {
		// No watch tells of a Secret's change (see Run): look again.
		x.later(SecretRecheck)
	}
	d.Writes, d.Errors, d.Requeue, d.Kept = x.writes, x.errs, x.requeue, x.kept
	for i := range in.Workloads {
		x.finalizer(&d, i)
		if c, ok := x.condition(i); ok {
			d.Conditions = append(d.Conditions, c)
		}
	}
	return d, nil
}

// finalizer decides whether workload i takes the loop's finalizer ([decider.holds]) or lets
// it go.
func (x *decider) finalizer(d *Decision, i int) {
	obj := x.in.Workloads[i].Object
	held := slices.Contains(obj.Finalizers, federation.DependenciesFinalizer)
	switch {
	case x.holds(obj) && !held:
		d.Hold = append(d.Hold, i)
	case !x.holds(obj) && held:
		d.LetGo = append(d.LetGo, LetGo{Workload: i, Orphaning: orphaning(obj) && x.reserved == ""})
	}
}

// decider is one call of Decide: its input, and what it learns on the way.
type decider struct {
	in Input
	// reserved says why nothing in the namespace follows a workload
	// (federation.ReservedNamespace); "" when things may.
	reserved string
	refs     []References
	reads    Reads
	// By dependency, "Kind/name": missing on the host and not optional; refused, and why
	// (credentials); excluded by its own placement from clusters its workloads need it in.
	missing  map[string]bool
	refused  map[string]string
	excluded map[string]map[string]placement.Diagnosis
	writes   []Write
	kept     []Kept
	errs     []error
	requeue  time.Duration
}

func newDecider(in Input) *decider {
	return &decider{in: in, reserved: federation.ReservedNamespace(in.Namespace, in.ControlPlaneNamespace),
		missing: map[string]bool{}, refused: map[string]string{}, excluded: map[string]map[string]placement.Diagnosis{}}
}

// holds reports whether the loop's finalizer (federation.DependenciesFinalizer) belongs on
// obj: its dependencies follow it (spec.propagateDependencies, in a namespace things may
// follow workloads from) and it is not being deleted. The finalizer makes its deletion seen:
// a workload deleted with federation.OrphanAnnotation leaves its copies running, and the
// dependencies they use are released in their clusters, not deleted, before it goes.
func (x *decider) holds(obj *federation.FederatedObject) bool {
	return x.reserved == "" && obj.Spec.PropagateDependencies && obj.DeletionTimestamp == nil
}

// orphaning reports whether obj is being deleted with federation.OrphanAnnotation: sync
// orphans its member copies.
func orphaning(obj *federation.FederatedObject) bool {
	return obj.DeletionTimestamp != nil && obj.Annotations[federation.OrphanAnnotation] == "true"
}

// references finds what each workload refers to ([WorkloadOf]), unless Input has it. A
// workload with overrides needs the Clusters (their labels choose its overrides): without
// them it asks for them; their list's error fails the decision.
func (x *decider) references() error {
	if len(x.in.References) == len(x.in.Workloads) {
		x.refs = x.in.References
		return nil
	}
	for _, w := range x.in.Workloads {
		if x.follows(w) && len(w.Object.Spec.Overrides) > 0 {
			if !x.in.FleetRead {
				x.reads.Fleet = true
				return nil
			}
			if x.in.FleetErr != nil {
				return fmt.Errorf("dependencies: list Clusters: %w", x.in.FleetErr)
			}
		}
	}
	x.refs = make([]References, len(x.in.Workloads))
	for i, w := range x.in.Workloads {
		if !x.follows(w) {
			continue
		}
		wl, err := WorkloadOf(w.Type, w.Extract, w.Object, x.in.Fleet)
		x.refs[i] = References{Follows: true, Workload: wl, Err: err}
	}
	return nil
}

// follows reports whether w's dependencies follow it.
func (x *decider) follows(w WorkloadObject) bool {
	return w.Extract != nil && w.Object.Spec.PropagateDependencies && x.reserved == ""
}

// workloads are the workloads whose dependencies follow them and whose templates read.
func (x *decider) workloads() []Workload {
	var out []Workload
	for _, r := range x.refs {
		if r.Follows && r.Err == nil {
			out = append(out, r.Workload)
		}
	}
	return out
}

// later asks to look again within d.
func (x *decider) later(d time.Duration) {
	if x.requeue == 0 || d < x.requeue {
		x.requeue = d
	}
}
