package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

// printer prints the world's state. It reads without going through the clients (Peek), so
// what it shows costs the loops nothing.
type printer struct {
	w io.Writer
	f *world
}

func (p printer) section(title string) { fmt.Fprintf(p.w, "\n== %s\n", title) }

func (p printer) line(format string, args ...any) { fmt.Fprintf(p.w, "  "+format+"\n", args...) }

// cluster reads the Cluster name from the host, or prints why it cannot and returns nil.
func (p printer) cluster(name string) *federation.Cluster {
	u, err := p.f.host.Peek(federation.ClusterGVR, "", name)
	if err != nil {
		p.line("%s: %v", name, err)
		return nil
	}
	c, err := federation.ClusterFromUnstructured(u)
	if err != nil {
		p.line("%s: %v", name, err)
		return nil
	}
	return c
}

// clusters prints each Cluster as the monitor left it.
func (p printer) clusters() {
	for _, name := range p.f.fleet.Names() {
		c := p.cluster(name)
		if c == nil {
			continue
		}
		ready := "Ready=?"
		if cond := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady); cond != nil {
			ready = "Ready=" + string(cond.Status)
		}
		var taints []string
		for _, t := range c.Spec.Taints {
			taints = append(taints, t.Key+":"+string(t.Effect))
		}
		p.line("%-28s %-11s %-14s region=%-13s cpu=%s taints=%v", name, ready, c.Status.KubernetesVersion,
			c.Region(), c.Status.Capacity.Cpu(), taints)
	}
}

// failover prints a Cluster's Failover condition: its failover stage and what it means.
func (p printer) failover(name string) {
	c := p.cluster(name)
	if c == nil {
		return
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionFailover); cond != nil {
		p.line("%s Failover=%s (%s): %s", name, cond.Status, cond.Reason, cond.Message)
	}
}

// schedule prints status.schedule and the Scheduled condition.
func (p printer) schedule() error {
	fed, err := p.f.federated()
	if err != nil {
		return err
	}
	var parts []string
	if fed.Status.Schedule != nil {
		for _, c := range fed.Status.Schedule.Clusters {
			parts = append(parts, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
		}
	}
	p.line("schedule: %s", strings.Join(parts, " "))
	if c := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionScheduled); c != nil {
		p.line("Scheduled=%s: %s", c.Status, c.Message)
	}
	return nil
}

// explain prints how the scheduler divides the replicas and why (Scheduler.ExplainFresh:
// its decision as if nothing had been scheduled before, written nowhere; Explain would
// answer "kept" for replicas already placed).
func (p printer) explain() error {
	x, err := p.f.scheduler.ExplainFresh(p.f.ctx, key)
	if err != nil {
		return err
	}
	for _, c := range x.Schedule.Clusters {
		p.line("why: %s", x.Plan.Explain(c.Name))
	}
	return nil
}

// members prints each member's Deployment: replicas, image, revision, readiness.
func (p printer) members() {
	for _, name := range p.f.fleet.Names() {
		m, _ := p.f.fleet.Member(name)
		u, err := m.Peek(deployment.TargetGVR(), key.Namespace, key.Name)
		if err != nil {
			p.line("%-28s no Deployment", name)
			continue
		}
		want, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		p.line("%-28s %d/%d ready  image=%-40s revision=%s", name, ready, want, image(u), u.GetAnnotations()[federation.RevisionAnnotation])
	}
}

