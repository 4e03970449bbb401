package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// ErrRefused is wrapped by every [Refusal]: errors.Is(err, gate.ErrRefused) tells a write the
// gate refused from one the API server failed.
var ErrRefused = errors.New("refused by the gate")

// ReasonRefused is the reason of the events and conditions that say the gate refused a
// write.
const ReasonRefused = "RefusedByGate"

// RecheckAfter is how soon a driver looks again at an object the gate refused a write of:
// not with an error's backoff (only a change can help), never in a hot loop.
const RecheckAfter = 30 * time.Second

// Verb is what a destructive write does to its object.
type Verb string

const (
	// Delete removes the object.
	Delete Verb = "Delete"
	// Orphan updates the object without the federation's labels and annotations: the
	// federation lets it go, and stops managing it.
	Orphan Verb = "Orphan"
	// Adopt updates an object no federation manages into the federation's: it takes it over.
	Adopt Verb = "Adopt"
	// Place creates or updates a copy in a member cluster. Only a Secret's is checked (see
	// [InvariantSecretPlacement]); a driver sends every other create and update as it likes.
	Place Verb = "Place"
)

// Write is one destructive write a driver decided, with the evidence it was decided on.
type Write struct {
	// Verb is what the write does.
	Verb Verb
	// Cluster is the member cluster written; "" for the host.
	Cluster string
	// Resource is the object's resource.
	Resource schema.GroupVersionResource
	// Object is, for Delete, Orphan and Adopt, the object as read (its uid, resourceVersion,
	// labels, annotations and status are evidence the gate reads); for Place the object
	// written. Orphan's and Adopt's update is Evidence.Next.
	Object *unstructured.Unstructured
	// Evidence is what the decision rests on besides the object itself.
	Evidence Evidence
}

// Evidence is what a driver knew when it decided a [Write]: each field is the proof one
// invariant asks for. The zero Evidence proves nothing, so a delete with it is refused
// unless the object carries its own proof (Mark).
type Evidence struct {
	// Mark is what on Object shows that it is the federation's (see [Mark]); the gate
	// checks it on the object, it does not take it on trust.
	Mark Mark
	// Adopted is set when the decision takes over an object no federation manages because
	// it was told to: an adopt policy or annotation, a copy the federated object released
	// earlier, KubeFed's copy of a migrated object.
	Adopted bool
	// OwnerDeleted is set when the user deleted what the object is a copy or a part of (the
	// federated object, the workload, the native object a policy federated), or the cluster
	// it lives in leaves the federation with deletion asked for.
	OwnerDeleted bool
	// RemovalAsked is set when the owner asks that its copies leave the clusters it leaves
	// (federation.ClaimRemovalAnnotation: Delete on a claim).
	RemovalAsked bool
	// Unplaced is set when the owner's own placement places it in no cluster at all: the user
	// took the workload off the fleet, no replacement is meant to come.
	Unplaced bool
	// Replacement names a cluster where a replacement of the workload runs available (the
	// status collector's word); "" when none.
	Replacement string
	// NamespaceEmpty is set, for a Namespace, when the driver showed it holds nothing it
	// must keep: sync lists everything in a namespace it created for its objects and finds
	// nothing but what the federation is removing; for a FederatedNamespace the user
	// deleted (or moved), it finds nothing the federation placed left in it, and that it is
	// not the host's own (its content is the user's to delete with it, as KubeFed does).
	NamespaceEmpty bool
	// Placed is set, for Place, when the object's own placement places it in Cluster.
	Placed bool
	// Namespace is the object's Namespace as read, when the driver read it (nil when not):
	// for invariants of an embedder's that look at it ([Options].Invariants).
	Namespace *unstructured.Unstructured
}

// Mark is the sign on an object that it is the federation's: a label (Label: Value), an
// annotation (Annotation: Value), or an owner reference to OwnerUID. The zero Mark is no
// sign: nothing carries it.
type Mark struct {
	Label, Annotation, Value string
	OwnerUID                 types.UID
}

