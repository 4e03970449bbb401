package preview

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/internal/manifest"
	"github.com/fedkit/fedkit/kinds"
	"github.com/fedkit/fedkit/placement"
)

// Input is everything a preview looks at: the objects as they would be stored on the host,
// and optionally the member objects as they are in each cluster. Run only reads it.
type Input struct {
	// Objects are the federated objects (Federated<Kind>; their kind selects the TypeConfig
	// from Types). A status they carry counts as it would on the host: status.schedule is the
	// schedule written before (see Fresh), status.clusters the replicas observed running.
	Objects []federation.FederatedObject
	// Preferences are ReplicaSchedulingPreferences; each applies to the object of its
	// namespace and name whose kind is its spec.targetKind.
	Preferences []federation.ReplicaSchedulingPreference
	// Clusters are the federation's Cluster objects.
	Clusters []federation.Cluster
	// ServiceDNSRecords, IngressDNSRecords and Domains are the DNS objects: a record applies
	// to the FederatedService (FederatedIngress) of its namespace and name, and names its
	// Domain in spec.domainRef (matched by name, in any namespace).
	ServiceDNSRecords []dnsrecord.ServiceDNSRecord
	IngressDNSRecords []dnsrecord.IngressDNSRecord
	Domains           []dnsrecord.Domain
	// Other holds the plain Kubernetes objects Decode found (Namespaces, say, that the same
	// manifests need on a cluster). Those of a type's target kind that a policy selects are
	// previewed as the Federated<Kind> package propagation would generate; the rest are not.
	Other []*unstructured.Unstructured
	// Policies and ClusterPolicies are the PropagationPolicies and
	// ClusterPropagationPolicies that select objects of Other.
	Policies        []federation.PropagationPolicy
	ClusterPolicies []federation.ClusterPropagationPolicy

	// Live holds the member objects of each cluster, by cluster name; nil for a preview
	// without live state. With it, Run reports each cluster's change (create, update with the
	// owned fields that differ, delete, nothing), decided by the function sync decides with
	// (plan.Decide), and fills the DNS records' load balancers from the member Services and
	// Ingresses that sync manages, by the DNS loop's rules (dnsrecord.ServiceStatusDNS). A
	// cluster missing from a non-nil Live was not read: no change is reported for it, and
	// its DNS load balancer is the one the record's status has. Objects of other kinds or
	// names are ignored.
	Live map[string][]*unstructured.Unstructured
	// Gate is the gate whose invariants each member change with live objects is checked
	// against (gate.Check, the function the loops' writes pass): the embedder's own
	// invariants with the built-in ones, as its control plane has them. A member Namespace
	// in Live is the evidence an invariant of the embedder's may look at. nil:
	// gate.New(gate.Options{}).
	Gate *gate.Gate

	// Types are the federated types the objects may have. nil: federation.BuiltinTypes.
	Types []federation.TypeConfig
	// Now is the time of the decision (the scheduler's rebalance period is measured to it).
	Now time.Time
	// Fresh schedules every object as if nothing had been scheduled for it before: the
	// previous schedule is ignored and running replicas do not stay put (scheduler.Input's
	// Fresh). The default is the scheduler loop's decision.
	Fresh bool
	// AssumeReady treats Clusters without a Ready condition as ready, as for a fleet
	// described in a file rather than watched by the cluster monitor. A Ready condition that
	// is not True still counts.
	AssumeReady bool
	// Down names clusters to preview as down: Run marks each not Ready with the cluster
	// monitor's not-ready taint at NoExecute since Now, as after its EvictionDelay. Each
	// object's Failover then says where its replicas would go. A name no Cluster has is an
	// error wrapping ErrInvalidInput. When the clusters down make a fleet disruption
	// (placement.FleetDisruption with Disruption), the cluster monitor would not taint them
	// NoExecute: Run marks them NoSchedule, and nothing moves.
	Down []string
	// Disruption is the scheduler's and the cluster monitor's Disruption option: when the
	// fleet counts as disrupted. The zero value is their default.
	Disruption placement.DisruptionOptions
	// Identity is sync's Options.Identity (the managed-by label value); "" is fedkit's.
	Identity string
	// Adopt is sync's ConflictAdopt policy: member objects of the same name that no
	// federation manages are taken over (the federated object's federation.AdoptAnnotation
	// asks for the same, object by object).
	Adopt bool
	// Samples are the members' autoscaling samples (package autoscale/recommend: pods, their usage and
	// metrics, as its MetricsSource gathers them), by the namespace and name of a
	// ReplicaSchedulingPreference with spec.autoscale in Central mode. With them, Run decides
	// the fleet total as the autoscaler would (recommend.Explain), schedules that total, and
	// reports it in Object.Autoscale. The autoscaler's memory of earlier recommendations is
	// not in the input: a scale-down shows as its first pass after a start would decide it,
	// before stabilization holds it back.
	Samples map[federation.Key][]recommend.Sample
}

