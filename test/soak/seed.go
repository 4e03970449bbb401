package soak

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// seedHost creates the host's namespaces and the DNS Domain the records name.
func (w *World) seedHost(ctx context.Context) error {
	names := append(plainNamespaces(w.Config.Objects), governedNamespace, dnsrecord.DefaultDomainNamespace)
	for _, ns := range names {
		if _, err := w.userCreate(ctx, federation.NamespaceType.TargetGVR(), namespaceObject(ns)); err != nil {
			return err
		}
	}
	domain := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": dnsrecord.DomainGVR.GroupVersion().String(), "kind": "Domain",
		"metadata": map[string]any{"name": "soak", "namespace": dnsrecord.DefaultDomainNamespace},
		"domain":   "soak.example.com",
	}}
	_, err := w.userCreate(ctx, dnsrecord.DomainGVR, domain)
	return err
}

// seedRecord creates a ServiceDNSRecord for a FederatedService, so the DNS loop has work.
func (w *World) seedRecord(ctx context.Context, key federation.Key) error {
	rec := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": dnsrecord.ServiceDNSRecordGVR.GroupVersion().String(), "kind": "ServiceDNSRecord",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec":     map[string]any{"domainRef": "soak", "recordTTL": int64(60), "allowServiceWithoutEndpoints": true},
	}}
	_, err := w.userCreate(ctx, dnsrecord.ServiceDNSRecordGVR, rec)
	return err
}

// seedForeign puts objects that no federation manages in the members: a ConfigMap in every
// plain namespace of every member, and, in some members, an object of the same name as a
// federated one (which sync must report and leave alone). They must end as they started.
func (w *World) seedForeign(script Script) error {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var collide []Event
	for _, e := range script.Initial {
		if e.Op == OpCreate && e.Kind == federation.ConfigMapType.Federated.Kind && len(collide) < 3 {
			collide = append(collide, e)
		}
	}
	for i, name := range w.Fleet.Names() {
		m, _ := w.Fleet.Member(name)
		var objs []*unstructured.Unstructured
		for _, ns := range plainNamespaces(w.Config.Objects) {
			objs = append(objs, configMap(ns, "foreign-settings", map[string]any{"owner": "someone else"}))
		}
		if i%4 == 1 && len(collide) > 0 {
			e := collide[i%len(collide)]
			objs = append(objs, configMap(e.Key.Namespace, e.Key.Name, map[string]any{"owner": "a team that was here first"}))
		}
		for _, o := range objs {
			if err := w.seedUntouched(m, cm, o); err != nil {
				return fmt.Errorf("soak: seed %s in %s: %w", o.GetName(), name, err)
			}
		}
		if !w.Config.Without.Lookalikes {
			for _, o := range lookalikes(script, w.Config.Objects, i) {
				if err := w.seedUntouched(m, nativeGVR(o.GetKind()), o); err != nil {
					return fmt.Errorf("soak: seed %s in %s: %w", o.GetName(), name, err)
				}
			}
		}
	}
	return nil
}

// lookalikes are the objects no federation manages that the i-th member runs: its own
// kube-system Deployment and ConfigMap (of the names the host's have), another team's
// Deployment in every plain namespace, and, in every fourth member, a Deployment of the name
// of one of the first divided workloads (which blocks it there).
func lookalikes(script Script, objects, i int) []*unstructured.Unstructured {
	sys := federation.Key{Namespace: systemNamespace, Name: "coredns"}
	out := []*unstructured.Unstructured{lookalike("Deployment", sys, "system"), lookalike("ConfigMap", sys, "system")}
	for _, ns := range plainNamespaces(objects) {
		out = append(out, lookalike("Deployment", federation.Key{Namespace: ns, Name: "team-b-api"}, "team-b"))
	}
	var divided []Event
	for _, e := range script.Initial {
		if e.Op == OpCreate && e.Kind == federation.DeploymentType.Federated.Kind && e.Total > 0 && len(divided) < 2 {
			divided = append(divided, e)
		}
	}
	if i%4 == 2 && len(divided) > 0 {
		out = append(out, lookalike("Deployment", divided[i%len(divided)].Key, "team-here-first"))
	}
	if i%4 == 3 {
		// Another federation's copy of an object of the same name as one of this one's.
		for _, e := range script.Initial {
			if e.Op == OpCreate && e.Kind == federation.ConfigMapType.Federated.Kind {
				o := lookalike("ConfigMap", e.Key, "another-federation")
				o.SetLabels(map[string]string{federation.ManagedByLabel: "another-federation", federation.FederatedNameLabel: e.Key.Name,
					federation.FederatedNamespaceLabel: e.Key.Namespace})
				out = append(out, o)
				break
			}
		}
	}
	return out
}

func (w *World) seedUntouched(m *fake.Cluster, gvr schema.GroupVersionResource, o *unstructured.Unstructured) error {
	if err := m.Seed(o); err != nil {
		return err
	}
	stored, err := m.Peek(gvr, o.GetNamespace(), o.GetName())
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.untouched = append(w.untouched, untouchedObject{cluster: m.Name(), gvr: gvr, ns: o.GetNamespace(), name: o.GetName(), uid: string(stored.GetUID()), state: untouchedState(stored)})
	return nil
}

func configMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     data,
	}}
}

// housekeep marks the members whose Cluster object is gone as unjoined (the Cluster
// finalizers let it go: the control plane is done with it), and joins again those the script
// joined meanwhile.
func (w *World) housekeep(ctx context.Context) error {
	w.mu.Lock()
	leaving := sortedKeys(w.leaving)
	w.mu.Unlock()
	for _, name := range leaving {
		if _, err := w.Host.Peek(federation.ClusterGVR, "", name); err == nil {
			continue
		}
		m, ok := w.Fleet.Member(name)
		if !ok {
			continue
		}
		w.mu.Lock()
		delete(w.leaving, name)
		w.removed[name] = m
		index, again := w.joining[name]
		delete(w.joining, name)
		w.mu.Unlock()
		if again {
			if err := w.addMember(ctx, name, index); err != nil {
				return err
			}
		}
	}
	return w.widgetController()
}

func (w *World) removedNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sortedKeys(w.removed)
}

func (w *World) removedCluster(name string) *fake.Cluster {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m, ok := w.removed[name]; ok {
		return m
	}
	return fake.NewCluster(name) // never a member: empty
}

// healAll heals every partitioned member, leaving and unjoined ones included.
func (w *World) healAll() {
	for _, name := range w.Fleet.Names() {
		if m, ok := w.Fleet.Member(name); ok {
			m.Heal()
		}
	}
	w.mu.Lock()
	clear(w.partition)
	w.outage = nil
	w.mu.Unlock()
}