// ManagedBy is the mark of a member object sync manages for the federation identity
// (federation.ManagedByValue when empty).
func ManagedBy(identity string) Mark {
	if identity == "" {
		identity = federation.ManagedByValue
	}
	return Mark{Label: federation.ManagedByLabel, Value: identity}
}

// On reports whether obj carries m.
func (m Mark) On(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	switch {
	case m.Label != "":
		v, ok := obj.GetLabels()[m.Label]
		return ok && v == m.Value
	case m.Annotation != "":
		v, ok := obj.GetAnnotations()[m.Annotation]
		return ok && v == m.Value
	case m.OwnerUID != "":
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID == m.OwnerUID {
				return true
			}
		}
	}
	return false
}

// String says what m is, for a refusal's message.
func (m Mark) String() string {
	switch {
	case m.Label != "":
		return fmt.Sprintf("label %s=%s", m.Label, m.Value)
	case m.Annotation != "":
		return fmt.Sprintf("annotation %s=%s", m.Annotation, m.Value)
	case m.OwnerUID != "":
		return fmt.Sprintf("an owner reference to uid %s", m.OwnerUID)
	}
	return "no mark"
}

// Refusal is the gate's answer to a write it does not send: which invariant, which object,
// which cluster, and why. It wraps [ErrRefused].
type Refusal struct {
	// Invariant is the name of the invariant the write breaks.
	Invariant string
	// Verb, Resource, Namespace and Name say what was refused.
	Verb            Verb
	Resource        schema.GroupVersionResource
	Namespace, Name string
	// Cluster is the member cluster, "" for the host.
	Cluster string
	// Reason says why, in a sentence.
	Reason string
}

// Error names the write, the cluster and the invariant.
func (r *Refusal) Error() string {
	where := "the host"
	if r.Cluster != "" {
		where = "cluster " + r.Cluster
	}
	return fmt.Sprintf("%s %s in %s: %s (invariant %s): %v", strings.ToLower(string(r.Verb)), r.Object(), where, r.Reason, r.Invariant, ErrRefused)
}

// Unwrap returns ErrRefused.
func (r *Refusal) Unwrap() error { return ErrRefused }

// Object names the refused object: resource and namespace/name.
func (r *Refusal) Object() string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	return r.Resource.GroupResource().String() + " " + name
}

// Refused reports whether err is refusals only (one, or errors.Join of several, wrapped or
// not): a driver then comes back after RecheckAfter rather than retry with an error's
// backoff. Any other error among them makes it false.
func Refused(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *Refusal:
		return true
	case interface{ Unwrap() []error }:
		some := false
		for _, x := range e.Unwrap() {
			if x != nil && !Refused(x) {
				return false
			}
			some = some || x != nil
		}
		return some
	}
	return Refused(errors.Unwrap(err))
}

// Invariant is one rule every destructive write must keep. Check returns why w breaks it,
// "" when it does not. It must be pure and quick: the gate runs it before every write, and
// preview runs it over whole fleets.
type Invariant struct {
	// Name names the rule in refusals, events and conditions (a short word: "system-namespace").
	Name string
	// Check returns why w breaks the rule, "" when w keeps it.
	Check func(w Write) string
}

// Options configure a Gate. The zero value is the default.
type Options struct {
	// ControlPlaneNamespace is the control plane's own namespace, where nothing but the
	// control plane's Leases is ever deleted. Default: federation.DefaultNamespace.
	ControlPlaneNamespace string
	// Invariants are the embedder's own rules, checked after the built-in ones ([Builtin]):
	// a write is sent only when every one keeps it.
	Invariants []Invariant
}

func (o Options) complete() Options {
	if o.ControlPlaneNamespace == "" {
		o.ControlPlaneNamespace = federation.DefaultNamespace
	}
	return o
}

// Gate checks destructive writes against the invariants, and is the one function that sends
// them. A nil *Gate is the default Gate (New(Options{})). It is safe for concurrent use.
type Gate struct {
	invariants []Invariant
	// readNamespace is set when an embedder's invariants may look at Evidence.Namespace:
	// Delete and Update then read it when the driver did not.
	readNamespace bool
}

