package preview

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/sync/plan"
)

// ErrInvalidInput is returned by Run for input no preview can be made of: two Clusters of
// one name, two federated objects of one kind, namespace and name, or a nil object. Problems
// with one object's content are not errors: the Report lists them.
var ErrInvalidInput = errors.New("preview: invalid input")

// Run previews what fedkit's loops would do with the input, without touching any cluster.
// For each federated object it runs the loops' own pure decisions, in the loops' order:
//
//  1. validation (federation.ValidateFederatedObject, through override.Validate), as sync
//     refuses an invalid object;
//  2. the scheduler: scheduler.Decide, the function the Scheduler's Reconcile calls, with
//     the object's ReplicaSchedulingPreference: placement with each left-out cluster's
//     reason, the replicas per cluster with the plan's explanation, the Scheduled condition;
//  3. sync: the schedule as the scheduler would write it, then plan.Decide, the function the
//     Syncer's Reconcile calls: the member object per cluster (rendered with the live
//     object's retained fields when there is one) and, with Input.Live, the change per
//     cluster, with the owned fields an update changes (sync.OwnedDiff);
//  4. override.Validate, the dry-run check for an object about to be stored: rendering
//     against every Cluster, placed or not (and every cluster an override names), so that
//     an override that cannot apply (a path that does not exist) is found before it is
//     placed there, with the field at fault;
//  0. propagation policies: each native object of Input.Other that a policy selects
//     (propagation.DecideWrites) becomes the Federated<Kind> and preference that package
//     propagation would write (propagation.Generate, propagation.Preference), previewed
//     after the input's own federated objects;
//  5. DNS: the status.dns the DNS loop would write (dnsrecord.ServiceStatusDNS or
//     IngressStatusDNS, from the record's status and, with Input.Live, the member objects'
//     load balancers), then the names of the object's ServiceDNSRecord or IngressDNSRecord,
//     and with live objects the records (dnsrecord.ServiceNames, ServiceEndpoints,
//     IngressEndpoints).
//
// Run is pure: no I/O, no clock (Input.Now is the time), no randomness; the same input
// gives the same report. It returns an error wrapping [ErrInvalidInput] only for input that
// is ambiguous as a whole; everything wrong with one object is a Problem in the report.
func Run(in Input) (Report, error) {
	r, err := newRun(in)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Live: in.Live != nil}
	for i := range r.clusters {
		c := &r.clusters[i]
		for _, e := range federation.ValidateCluster(c) {
			rep.Problems = append(rep.Problems, Problem{Severity: Error, Object: "Cluster " + c.Name, Field: e.Field, Message: fieldMessage(e)})
		}
	}
	natives, generated, problems := r.natives()
	rep.Natives = natives
	rep.Problems = append(rep.Problems, problems...)
	for i := range in.Objects {
		r.index = i
		rep.Objects = append(rep.Objects, r.object(&in.Objects[i]))
	}
	for i := range generated {
		// Its index in rep.Objects: the dependencies preview keys a workload's
		// references by it.
		r.index = len(in.Objects) + i
		rep.Objects = append(rep.Objects, r.object(&generated[i]))
	}
	for i, clusters := range r.dependencies(&rep) {
		// The user's federated dependency gains its workloads' clusters, as the
		// dependencies loop's annotation makes the scheduler and sync add them.
		o := in.Objects[i].DeepCopy()
		ann := maps.Clone(o.Annotations)
		if ann == nil {
			ann = map[string]string{}
		}
		ann[federation.RequiredByClustersAnnotation] = federation.FormatRequiredClusters(clusters)
		o.Annotations = ann
		r.index = i
		rep.Objects[i] = r.object(o)
	}
	rep.Problems = append(rep.Problems, r.unused()...)
	return rep, nil
}

// run is one Run: the input, indexed.
type run struct {
	in       Input
	types    []federation.TypeConfig
	clusters []federation.Cluster // sorted by name, as the host lists them
	names    []string
	// disruption is the fleet's state with Input.Down's clusters down.
	disruption placement.Disruption
	objects    map[string]bool // kind/namespace/name of every federated object
	// workloads are the objects with spec.propagateDependencies, by namespace, with the
	// clusters the scheduler places them in; refs are their references by object index.
	workloads map[string][]dependencies.Workload
	refs      map[int][]dependencies.Reference
	index     int // of the object being previewed
}