// Decode reads multi-document YAML (or JSON) into an Input: Federated<Kind> objects,
// Clusters, ReplicaSchedulingPreferences, PropagationPolicies, ClusterPropagationPolicies,
// ServiceDNSRecords, IngressDNSRecords and Domains,
// and "kind: List" documents holding them (as `kubectl get -o yaml` writes). Empty documents
// are skipped. Decoding is strict, as kubectl's strict field validation: a field the kind
// does not have (spec.palcement) and a key twice in one mapping (often a missing "---"
// between two documents) are errors naming the document (its index, kind and name), the
// line and the field; only the template, which any target kind fits, is free-form. Plain
// Kubernetes objects (a Namespace, say, which a fixture for a fake fleet needs) are kept in
// Input.Other and not previewed; any other kind of a federation group is an error naming the
// document, so a typo is not ignored. Decode sets no option: the caller sets Now, Live and
// the rest.
func Decode(data []byte) (Input, error) {
	var in Input
	docs, err := manifest.Split(data)
	if err != nil {
		return Input{}, fmt.Errorf("preview: %w", err)
	}
	for _, d := range docs {
		if err := in.add(d); err != nil {
			return Input{}, fmt.Errorf("preview: %w", err)
		}
	}
	return in, nil
}

// add decodes one document into the Input.
func (in *Input) add(d manifest.Document) error {
	u := d.Object
	gvk := u.GroupVersionKind()
	if u.IsList() {
		items, err := d.Items()
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := in.add(item); err != nil {
				return err
			}
		}
		return nil
	}
	var into runtime.Object
	var keep func()
	switch gk := gvk.GroupKind(); {
	case gvk.Group == federation.TypesGroup:
		var o federation.FederatedObject
		into, keep = &o, func() { in.Objects = append(in.Objects, o) }
	case gk == federation.ClusterGVK.GroupKind():
		var o federation.Cluster
		into, keep = &o, func() { in.Clusters = append(in.Clusters, o) }
	case gk == federation.ReplicaSchedulingPreferenceGVK.GroupKind():
		var o federation.ReplicaSchedulingPreference
		into, keep = &o, func() { in.Preferences = append(in.Preferences, o) }
	case gk == federation.PropagationPolicyGVK.GroupKind():
		var o federation.PropagationPolicy
		into, keep = &o, func() { in.Policies = append(in.Policies, o) }
	case gk == federation.CoreGroupVersion.WithKind("FederatedTypeConfig").GroupKind():
		var o federation.FederatedTypeConfig
		into, keep = &o, func() {
			t, _ := o.TypeConfig() // checked below
			in.addType(t)
		}
	case gk == federation.ClusterPropagationPolicyGVK.GroupKind():
		var o federation.ClusterPropagationPolicy
		into, keep = &o, func() { in.ClusterPolicies = append(in.ClusterPolicies, o) }
	case gk == federation.DNSGroupVersion.WithKind("ServiceDNSRecord").GroupKind():
		var o dnsrecord.ServiceDNSRecord
		into, keep = &o, func() { in.ServiceDNSRecords = append(in.ServiceDNSRecords, o) }
	case gk == federation.DNSGroupVersion.WithKind("IngressDNSRecord").GroupKind():
		var o dnsrecord.IngressDNSRecord
		into, keep = &o, func() { in.IngressDNSRecords = append(in.IngressDNSRecords, o) }
	case gk == federation.DNSGroupVersion.WithKind("Domain").GroupKind():
		var o dnsrecord.Domain
		into, keep = &o, func() { in.Domains = append(in.Domains, o) }
	case gvk.Kind != "" && gvk.Version != "" && !strings.HasSuffix(gvk.Group, "federation.k8s.io"):
		in.Other = append(in.Other, u)
		return nil
	default:
		return fmt.Errorf("%s: %s %q (apiVersion %q) is not a federation object a preview reads", d, orNone(gvk.Kind), u.GetName(), u.GetAPIVersion())
	}
	if err := d.Decode(into); err != nil {
		return err
	}
	if err := federation.FromUnstructured(u, into); err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	if ftc, ok := into.(*federation.FederatedTypeConfig); ok {
		t, err := ftc.TypeConfig()
		if err == nil {
			_, err = kinds.Compile(t)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	keep()
	return nil
}

// addType adds a type a FederatedTypeConfig of the input configures to Types (the built-in
// ones when none were given), in place of a type of the same federated kind.
func (in *Input) addType(t federation.TypeConfig) {
	if in.Types == nil {
		in.Types = federation.BuiltinTypes()
	}
	in.Types = slices.DeleteFunc(in.Types, func(c federation.TypeConfig) bool { return c.Federated.Kind == t.Federated.Kind })
	in.Types = append(in.Types, t)
}

func orNone(kind string) string {
	if kind == "" {
		return "an object without a kind"
	}
	return kind
}