func (p printer) replicas(cluster string) int64 {
	m, _ := p.f.fleet.Member(cluster)
	u, err := m.Peek(deployment.TargetGVR(), key.Namespace, key.Name)
	if err != nil {
		return 0
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n
}

// federatedStatus prints what the loops wrote into the FederatedDeployment's status.
func (p printer) federatedStatus() error {
	fed, err := p.f.federated()
	if err != nil {
		return err
	}
	for _, c := range fed.Status.Clusters {
		state := "in sync"
		if c.Propagation != "" {
			state = c.Propagation
		}
		obs := ""
		if c.ReadyReplicas != nil && c.Replicas != nil {
			obs = fmt.Sprintf("%d/%d ready", *c.ReadyReplicas, *c.Replicas)
		}
		if c.Stale {
			obs += " (stale: not counted)"
		}
		p.line("status.clusters %-28s revision %d, %-16s %s", c.Name, c.Revision, state, obs)
	}
	if a := fed.Status.Aggregated; a != nil {
		p.line("status.aggregated: %d/%d ready in %d clusters, %d stale", a.ReadyReplicas, a.Replicas, a.Clusters, a.StaleClusters)
	}
	for _, t := range []string{federation.ConditionPropagated, federation.ConditionReady} {
		if c := meta.FindStatusCondition(fed.Status.Conditions, t); c != nil {
			p.line("%s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return nil
}

// rollout prints status.rollout and the RolledBack condition.
func (p printer) rollout() error {
	fed, err := p.f.federated()
	if err != nil {
		return err
	}
	if r := fed.Status.Rollout; r != nil {
		var runs []string
		for _, c := range r.Clusters {
			runs = append(runs, fmt.Sprintf("revision %d in %s", c.Revision, strings.Join(c.Clusters, ",")))
		}
		if r.Phase == federation.RolloutComplete {
			p.line("status.rollout: %s: %s", r.Phase, strings.Join(runs, "; "))
		} else {
			p.line("status.rollout: %s, stage %d/%d %q: %s", r.Phase, r.Stage, r.Stages, r.StageName, strings.Join(runs, "; "))
		}
		if r.Message != "" {
			p.line("  %s", r.Message)
		}
	}
	if c := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionRolledBack); c != nil {
		p.line("RolledBack=%s (%s): %s", c.Status, c.Reason, c.Message)
	}
	return nil
}

// dns prints the DNSEndpoint the DNS loop wrote for the Service.
func (p printer) dns() error {
	u, err := p.f.host.Peek(dnsrecord.DNSEndpointGVR, key.Namespace, "service-"+key.Name)
	if err != nil {
		return err
	}
	var de dnsrecord.DNSEndpoint
	if err := federation.FromUnstructured(u, &de); err != nil {
		return err
	}
	for _, e := range de.Spec.Endpoints {
		targets := append([]string(nil), e.Targets...)
		sort.Strings(targets)
		p.line("%-72s %-5s %s", e.DNSName, e.RecordType, strings.Join(targets, ","))
	}
	return nil
}

func image(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

// setImage sets the first container's image in a federated template.
func setImage(tmpl map[string]any, img string) {
	cs, _, _ := unstructured.NestedSlice(tmpl, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = img
	_ = unstructured.SetNestedSlice(tmpl, cs, "spec", "template", "spec", "containers")
}

func deleteOptions() metav1.DeleteOptions { return metav1.DeleteOptions{} }

// evictions prints status.schedule.evictions: the clusters keeping replicas they lose until
// their replacements are available.
func (p printer) evictions() error {
	fed, err := p.f.federated()
	if err != nil {
		return err
	}
	if fed.Status.Schedule == nil || len(fed.Status.Schedule.Evictions) == 0 {
		p.line("evictions: none")
		return nil
	}
	for _, e := range fed.Status.Schedule.Evictions {
		p.line("eviction: %s (%s) %s", e.Cluster, e.Reason, e.Message)
	}
	return nil
}

// image is the image the Deployment runs in cluster.
func (p printer) image(cluster string) (string, error) {
	m, _ := p.f.fleet.Member(cluster)
	u, err := m.Peek(deployment.TargetGVR(), key.Namespace, key.Name)
	if err != nil {
		return "", err
	}
	return image(u), nil
}

// unhealthy prints the clusters where the collector saw the workload unhealthy, and since when.
func (p printer) unhealthy() error {
	fed, err := p.f.federated()
	if err != nil {
		return err
	}
	for _, c := range fed.Status.Clusters {
		if c.UnhealthySince != nil {
			p.line("status.clusters[%s].unhealthySince: %s", c.Name, c.UnhealthySince.UTC().Format(time.TimeOnly))
		}
	}
	return nil
}

// evicting reports whether status.schedule lists an eviction of cluster.
func (p printer) evicting(cluster string) bool {
	fed, err := p.f.federated()
	if err != nil || fed.Status.Schedule == nil {
		return false
	}
	return slices.ContainsFunc(fed.Status.Schedule.Evictions, func(e federation.Eviction) bool { return e.Cluster == cluster })
}

// avoided prints status.schedule.avoided.
func (p printer) avoided() error {
	fed, err := p.f.federated()
	if err != nil {
		return err
	}
	if fed.Status.Schedule == nil {
		return nil
	}
	for _, a := range fed.Status.Schedule.Avoided {
		p.line("avoided: %s (%s) until %s", a.Cluster, a.Reason, a.Until.UTC().Format(time.TimeOnly))
	}
	return nil
}

// autoscaled prints the fleet total the autoscaler wrote and why (status.autoscale).
func (p printer) autoscaled() error {
	u, err := p.f.host.Peek(federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	if err != nil {
		return err
	}
	st := rsp.Status.Autoscale
	if st == nil {
		p.line("autoscale: no status yet")
		return nil
	}
	p.line("fleet total %d (ran %d)", federation.FleetTotal(rsp), st.CurrentReplicas)
	for _, c := range st.Conditions {
		p.line("  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return nil
}

// total is the fleet's total as the scheduler reads it (federation.FleetTotal); -1 when the
// preference cannot be read.
func (p printer) total() int64 {
	u, err := p.f.host.Peek(federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	if err != nil {
		return -1
	}
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	if err != nil {
		return -1
	}
	return federation.FleetTotal(rsp)
}