func newRun(in Input) (*run, error) {
	r := &run{in: in, types: in.Types, objects: map[string]bool{}, workloads: map[string][]dependencies.Workload{}, refs: map[int][]dependencies.Reference{}}
	if r.types == nil {
		r.types = federation.BuiltinTypes()
	}
	r.clusters = make([]federation.Cluster, 0, len(in.Clusters))
	for i := range in.Clusters {
		c := in.Clusters[i].DeepCopy()
		if in.AssumeReady && meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady) == nil {
			c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{
				Type: federation.ConditionReady, Status: metav1.ConditionTrue, Reason: "AssumedReady",
				Message: "the preview assumes a Cluster without a Ready condition is ready",
			})
		}
		r.clusters = append(r.clusters, *c)
	}
	for _, name := range in.Down {
		i := slices.IndexFunc(r.clusters, func(c federation.Cluster) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w: no Cluster %q to preview as down", ErrInvalidInput, name)
		}
		markDown(&r.clusters[i], in.Now)
	}
	if len(in.Down) > 0 {
		r.disruption = placement.FleetDisruption(r.clusters, in.Now, in.Disruption)
		if r.disruption.Disrupted {
			softenDown(r.clusters, in.Down)
		}
	}
	slices.SortFunc(r.clusters, func(a, b federation.Cluster) int { return strings.Compare(a.Name, b.Name) })
	for i := range r.clusters {
		if i > 0 && r.clusters[i].Name == r.clusters[i-1].Name {
			return nil, fmt.Errorf("%w: Cluster %q appears twice", ErrInvalidInput, r.clusters[i].Name)
		}
		r.names = append(r.names, r.clusters[i].Name)
	}
	for i := range in.Objects {
		o := &in.Objects[i]
		id := o.Kind + "/" + o.Namespace + "/" + o.Name
		if r.objects[id] {
			return nil, fmt.Errorf("%w: %s %s appears twice", ErrInvalidInput, o.Kind, keyOf(o))
		}
		r.objects[id] = true
	}
	return r, nil
}

// object previews one federated object.
func (r *run) object(src *federation.FederatedObject) Object {
	key := keyOf(src)
	what := src.Kind + " " + key.String()
	o := Object{Kind: src.Kind, Namespace: src.Namespace, Name: src.Name}
	typ, ok := r.typeFor(src.Kind)
	if !ok {
		o.Problems = append(o.Problems, Problem{Severity: Error, Object: what, Field: "kind",
			Message: fmt.Sprintf("no TypeConfig has the federated kind %q (add it to Input.Types)", src.Kind)})
		return o
	}
	fed := src.DeepCopy()
	federation.DefaultFederatedObject(fed) // as sync reads it
	o.Revision = revisionOf(fed)
	var ps problems
	// Validation and a render for every cluster, as for an object about to be stored.
	v := override.Validate(fed, typ, r.clusters)
	for _, e := range v.Invalid {
		ps.add(Problem{Severity: Error, Object: what, Field: e.Field, Message: fieldMessage(e)})
	}

	rsp, scaled := r.autoscaled(r.preference(fed.Kind, key))
	o.Autoscale = scaled
	d, err := scheduler.Decide(scheduler.Input{
		Type: typ, Object: fed, Preference: rsp, Clusters: r.clusters,
		Previous: fed.Status.Schedule, Now: r.in.Now, Fresh: r.in.Fresh, Disruption: r.in.Disruption,
	})
	o.Scheduled = Condition{Status: d.Condition.Status, Reason: d.Condition.Reason, Message: d.Condition.Message}
	ps.addError(what, err)
	// The scheduler's warnings, those its Scheduled message ends with.
	for _, w := range d.Warnings {
		if w.Reason == scheduler.WarningUnknownCluster && w.Kind == typ.Federated.Kind {
			o.Unknown = w.Clusters
		}
		ps.add(Problem{Severity: Warning, Object: w.Kind + " " + key.String(), Field: w.Field, Message: w.Message})
	}

	if len(r.in.Down) > 0 && d.Schedule != nil {
		o.Failover = failoverPlan(r.in.Down, fed.Status.Schedule, d.Schedule)
		o.Failover.Disrupted = r.disruption.Message
	}
	// What the scheduler writes is what sync reads.
	if d.Schedule != nil {
		fed.Status.Schedule = d.Schedule
	}
	meta.SetStatusCondition(&fed.Status.Conditions, d.Condition)
	var changes map[string]plan.Change
	placed := map[string]bool{}
	waiting := "" // why sync decides nothing (plan.Targets.Waiting)
	var refused map[string]*gate.Refusal
	if len(v.Invalid) == 0 {
		in := plan.Input{
			Type: typ, Object: fed, Clusters: r.clusters, Members: r.members(typ, fed),
			Revision: o.Revision, Identity: r.in.Identity,
			Adopt: r.in.Adopt || fed.GetAnnotations()[federation.AdoptAnnotation] == "true",
			// The pipeline runs the scheduler, so sync waits for its schedule, as
			// package controlplane sets it: an object the scheduler refuses is placed
			// nowhere and its members are left as they are.
			WaitForScheduler: true,
			// Without the history, no cluster is held back at an older revision: the
			// preview shows the revision as it renders everywhere, and its stages.
			Now: r.in.Now,
		}
		d, err := plan.Decide(in)
		ps.addError(what, err)
		changes = make(map[string]plan.Change, len(d.Changes))
		for _, ch := range d.Changes {
			changes[ch.Cluster] = ch
		}
		refused = r.refusals(in, d)
		for _, n := range d.Targets.Order {
			placed[n] = true
		}
		if d.Wait != nil {
			waiting = d.Wait.Reason
		}
		ps.add(renderProblems(v.Failures, what)...)
		if err == nil {
			o.Rollout = r.rollout(fed, o.Revision, d, changes, what, &ps)
		}
	}
	for _, name := range r.names {
		c := r.cluster(name, typ, d, placed[name], changes)
		if _, read := r.in.Live[name]; waiting != "" && read {
			c.Change = &Change{Action: plan.ActionNone.String(), Reason: waiting}
		}
		ps.add(refusedChange(&c, refused[name], what)...)
		o.Clusters = append(o.Clusters, c)
	}
	ps.add(memberProblems(r.names, changes, what)...)
	if len(v.Invalid) == 0 && waiting == "" && len(placed) == 0 && fed.DeletionTimestamp == nil {
		ps.add(Problem{Severity: Warning, Object: what, Field: "spec.placement",
			Message: fmt.Sprintf("it is placed in no cluster: the placement selects none of the %d Clusters (see each cluster's reason)", len(r.names))})
	}
	ps.add(r.overriddenReplicas(typ, fed, rsp, o.Clusters, what)...)
	ps.add(r.workload(typ, fed, what)...)
	dns, dnsProblems := r.dns(typ, fed)
	o.DNS = dns
	ps.add(dnsProblems...)
	o.Problems = ps.list
	return o
}