// New returns a Gate with the built-in invariants and opts.Invariants.
func New(opts Options) *Gate {
	opts = opts.complete()
	return &Gate{invariants: append(Builtin(opts.ControlPlaneNamespace), opts.Invariants...), readNamespace: len(opts.Invariants) > 0}
}

func (g *Gate) orDefault() *Gate {
	if g == nil {
		return New(Options{})
	}
	return g
}

// Invariants returns the names of the rules the gate checks, in order.
func (g *Gate) Invariants() []string {
	g = g.orDefault()
	out := make([]string, len(g.invariants))
	for i, inv := range g.invariants {
		out[i] = inv.Name
	}
	return out
}

// Check returns the [Refusal] of w, nil when every invariant keeps it. It is pure: preview
// calls it to show what the gate would refuse, the drivers through Delete, Update and Create.
func (g *Gate) Check(w Write) *Refusal {
	g = g.orDefault()
	if w.Object == nil {
		return refusal(w, "evidence", "the object as read is missing")
	}
	for _, inv := range g.invariants {
		if why := inv.Check(w); why != "" {
			return refusal(w, inv.Name, why)
		}
	}
	return nil
}

func refusal(w Write, invariant, why string) *Refusal {
	r := &Refusal{Invariant: invariant, Verb: w.Verb, Resource: w.Resource, Cluster: w.Cluster, Reason: why}
	if w.Object != nil {
		r.Namespace, r.Name = w.Object.GetNamespace(), w.Object.GetName()
	}
	return r
}

// Delete deletes w.Object through c once Check allows it, and returns the *Refusal (which
// wraps ErrRefused) when not. It is the one function fedkit deletes with, in members and on
// the host. w.Verb must be Delete; opts are sent as given.
func (g *Gate) Delete(ctx context.Context, c federation.ClusterClient, w Write, opts metav1.DeleteOptions) error {
	if w.Verb != Delete {
		return fmt.Errorf("gate: Delete of a %s write", w.Verb)
	}
	w, err := g.withNamespace(ctx, c, w)
	if err != nil {
		return err
	}
	if r := g.Check(w); r != nil {
		return r
	}
	return c.Delete(ctx, w.Resource, w.Object.GetNamespace(), w.Object.GetName(), opts)
}

// Update sends next, the update of w.Object an Orphan, an Adopt or a Place decided, through
// c once Check allows it; the *Refusal when not.
func (g *Gate) Update(ctx context.Context, c federation.ClusterClient, w Write, next *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if w.Verb == Delete {
		return nil, fmt.Errorf("gate: Update of a %s write", w.Verb)
	}
	w, err := g.withNamespace(ctx, c, w)
	if err != nil {
		return nil, err
	}
	if r := g.Check(w); r != nil {
		return nil, r
	}
	return c.Update(ctx, w.Resource, next)
}

// withNamespace is w with Evidence.Namespace read through c, when the gate has invariants of
// an embedder's, the driver did not read it and w.Object is namespaced. A namespace that is
// not there stays nil; a read that fails is the write's error (nothing is sent, and the
// driver retries).
func (g *Gate) withNamespace(ctx context.Context, c federation.ClusterClient, w Write) (Write, error) {
	g = g.orDefault()
	if !g.readNamespace || w.Evidence.Namespace != nil || w.Object == nil || w.Object.GetNamespace() == "" {
		return w, nil
	}
	ns, err := c.Get(ctx, namespaceResource, "", w.Object.GetNamespace())
	switch {
	case apierrors.IsNotFound(err):
		return w, nil
	case err != nil:
		return w, fmt.Errorf("gate: read namespace %s for its invariants: %w", w.Object.GetNamespace(), err)
	}
	w.Evidence.Namespace = ns
	return w, nil
}

var namespaceResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Create creates w.Object, a Place, through c once Check allows it; the *Refusal when not.
func (g *Gate) Create(ctx context.Context, c federation.ClusterClient, w Write) (*unstructured.Unstructured, error) {
	if w.Verb != Place {
		return nil, fmt.Errorf("gate: Create of a %s write", w.Verb)
	}
	if r := g.Check(w); r != nil {
		return nil, r
	}
	return c.Create(ctx, w.Resource, w.Object)
}
