package preview

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
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

	// Live holds the member objects of each cluster, by cluster name; nil for a preview
	// without live state. With it, Run reports each cluster's change (create, update with the
	// owned fields that differ, delete, nothing), decided by the function sync decides with
	// (sync.Plan), and fills the DNS records' load balancers from the member Services and
	// Ingresses that sync manages, by the DNS loop's rules (dnsrecord.ServiceStatusDNS). A
	// cluster missing from a non-nil Live was not read: no change is reported for it, and
	// its DNS load balancer is the one the record's status has. Objects of other kinds or
	// names are ignored.
	Live map[string][]*unstructured.Unstructured

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
	// Identity is sync's Options.Identity (the managed-by label value); "" is fedkit's.
	Identity string
	// Adopt is sync's ConflictAdopt policy: member objects of the same name that no
	// federation manages are taken over (the federated object's federation.AdoptAnnotation
	// asks for the same, object by object).
	Adopt bool
}

// Decode reads multi-document YAML (or JSON) into an Input: Federated<Kind> objects,
// Clusters, ReplicaSchedulingPreferences, ServiceDNSRecords, IngressDNSRecords and Domains,
// and "kind: List" documents holding them (as `kubectl get -o yaml` writes). Empty documents
// are skipped. Any other kind is an error naming the document, so a typo is not ignored.
// Decode sets no option: the caller sets Now, Live and the rest.
func Decode(data []byte) (Input, error) {
	var in Input
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return in, nil
		}
		if err != nil {
			return Input{}, fmt.Errorf("preview: document %d: %w", doc, err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			return Input{}, fmt.Errorf("preview: document %d: %w", doc, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := in.add(u); err != nil {
			return Input{}, fmt.Errorf("preview: document %d: %w", doc, err)
		}
	}
}

// add decodes one object into the Input.
func (in *Input) add(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "List":
		items, _, _ := unstructured.NestedSlice(u.Object, "items")
		for i, item := range items {
			m, ok := item.(map[string]any)
			if !ok {
				return fmt.Errorf("items[%d] is not an object", i)
			}
			if err := in.add(&unstructured.Unstructured{Object: m}); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	case gvk.Group == federation.TypesGroup:
		var o federation.FederatedObject
		if err := federation.FromUnstructured(u, &o); err != nil {
			return err
		}
		in.Objects = append(in.Objects, o)
		return nil
	}
	var err error
	switch gvk.GroupKind() {
	case federation.ClusterGVK.GroupKind():
		var o federation.Cluster
		if err = federation.FromUnstructured(u, &o); err == nil {
			in.Clusters = append(in.Clusters, o)
		}
	case federation.ReplicaSchedulingPreferenceGVK.GroupKind():
		var o federation.ReplicaSchedulingPreference
		if err = federation.FromUnstructured(u, &o); err == nil {
			in.Preferences = append(in.Preferences, o)
		}
	case federation.DNSGroupVersion.WithKind("ServiceDNSRecord").GroupKind():
		var o dnsrecord.ServiceDNSRecord
		if err = federation.FromUnstructured(u, &o); err == nil {
			in.ServiceDNSRecords = append(in.ServiceDNSRecords, o)
		}
	case federation.DNSGroupVersion.WithKind("IngressDNSRecord").GroupKind():
		var o dnsrecord.IngressDNSRecord
		if err = federation.FromUnstructured(u, &o); err == nil {
			in.IngressDNSRecords = append(in.IngressDNSRecords, o)
		}
	case federation.DNSGroupVersion.WithKind("Domain").GroupKind():
		var o dnsrecord.Domain
		if err = federation.FromUnstructured(u, &o); err == nil {
			in.Domains = append(in.Domains, o)
		}
	default:
		return fmt.Errorf("%s %q (apiVersion %q) is not a federation object a preview reads", orNone(gvk.Kind), u.GetName(), u.GetAPIVersion())
	}
	return err
}

func orNone(kind string) string {
	if kind == "" {
		return "an object without a kind"
	}
	return kind
}