// cluster is one row of an object's preview.
func (r *run) cluster(name string, typ federation.TypeConfig, d scheduler.Decision, placed bool, changes map[string]plan.Change) Cluster {
	c := Cluster{Name: name, Selected: placed}
	if why, ok := d.Placement.Why(name); ok && !placed {
		c.Rule, c.Why = why.Rule.String(), why.Detail
	}
	if typ.Divisible() && d.Schedule != nil {
		for _, s := range d.Schedule.Clusters {
			if s.Name == name {
				n := s.Replicas
				c.Replicas = &n
				c.Explanation = d.Plan.Explain(name)
			}
		}
	}
	ch, ok := changes[name]
	if !ok {
		return c
	}
	if ch.Placed && ch.Desired != nil && (ch.Action == plan.ActionCreate || ch.Action == plan.ActionUpdate || ch.Action == plan.ActionNone) {
		c.Manifest = ch.Desired
		if n, ok, _ := unstructured.NestedInt64(c.Manifest.Object, typ.ReplicasFields()...); ok && typ.Divisible() {
			c.MemberReplicas = &n
		}
	}
	if r.in.Live == nil {
		return c
	}
	if _, read := r.in.Live[name]; !read {
		return c
	}
	c.Change = &Change{Action: ch.Action.String(), Reason: ch.Reason, Message: ch.Message}
	if ch.Action == plan.ActionUpdate {
		for _, f := range plan.OwnedDiff(ch.Desired, ch.Live) {
			if f.Path != hashPointer { // it changes with every change: noise in a diff
				c.Change.Diff = append(c.Change.Diff, f)
			}
		}
	}
	return c
}

// hashPointer is the JSON pointer of fedkit's desired-state hash annotation.
var hashPointer = "/metadata/annotations/" + strings.ReplaceAll(federation.DesiredHashAnnotation, "/", "~1")

