package preview

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// Report is what the pipeline would do with the input: plain data, in the input's order of
// objects and the name order of clusters, the same for the same input. Its JSON form is the
// machine-readable preview.
type Report struct {
	// Live reports whether the input had live member objects (Input.Live): only then do the
	// clusters carry a Change.
	Live bool `json:"live"`
	// Natives has one entry per native object of Input.Other whose kind is a type's target:
	// the policy that selects it, if any, and the policies that lost. The Federated<Kind>
	// generated for it follows the input's own in Objects.
	Natives []Native `json:"natives,omitempty"`
	// Objects has one entry per federated object.
	Objects []Object `json:"objects"`
	// Problems are about inputs that belong to no object: a Cluster that fails validation, a
	// ReplicaSchedulingPreference or DNS record without its federated object.
	Problems []Problem `json:"problems,omitempty"`
}

// Native is what the propagation policies make of one native object.
type Native struct {
	// APIVersion, Kind, Namespace and Name identify it (apps/v1 Deployment ...).
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Policy is the policy that wins (propagation.Policy's Ref); "" when none selects it.
	Policy string `json:"policy,omitempty"`
	// Selected says how the winner's selector picked it (by name, by labels, by kind).
	Selected string `json:"selected,omitempty"`
	// Lost are the other policies that matched, best first, with why each lost.
	Lost []LostPolicy `json:"lost,omitempty"`
	// Generated names the Federated<Kind> in Objects; "" when none is generated.
	Generated string `json:"generated,omitempty"`
	// Problem says why no object is generated although a policy selects it (a
	// Federated<Kind> of its name in the input, written by hand, is left alone).
	Problem string `json:"problem,omitempty"`
}

// LostPolicy is a policy that matched a native object but lost to another.
type LostPolicy struct {
	Policy string `json:"policy"`
	Why    string `json:"why"`
}

// Object is the preview of one federated object.
type Object struct {
	// Kind, Namespace and Name identify the federated object (FederatedDeployment ...).
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Revision is the revision sync renders: the object's federation.RevisionAnnotation, the
	// next one when the spec changed since sync observed it (status.observedGeneration), or 1
	// for an object sync has not recorded yet.
	Revision int64 `json:"revision"`
	// Scheduled is the Scheduled condition the scheduler would write: whether every replica
	// found a cluster, and the plan's summary with why clusters were left out.
	Scheduled Condition `json:"scheduled"`
	// Clusters has one entry per Cluster, in name order.
	Clusters []Cluster `json:"clusters"`
	// Failover is the plan with Input.Down's clusters down; nil without Down.
	Failover *Failover `json:"failover,omitempty"`
	// Autoscale is what the autoscaler would decide from Input.Samples (nil without samples
	// for the object's preference): the fleet total scheduled above comes from it.
	Autoscale *Autoscale `json:"autoscale,omitempty"`
	// Unknown are names in spec.placement.clusters that no Cluster has (a typo, or a cluster
	// not registered yet); nothing is placed there. They come from the scheduler's warning
	// (scheduler.WarningUnknownCluster), so they are listed when the object can be scheduled.
	Unknown []string `json:"unknown,omitempty"`
	// DNS are the names (and, with live objects, the records) of the object's DNS records.
	DNS []DNS `json:"dns,omitempty"`
	// Rollout is, for an object with spec.rollout, which clusters change in which stage and
	// what each stage waits for; nil without spec.rollout, or when the object is invalid
	// (sync refuses it whole).
	Rollout *Rollout `json:"rollout,omitempty"`
	// Dependencies are, for an object with spec.propagateDependencies, the ConfigMaps,
	// Secrets, ServiceAccount and PVCs its template refers to, and where the dependencies
	// loop would place each (package dependencies).
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// Problems are the object's validation errors (with their field paths, rendering against
	// every cluster included) and warnings.
	Problems []Problem `json:"problems,omitempty"`
}

// Autoscale is the autoscaler's decision for an object's preference, as recommend.Explain
// gives it.
type Autoscale struct {
	// Current is the fleet total before, Desired the one it would write.
	Current int32 `json:"current"`
	Desired int32 `json:"desired"`
	// Message is the decision in one line ("2 -> 3: cpu 90% of 60% over 2 ready pods in 1 of
	// 1 cluster"), as its Event says it; Explanation the whole of it, metric by metric and
	// cluster by cluster.
	Message     string `json:"message"`
	Explanation string `json:"explanation"`
}

// Dependency is one object a workload refers to and where it follows the workload.
type Dependency struct {
	// Kind and Name name it, in the workload's namespace.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Optional: every reference says optional: true; missing, it is not an error.
	Optional bool `json:"optional,omitempty"`
	// Clusters are the union of the clusters of every workload of the input that refers to
	// it (the loop's dependencies.Union): where it goes.
	Clusters []string `json:"clusters"`
	// Federated says how: "generated" (the loop federates the input's host object),
	// "yours" (a federated object of the input; the clusters are added to its own, but for
	// those its placement explicitly refuses), "missing" (neither is in the input; nothing
	// follows), or "refused" (the host object holds credentials, federation.Credentials:
	// nothing follows).
	Federated string `json:"federated"`
}

// Condition is a condition a loop would write, without what only a write has (its
// transition time).
type Condition struct {
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message"`
}

// Cluster is what happens to the object in one cluster.
type Cluster struct {
	// Name is the cluster's name.
	Name string `json:"name"`
	// Selected reports whether the object is placed in the cluster (sync writes it there).
	Selected bool `json:"selected"`
	// Rule and Why say why the cluster was left out: the placement rule (NotListed,
	// ClusterSelector, NotReady, Taint, Preference, ...) and the value that failed it.
	Rule string `json:"rule,omitempty"`
	Why  string `json:"why,omitempty"`
	// Replicas is the scheduled count, for a type that has replicas.
	Replicas *int64 `json:"replicas,omitempty"`
	// MemberReplicas is the count the member object gets, read from Manifest: Replicas
	// after the cluster's overrides (an override of the replica path replaces it), for a
	// type that has replicas and a cluster sync writes to.
	MemberReplicas *int64 `json:"memberReplicas,omitempty"`
	// Explanation says how the count came about (scheduler.Plan.Explain): minimum, kept,
	// weight, and the bound that capped it.
	Explanation string `json:"explanation,omitempty"`
	// Manifest is the member object sync would write (rendered with the live member object's
	// retained fields when there is one); nil where nothing is written or rendering failed.
	Manifest *unstructured.Unstructured `json:"manifest,omitempty"`
	// Change is what sync would do in the cluster, with live objects; nil without, or when
	// the cluster was not read.
	Change *Change `json:"change,omitempty"`
}

// ReplicasText is the cluster's replicas for a table: what the member gets ("5"), with the
// scheduled count when an override changed it ("5 (scheduled 3)"), the scheduled count when
// nothing is written there, "-" for a type without replicas.
func (c Cluster) ReplicasText() string {
	switch {
	case c.MemberReplicas != nil && c.Replicas != nil && *c.MemberReplicas != *c.Replicas:
		return fmt.Sprintf("%d (scheduled %d)", *c.MemberReplicas, *c.Replicas)
	case c.MemberReplicas != nil:
		return strconv.FormatInt(*c.MemberReplicas, 10)
	case c.Replicas != nil:
		return strconv.FormatInt(*c.Replicas, 10)
	}
	return "-"
}

// Failover is where an object's replicas go when Input.Down's clusters are down.
type Failover struct {
	// Down are the clusters taken as down.
	Down []string `json:"down"`
	// Disrupted says why the clusters down make a fleet disruption, the control plane's own
	// outage (placement.FleetDisruption): their taints stay NoSchedule and nothing is
	// evicted for it. "" when they do not.
	Disrupted string `json:"disrupted,omitempty"`
	// Moves are the clusters whose replicas change, against the object's status.schedule.
	Moves []Move `json:"moves,omitempty"`
	// Evictions are the schedule's evictions (status.schedule.evictions). Read each by its
	// state (federation.Eviction.State): Waiting keeps the copy until the replacements are
	// ready, Held until its cluster is back, and Released lets it go unmanaged.
	Evictions []federation.Eviction `json:"evictions,omitempty"`
}

// Move is one cluster's replicas before and after the failover (0: none).
type Move struct {
	Cluster string `json:"cluster"`
	Before  int64  `json:"before"`
	After   int64  `json:"after"`
}

// Change is sync's decision for one cluster (plan.Decide's Change, made readable).
type Change struct {
	// Action is Create, Update, Delete, Orphan or None.
	Action string `json:"action"`
	// Reason and Message say why the cluster cannot be brought in line (AlreadyExists,
	// ManagedByOther, RenderFailed, ClusterNotReady, WaitingForRemoval, or NotScheduled in
	// every cluster when the scheduler refuses the object: sync then waits for a schedule
	// and leaves the member objects as they are); "" when it can.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Diff lists, for an update, the owned fields whose live value differs from the render
	// (sync.OwnedDiff, less fedkit's desired-state hash annotation, which changes with every
	// change). It is empty for an update that rewrites the object because its desired state
	// changed in a way the subset comparison cannot see (a field removed from the template).
	Diff []plan.FieldChange `json:"diff,omitempty"`
	// Refused is what the gate would refuse of this change (package gate, from the same
	// gate.Check the loops' writes pass): the invariant and why. The loop would not send
	// the write, and would say so (reason RefusedByGate). nil when it passes.
	Refused *Refused `json:"refused,omitempty"`
}

// Refused is a write the gate would refuse: the invariant it breaks, and why.
type Refused struct {
	Invariant string `json:"invariant"`
	Reason    string `json:"reason"`
}

// DNS is what one DNS record publishes for the object.
type DNS struct {
	// Kind and Name identify the record (ServiceDNSRecord or IngressDNSRecord, same
	// namespace as the object).
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Names are the DNS names clients can ask for once the clusters have load balancers:
	// global, per region, per zone, and the dnsPrefix alias (an Ingress's hosts).
	Names []string `json:"names"`
	// Endpoints are the records the DNS controller would write now, from the live member
	// objects' load balancers; nil without live objects.
	Endpoints []dnsrecord.Endpoint `json:"endpoints,omitempty"`
}

// Severity says whether a Problem stops something (Error) or only deserves a look (Warning).
type Severity string

// Severities.
const (
	// Error: the loops refuse the input, or cannot render it for a cluster.
	Error Severity = "Error"
	// Warning: the input is accepted, but probably does not do what its author meant.
	Warning Severity = "Warning"
)

// Problem is one validation error or warning, with where it is.
type Problem struct {
	Severity Severity `json:"severity"`
	// Object names the object at fault: "FederatedDeployment production/web",
	// "ReplicaSchedulingPreference production/web", "Cluster eu".
	Object string `json:"object"`
	// Field is the field path (spec.overrides[0].clusterOverrides[1].path), "" when the
	// problem is not one field's.
	Field string `json:"field,omitempty"`
	// Cluster is the cluster concerned, "" when it is not one cluster's.
	Cluster string `json:"cluster,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// String returns "Error: Object: field: cluster "x": message", leaving out empty parts.
func (p Problem) String() string {
	parts := []string{string(p.Severity), p.Object}
	if p.Field != "" {
		parts = append(parts, p.Field)
	}
	if p.Cluster != "" {
		parts = append(parts, fmt.Sprintf("cluster %q", p.Cluster))
	}
	return strings.Join(append(parts, p.Message), ": ")
}

// Errors returns the report's problems of severity Error, the objects' and the others'.
func (r Report) Errors() []Problem {
	return r.severity(Error)
}

// severity returns the report's problems of severity sev, the objects' and then the others'.
func (r Report) severity(sev Severity) []Problem {
	var out []Problem
	for _, o := range r.Objects {
		for _, p := range o.Problems {
			if p.Severity == sev {
				out = append(out, p)
			}
		}
	}
	for _, p := range r.Problems {
		if p.Severity == sev {
			out = append(out, p)
		}
	}
	return out
}

// ErrProblems is wrapped by the error [Report.Check] returns.
var ErrProblems = errors.New("preview: problems found")

// Warnings returns the report's problems of severity Warning, the objects' and the others'.
func (r Report) Warnings() []Problem {
	return r.severity(Warning)
}

// Check is a CI check's verdict: nil when the report has no error (and, when strict, no
// warning either), else an error wrapping [ErrProblems] that lists them, one per line.
func (r Report) Check(strict bool) error {
	failed := r.Errors()
	var counts []string
	if n := len(failed); n > 0 {
		counts = append(counts, plural(n, "error"))
	}
	if strict {
		w := r.Warnings()
		if n := len(w); n > 0 {
			counts = append(counts, plural(n, "warning")+" (strict)")
		}
		failed = append(failed, w...)
	}
	if len(failed) == 0 {
		return nil
	}
	lines := make([]string, 0, len(failed))
	for _, p := range failed {
		lines = append(lines, p.String())
	}
	return fmt.Errorf("%w: %s\n%s", ErrProblems, strings.Join(counts, ", "), strings.Join(lines, "\n"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