// members is what sync would read in each cluster: the live objects when the input has
// them (a cluster without an entry was not read), else nothing anywhere, so that every
// placed cluster is rendered as for a create. A live Namespace of a FederatedNamespace also
// says which object the federation placed in it, if any (MemberState.Namespace).
func (r *run) members(typ federation.TypeConfig, fed *federation.FederatedObject) map[string]plan.MemberState {
	out := make(map[string]plan.MemberState, len(r.names))
	ns := fed.Namespace
	if !typ.Namespaced {
		ns = ""
	}
	for _, name := range r.names {
		objs, read := r.in.Live[name]
		if r.in.Live != nil && !read {
			continue
		}
		ms := plan.MemberState{Object: find(objs, typ.Target.GroupVersion().String(), typ.Target.Kind, ns, fed.Name)}
		if ms.Object != nil && typ.Target.Group == "" && typ.Target.Kind == "Namespace" {
			// As sync: a namespace that holds what the federation placed is not deleted.
			ms.Namespace = &plan.NamespaceCheck{InUse: plan.FederationObjectIn(r.in.Identity, fed.Name, objs)}
		}
		out[name] = ms
	}
	return out
}

// refusedChange notes ref, the gate's refusal of c's change (nil: none), on the change, and
// returns the Warning that says it.
func refusedChange(c *Cluster, ref *gate.Refusal, what string) []Problem {
	if ref == nil || c.Change == nil {
		return nil
	}
	c.Change.Refused = &Refused{Invariant: ref.Invariant, Reason: ref.Reason}
	return []Problem{{Severity: Warning, Object: what, Cluster: c.Name, Message: "the gate would refuse it: " + ref.Error()}}
}

// refusals are the gate's refusals of d's changes with live objects, by cluster: the writes
// the Syncer would send through it (plan.GateWrite), checked by gate.Check, with the member
// Namespace in Input.Live as evidence.
func (r *run) refusals(in plan.Input, d plan.Decision) map[string]*gate.Refusal {
	var out map[string]*gate.Refusal
	for _, ch := range d.Changes {
		objs, read := r.in.Live[ch.Cluster]
		w, ok := plan.GateWrite(in, d, ch)
		if !read || !ok {
			continue
		}
		if ns := w.Object.GetNamespace(); w.Object != nil && ns != "" {
			w.Evidence.Namespace = find(objs, "v1", "Namespace", "", ns)
		}
		if ref := r.in.Gate.Check(w); ref != nil {
			if out == nil {
				out = map[string]*gate.Refusal{}
			}
			out[ch.Cluster] = ref
		}
	}
	return out
}

// find returns a copy of the object of that apiVersion, kind, namespace and name, or nil.
func find(objs []*unstructured.Unstructured, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u != nil && u.GetAPIVersion() == apiVersion && u.GetKind() == kind && u.GetNamespace() == ns && u.GetName() == name {
			return u.DeepCopy()
		}
	}
	return nil
}

func (r *run) typeFor(federatedKind string) (federation.TypeConfig, bool) {
	for _, t := range r.types {
		if t.Federated.Kind == federatedKind {
			return t, true
		}
	}
	return federation.TypeConfig{}, false
}

// preference returns the ReplicaSchedulingPreference of key for the kind, or nil.
func (r *run) preference(kind string, key federation.Key) *federation.ReplicaSchedulingPreference {
	for i := range r.in.Preferences {
		p := &r.in.Preferences[i]
		if p.Namespace == key.Namespace && p.Name == key.Name && p.Spec.TargetKind == kind {
			return p
		}
	}
	return nil
}

// autoscaled returns rsp with the fleet total the autoscaler would write from Input.Samples
// (Central mode: recommend.Explain, the Decision's Total), and its decision; rsp itself and
// nil when it has no spec.autoscale in Central mode or the input no samples for it.
func (r *run) autoscaled(rsp *federation.ReplicaSchedulingPreference) (*federation.ReplicaSchedulingPreference, *Autoscale) {
	if rsp == nil || rsp.Spec.Autoscale == nil || rsp.Spec.Autoscale.Mode == federation.AutoscaleDistributed {
		return rsp, nil
	}
	samples, ok := r.in.Samples[keyOf(rsp)]
	if !ok {
		return rsp, nil
	}
	d, why := recommend.Explain(recommend.DecideInput{Input: recommend.Input{
		Autoscale: *rsp.Spec.Autoscale, Current: int32(federation.FleetTotal(rsp)), Samples: samples,
		Now: r.in.Now, StaleAfter: recommend.StaleAfter(recommend.DefaultSyncPeriod),
	}})
	out := rsp.DeepCopy()
	if total, ok := d.Total(); ok {
		if out.Status.Autoscale == nil {
			out.Status.Autoscale = &federation.AutoscaleStatus{}
		}
		out.Status.Autoscale.DesiredReplicas = &total
	}
	return out, &Autoscale{Current: d.Current, Desired: d.Desired, Message: d.Message, Explanation: why}
}

// unused reports preferences and DNS records that apply to no object of the input.
func (r *run) unused() []Problem {
	var out []Problem
	for _, p := range r.in.Preferences {
		if !r.objects[p.Spec.TargetKind+"/"+p.Namespace+"/"+p.Name] {
			out = append(out, Problem{Severity: Warning, Object: "ReplicaSchedulingPreference " + keyOf(&p).String(), Field: "spec.targetKind",
				Message: fmt.Sprintf("no %s %s in the input: it schedules nothing", p.Spec.TargetKind, keyOf(&p))})
		}
	}
	for _, rec := range r.in.ServiceDNSRecords {
		if !r.objects[federation.ServiceType.Federated.Kind+"/"+rec.Namespace+"/"+rec.Name] {
			out = append(out, Problem{Severity: Warning, Object: "ServiceDNSRecord " + keyOf(&rec).String(),
				Message: "no FederatedService of that name in the input (ServiceNotFederated): nothing is published"})
		}
	}
	for _, rec := range r.in.IngressDNSRecords {
		if !r.objects[federation.IngressType.Federated.Kind+"/"+rec.Namespace+"/"+rec.Name] {
			out = append(out, Problem{Severity: Warning, Object: "IngressDNSRecord " + keyOf(&rec).String(),
				Message: "no FederatedIngress of that name in the input (IngressNotFederated): nothing is published"})
		}
	}
	return out
}

// revisionOf is the revision sync renders: the one it recorded on the object, the next one
// when the spec changed since sync observed it (sync records every new template, overrides
// or placement as the next revision), or the first for an object sync has not seen.
func revisionOf(fed *federation.FederatedObject) int64 {
	n, err := strconv.ParseInt(fed.GetAnnotations()[federation.RevisionAnnotation], 10, 64)
	switch {
	case err != nil || n <= 0:
		return 1
	case fed.Status.ObservedGeneration > 0 && fed.Status.ObservedGeneration < fed.Generation:
		return n + 1
	}
	return n
}

func keyOf(o metav1.Object) federation.Key {
	return federation.Key{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// markDown makes c a cluster that is down: Ready False and the not-ready taint at NoExecute
// since now, as the cluster monitor leaves it once EvictionDelay has passed.
func markDown(c *federation.Cluster, now time.Time) {
	at := metav1.NewTime(now)
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: federation.ConditionReady, Status: metav1.ConditionFalse, Reason: "PreviewDown",
		Message: "the preview takes the cluster as down", LastTransitionTime: at,
	})
	c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, func(t corev1.Taint) bool { return t.Key == federation.TaintClusterNotReady })
	c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: federation.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &at})
}

// softenDown gives the clusters down the cluster monitor's not-ready taint at NoSchedule, as
// it leaves them while the fleet is disrupted.
func softenDown(clusters []federation.Cluster, down []string) {
	for i := range clusters {
		if !slices.Contains(down, clusters[i].Name) {
			continue
		}
		for j := range clusters[i].Spec.Taints {
			if t := &clusters[i].Spec.Taints[j]; t.Key == federation.TaintClusterNotReady {
				t.Effect = corev1.TaintEffectNoSchedule
			}
		}
	}
}

// failoverPlan compares the schedule before (prev, nil: none) with the one decided with the
// clusters down: what moves where, and the evictions that keep copies meanwhile.
func failoverPlan(down []string, prev, next *federation.Schedule) *Failover {
	f := &Failover{Down: slices.Sorted(slices.Values(down)), Evictions: next.Evictions}
	count := func(s *federation.Schedule) map[string]int64 {
		out := map[string]int64{}
		if s != nil {
			for _, c := range s.Clusters {
				out[c.Name] = c.Replicas
			}
		}
		return out
	}
	before, after := count(prev), count(next)
	names := make([]string, 0, len(before)+len(after))
	for n := range before {
		names = append(names, n)
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		_, was := before[n]
		_, is := after[n]
		if was != is || before[n] != after[n] {
			f.Moves = append(f.Moves, Move{Cluster: n, Before: before[n], After: after[n]})
		}
	}
	return f
}
