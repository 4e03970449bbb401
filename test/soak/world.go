package soak

import (
	"context"

	"fmt"
	"github.com/google/go-cmp/cmp"
	"hash/fnv"
	"maps"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// startTime is the fake clock's first instant in every soak.
func startTime() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

// Kinds returns the federated kinds a soak runs, in the order the loops handle them:
// FederatedNamespace, FederatedConfigMap, FederatedSecret, FederatedPersistentVolumeClaim
// (the dependencies come before their workloads), FederatedService, FederatedDeployment.
func Kinds() []federation.TypeConfig { return kinds() }

func kinds() []federation.TypeConfig {
	return []federation.TypeConfig{
		federation.NamespaceType, federation.ConfigMapType, federation.SecretType, federation.PersistentVolumeClaimType,
		federation.ServiceType, federation.DeploymentType,
	}
}

// World is the fleet a soak runs over: a fake host, fake members and a fake clock, and what
// the harness remembers to check at the end. A control plane under test builds its loops on
// Host, Fleet and Clock (and may record its sync events through World, an EventRecorder).
//
// Every member's write path carries a guard (fake Hooks): an update, patch or delete that
// reaches a member object without federation.ManagedByLabel is a violation, whoever sent it.
// The hooks also count the writes that got through, per cluster, which is how quiescence is
// told.
type World struct {
	Config Config
	Clock  *clocktesting.FakeClock
	Host   *fake.Cluster
	Fleet  *fake.Fleet

	mu         sync.Mutex
	violations []Violation
	where      where           // the phase and step violations name
	reported   map[string]bool // "rule object" of the violations reported after a step
	events     []RecordedEvent
	writes     writeCounts
	calls      int // every call that got through, for Run mode's idle detection
	trace      func(format string, args ...any)
	latency    map[string]time.Duration // per member; see slow and delay
	faults     bool
	leaving    map[string]bool          // Cluster objects deleted, members still joined
	removed    map[string]*fake.Cluster // members unjoined, once their Cluster was gone (still in the fleet: they may join again)
	joining    map[string]int           // members joining again, by label index, once their old Cluster is gone
	index      map[string]int           // each member's label index
	partition  map[string]bool
	tainted    map[string]bool // clusters the script drained (the drain taint on spec.taints)
	failover   *failoverWatch
	foreign    []foreignMark
	orphans    []orphanRecord
	// inflight is the member deletes in flight (from their hook to their return), by
	// cluster/resource/namespace/name: an orphan annotation does not call them back.
	inflight map[string]int
	// sending is, by cluster/resource/namespace/name, the spec.replicas of the member updates
	// under way (Run mode: from the call until it returns, its latency included): a sample
	// counts a copy at most at what a write already decided sets (see sentReplicas).
	sending   map[string][]int64
	untouched []untouchedObject
	jumped    time.Duration

	// The features' state (see Features).
	slowness   map[string]time.Duration // members whose rolling updates are slow
	kubeFed    []kubeFedCopy            // member objects KubeFed made
	migrated   map[string]bool          // "Kind namespace/name" of the migrated objects
	outage     *outage                  // the control plane cut off from every member
	unselected []unselectedCopy         // copies of native Deployments no policy selects any more
	userMade   []userObject             // the user's objects on the host
	steps      stepWatch                // what the rules after every step compare with
	kindsState kindsWatch               // the configured kind's (see apply_kinds.go)
	autoscale  *autoscaleWatch          // the autoscaled workloads' totals (nil: Without.Autoscale)
}

// RecordedEvent is one Kubernetes event a loop recorded through the World.
type RecordedEvent struct {
	Kind, Namespace, Name string
	Type, Reason, Message string
}

// writeCounts counts the writes that got through to storage (after partitions and faults).
type writeCounts struct {
	host     int // federated objects, RSPs, revisions, DNS records...
	clusters int // Cluster objects (the monitor's heartbeats and conditions)
	members  int
	// which names the first host and member writes (maxNamedWrites), for a violation that
	// wants none: the cluster, verb, resource and object, and what a status write changed.
	which []namedWrite
}

// namedWrite is a write writeCounts names: what it was, and for a status write the status
// stored before it and the one written (diffed only when a violation names the write).
type namedWrite struct {
	what          string
	before, after any
	status        bool
}

func (n namedWrite) String() string {
	if !n.status {
		return n.what
	}
	return n.what + " (status -stored +written:\n" + cmp.Diff(n.before, n.after) + ")"
}

// named lists the writes wc names, one after the other.
func (wc writeCounts) named() string {
	out := make([]string, 0, len(wc.which))
	for _, n := range wc.which {
		out = append(out, n.String())
	}
	return strings.Join(out, "; ")
}

// maxNamedWrites is how many writes writeCounts.which names.
const maxNamedWrites = 8

// foreignMark is an annotation another controller wrote on a member object.
type foreignMark struct {
	cluster  string
	gvr      schema.GroupVersionResource
	ns, name string
	uid      string
	key, val string
}

// orphanRecord is a managed member object whose federated object was deleted with
// federation.OrphanAnnotation.
type orphanRecord struct {
	cluster  string
	gvr      schema.GroupVersionResource
	ns, name string
	uid      string
	fed      string // Kind namespace/name of the federated object
}

// untouchedObject is an object no federation manages, seeded in a member: it must end as it
// started (its status aside: the members' simulated controllers write it).
type untouchedObject struct {
	cluster  string
	gvr      schema.GroupVersionResource
	ns, name string
	uid      string
	state    string // its metadata's labels, annotations, generation and deletion, and its spec or data
}

// untouchedState is what of obj must not change: all but its status.
func untouchedState(obj *unstructured.Unstructured) string {
	return fmt.Sprintf("%v %v %d %v %v %v", obj.GetLabels(), obj.GetAnnotations(), obj.GetGeneration(), obj.GetDeletionTimestamp(), obj.Object["spec"], obj.Object["data"])
}

// NewWorld builds the host, the fleet and the clock of cfg, with the Clusters registered on the
// host. It seeds no federated object: [Run] does that from the script.
func NewWorld(ctx context.Context, cfg Config) (*World, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	w := &World{
		Config:    cfg,
		Clock:     clocktesting.NewFakeClock(startTime()),
		Host:      fake.NewHost("host"),
		Fleet:     fake.NewFleet(),
		latency:   map[string]time.Duration{},
		leaving:   map[string]bool{},
		removed:   map[string]*fake.Cluster{},
		joining:   map[string]int{},
		index:     map[string]int{},
		slowness:  map[string]time.Duration{},
		migrated:  map[string]bool{},
		partition: map[string]bool{},
		tainted:   map[string]bool{},
		failover:  newFailoverWatch(),
	}
	if cfg.TraceWrites {
		w.trace = cfg.Logf
	}
	w.kindsState.set = -1
	w.Host.SetClock(w.Clock)
	w.Host.SetRecording(false)
	w.Host.ClearActions()
	crds, err := dnsrecord.CRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return nil, err
		}
		if _, err := w.Host.Create(ctx, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, &unstructured.Unstructured{Object: m}); err != nil {
			return nil, fmt.Errorf("soak: install %s: %w", crd.Name, err)
		}
	}
	if err := w.installWidgets(ctx, w.Host); err != nil {
		return nil, err
	}
	w.Fleet.SetClock(w.Clock)
	w.Fleet.SetRecording(false)
	w.Fleet.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: defaultReadyAfter, LoadBalancers: true})
	w.installHooks(w.Host)
	return w, nil
}

// clusterLabels are a member's labels: topology from its index, and a tier for selectors.
func clusterLabels(i int) map[string]string {
	regions := []string{"us-east-1", "europe-west1", "southeastasia"}
	providers := []string{"aws", "gcp", "azure"}
	tiers := []string{"gold", "silver"}
	region := regions[i%len(regions)]
	return map[string]string{
		federation.RegionLabel:   region,
		federation.ZoneLabel:     fmt.Sprintf("%s-%c", region, 'a'+rune(i/len(regions)%3)),
		federation.ProviderLabel: providers[i%len(providers)],
		"soak.fedkit.io/tier":    tiers[i%len(tiers)],
	}
}

// addMember adds member name to the fleet and registers its Cluster on the host, Ready, as an
// operator joining a cluster does. Its member caches start at once (as a control plane's
// informers would), so a partition that follows finds them synced. A member unjoined before
// joins again with what it holds; while its old Cluster is still being deleted, it joins
// once that is gone (see housekeep).
func (w *World) addMember(ctx context.Context, name string, index int) error {
	w.mu.Lock()
	w.index[name] = index
	leaving := w.leaving[name]
	if leaving {
		w.joining[name] = index
	}
	w.mu.Unlock()
	if leaving {
		return nil
	}
	c := w.Fleet.Add(name, clusterLabels(index))
	w.mu.Lock()
	delete(w.removed, name)
	w.mu.Unlock()
	w.installHooks(c)
	w.applyFaults(c)
	c.SetWorkloads(w.workloads(name))
	if err := w.installWidgets(ctx, c); err != nil {
		return err
	}
	for _, typ := range kinds() {
		if _, err := w.Fleet.CachedReader(name, typ.TargetGVR()); err != nil {
			return err
		}
	}
	for _, desc := range w.Fleet.Clusters() {
		if desc.Name != name {
			continue
		}
		desc.CreationTimestamp = metav1.Time{}
		u, err := federation.ToUnstructured(&desc)
		if err != nil {
			return err
		}
		st := u.Object["status"]
		stored, err := w.userCreate(ctx, federation.ClusterGVR, u)
		if err != nil {
			return fmt.Errorf("soak: register cluster %q: %w", name, err)
		}
		return w.userUpdateStatus(ctx, federation.ClusterGVR, stored, st)
	}
	return fmt.Errorf("soak: cluster %q missing from the fleet", name)
}

// adoptableCopy reports whether sync may take over member object obj (of resource gvr), which
// no federation manages, for the federated object of its name on the host
// (plan.Adoptable): a copy that object released, or the object KubeFed made for it.
func (w *World) adoptableCopy(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) bool {
	for _, typ := range kinds() {
		if typ.TargetGVR() != gvr {
			continue
		}
		u, err := w.Host.Peek(typ.FederatedGVR(), obj.GetNamespace(), obj.GetName())
		if err != nil {
			return false
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		return err == nil && plan.Adoptable(obj, fed, fed.Annotations[federation.AdoptAnnotation] == "true")
	}
	return false
}

// members returns the fleet's joined members (those unjoined stay in the fleet, to join
// again), by name.
func (w *World) members() map[string]*fake.Cluster {
	w.mu.Lock()
	removed := maps.Clone(w.removed)
	w.mu.Unlock()
	out := map[string]*fake.Cluster{}
	for _, n := range w.Fleet.Names() {
		if c, ok := w.Fleet.Member(n); ok && removed[n] == nil {
			out[n] = c
		}
	}
	return out
}

// installHooks puts the guard, the write counter and the latency on c (in Run mode, only the
// writes' latency: see delay).
func (w *World) installHooks(c *fake.Cluster) {
	name, host := c.Name(), c == w.Host
	before := func(ctx context.Context, next federation.ClusterClient, verb string, gvr schema.GroupVersionResource, ns, objName string) {
		w.slow(name)
		w.mu.Lock()
		switch {
		case !host:
			w.writes.members++
		case gvr == federation.ClusterGVR:
			w.writes.clusters++
		default:
			w.writes.host++
		}
		if gvr != federation.ClusterGVR && len(w.writes.which) < maxNamedWrites {
			w.writes.which = append(w.writes.which, namedWrite{what: fmt.Sprintf("%s %s %s %s", name, verb, gvr.Resource, objectRef(ns, objName))})
		}
		trace := w.trace
		w.mu.Unlock()
		if trace != nil {
			trace("write: %s %s %s %s", name, verb, gvr.Resource, objectRef(ns, objName))
		}
		if host || verb == "create" {
			return
		}
		cur, err := next.Get(ctx, gvr, ns, objName)
		if err != nil {
			return
		}
		if !managed(cur) && !w.adoptableCopy(gvr, cur) {
			w.violate(RuleForeignUntouched, fmt.Sprintf("%s %s in %s", gvr.Resource, objectRef(ns, objName), name), "%s of an object that is not this federation's (labels %v, annotations %v)", verb, cur.GetLabels(), cur.GetAnnotations())
		}
	}
	c.SetHooks(fake.Hooks{
		Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, n string) (*unstructured.Unstructured, error) {
			w.slow(name)
			return next.Get(ctx, gvr, ns, n)
		},
		List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
			w.slow(name)
			return next.List(ctx, gvr, ns, opts)
		},
		Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if err := w.delay(ctx, name); err != nil {
				return nil, err
			}
			before(ctx, next, "create", gvr, obj.GetNamespace(), obj.GetName())
			return next.Create(ctx, gvr, obj)
		},
		Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if !host {
				done := w.send(name, gvr, obj)
				defer done()
			}
			if err := w.delay(ctx, name); err != nil {
				return nil, err
			}
			before(ctx, next, "update", gvr, obj.GetNamespace(), obj.GetName())
			out, err := next.Update(ctx, gvr, obj)
			w.traceDone(name, "update", gvr, obj, out, err)
			return out, err
		},
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if err := w.delay(ctx, name); err != nil {
				return nil, err
			}
			before(ctx, next, "update-status", gvr, obj.GetNamespace(), obj.GetName())
			w.traceDiff(ctx, next, gvr, obj)
			w.nameStatusDiff(ctx, next, gvr, obj)
			out, err := next.UpdateStatus(ctx, gvr, obj)
			w.traceDone(name, "update-status", gvr, obj, out, err)
			return out, err
		},
		Patch: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, n string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
			if err := w.delay(ctx, name); err != nil {
				return nil, err
			}
			before(ctx, next, "patch", gvr, ns, n)
			return next.Patch(ctx, gvr, ns, n, pt, data)
		},
		Delete: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, n string, opts metav1.DeleteOptions) error {
			if !host {
				done := w.inFlight(name, gvr, ns, n)
				defer done()
			}
			if err := w.delay(ctx, name); err != nil {
				return err
			}
			before(ctx, next, "delete", gvr, ns, n)
			return next.Delete(ctx, gvr, ns, n, opts)
		},
	})
}

// inFlight records a member delete as under way until done is called.
func (w *World) inFlight(cluster string, gvr schema.GroupVersionResource, ns, name string) (done func()) {
	k := memberKey(cluster, gvr, ns, name)
	w.mu.Lock()
	if w.inflight == nil {
		w.inflight = map[string]int{}
	}
	w.inflight[k]++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		if w.inflight[k]--; w.inflight[k] == 0 {
			delete(w.inflight, k)
		}
		w.mu.Unlock()
	}
}

// memberKey names a member object: cluster/resource/namespace/name.
func memberKey(cluster string, gvr schema.GroupVersionResource, ns, name string) string {
	return cluster + "/" + gvr.Resource + "/" + ns + "/" + name
}

// slow counts a call to cluster and, in deterministic mode, lets it take its latency on the
// fake clock: the clock moves inside the call, as if the call took that long. (In Run mode
// the fake makes reads wait, and delay writes.)
func (w *World) slow(cluster string) {
	w.mu.Lock()
	w.calls++
	d := w.latency[cluster]
	w.mu.Unlock()
	if d > 0 && !w.Config.Run {
		w.Clock.Step(d)
	}
}

// delay makes a write to cluster wait out its latency in Run mode, on the fake clock, as the
// fake's own latency makes reads wait: until the harness steps the clock past it, which is the
// next step of the script. The wait is the World's rather than the fake's so that a write is
// known while it waits: the update of a copy decided before a sample and landing after it is
// counted by the sample at what it sets (see send), as the capacity check must. The fake's
// partition and injected errors come before the wait, so a write they fail fails at once.
// Deterministic mode: no wait (slow steps the clock).
func (w *World) delay(ctx context.Context, cluster string) error {
	w.mu.Lock()
	d := w.latency[cluster]
	w.mu.Unlock()
	if d <= 0 || !w.Config.Run {
		return nil
	}
	t := w.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send records a member update of obj as under way until done is called, with the replicas
// it sets (only an object with spec.replicas is recorded).
func (w *World) send(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (done func()) {
	r, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found || err != nil {
		return func() {}
	}
	k := memberKey(cluster, gvr, obj.GetNamespace(), obj.GetName())
	w.mu.Lock()
	if w.sending == nil {
		w.sending = map[string][]int64{}
	}
	w.sending[k] = append(w.sending[k], r)
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		list := w.sending[k]
		if i := slices.Index(list, r); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(w.sending, k)
			return
		}
		w.sending[k] = list
	}
}

// sentReplicas is what a sample counts of member object obj's spec.replicas (spec): at most
// what an update under way sets. That update was decided already, before the sample, and
// lands after it (a slow member); the copy is going to that count whatever happens next.
func (w *World) sentReplicas(cluster string, obj *unstructured.Unstructured, spec int64) int64 {
	k := memberKey(cluster, federation.DeploymentType.TargetGVR(), obj.GetNamespace(), obj.GetName())
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.sending[k] {
		spec = min(spec, r)
	}
	return spec
}

// applyFaults turns c's injected errors on or off as the World's faults are.
func (w *World) applyFaults(c *fake.Cluster) {
	w.mu.Lock()
	on, rate := w.faults, w.Config.ErrorRate
	w.mu.Unlock()
	if !on || rate == 0 {
		c.SetErrorRate(fake.VerbAll, 0, 0)
		return
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(c.Name()))
	c.SetErrorRate(fake.VerbAll, rate, w.Config.Seed^h.Sum64())
}

// setFaults turns injected errors on or off everywhere; off also ends latency, injected
// Conflicts (ResetFaults, then the hooks again), slow rolling updates and images that never
// start.
func (w *World) setFaults(on bool) {
	w.mu.Lock()
	w.faults = on
	if !on {
		clear(w.latency)
	}
	w.mu.Unlock()
	all := []*fake.Cluster{w.Host}
	for _, name := range w.Fleet.Names() {
		if m, ok := w.Fleet.Member(name); ok {
			all = append(all, m)
		}
	}
	for _, c := range all {
		if !on {
			c.ResetFaults()
			w.installHooks(c)
		}
		w.applyFaults(c)
		if c != w.Host {
			c.SetWorkloads(w.workloads(c.Name()))
		}
	}
}

// Violations returns what the guard and the checks found so far.
func (w *World) Violations() []Violation {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.violations)
}

// Eventf records an event: the World is a fedsync.EventRecorder (and any loop's).
func (w *World) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	e := RecordedEvent{Type: eventtype, Reason: reason, Message: fmt.Sprintf(messageFmt, args...)}
	if o, ok := object.(metav1.Object); ok {
		e.Namespace, e.Name = o.GetNamespace(), o.GetName()
	}
	if o, ok := object.(interface {
		GetObjectKind() schema.ObjectKind
	}); ok {
		e.Kind = o.GetObjectKind().GroupVersionKind().Kind
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, e)
}

// Events returns the events recorded so far.
func (w *World) Events() []RecordedEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}

// takeWrites returns the writes counted since the last call and resets the counts.
func (w *World) takeWrites() writeCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = writeCounts{}
	return out
}

func objectRef(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// callCount returns how many calls got through to any cluster so far.
func (w *World) callCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// traceDiff logs what a status write changes, when writes are traced (not the Clusters').
func (w *World) traceDiff(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	w.mu.Lock()
	trace := w.trace
	w.mu.Unlock()
	if trace == nil || gvr == federation.ClusterGVR {
		return
	}
	cur, err := next.Get(ctx, gvr, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return
	}
	trace("  status diff (-stored +written):\n%s", cmp.Diff(cur.Object["status"], obj.Object["status"]))
}

// nameStatusDiff adds what a status write changes to the last write writeCounts.which
// names, when it names this one.
func (w *World) nameStatusDiff(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	if gvr == federation.ClusterGVR {
		return
	}
	w.mu.Lock()
	n := len(w.writes.which)
	w.mu.Unlock()
	if n == 0 || n > maxNamedWrites {
		return
	}
	cur, err := next.Get(ctx, gvr, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return
	}
	after := runtime.DeepCopyJSONValue(obj.Object["status"])
	w.mu.Lock()
	defer w.mu.Unlock()
	if i := n - 1; i < len(w.writes.which) && strings.HasSuffix(w.writes.which[i].what, objectRef(obj.GetNamespace(), obj.GetName())) {
		w.writes.which[i].before, w.writes.which[i].after, w.writes.which[i].status = cur.Object["status"], after, true
	}
}

// traceLine logs a line when writes are traced.
func (w *World) traceLine(format string, args ...any) {
	w.mu.Lock()
	trace := w.trace
	w.mu.Unlock()
	if trace != nil {
		trace(format, args...)
	}
}

// traceDone logs, when writes are traced, how an update ended: the resourceVersion sent and
// stored (or the error), the fedkit package that called, and what a divided workload's write
// carries: a member Deployment's spec.replicas, a FederatedDeployment's status.schedule.
func (w *World) traceDone(cluster, verb string, gvr schema.GroupVersionResource, sent, out *unstructured.Unstructured, err error) {
	w.mu.Lock()
	trace := w.trace
	w.mu.Unlock()
	if trace == nil || gvr == federation.ClusterGVR {
		return
	}
	what := ""
	switch gvr {
	case federation.DeploymentType.TargetGVR():
		r, _, _ := unstructured.NestedInt64(sent.Object, "spec", "replicas")
		what = fmt.Sprintf(" replicas=%d", r)
	case federation.DeploymentType.FederatedGVR():
		var parts []string
		cl, _, _ := unstructured.NestedSlice(sent.Object, "status", "schedule", "clusters")
		for _, c := range cl {
			m, _ := c.(map[string]any)
			parts = append(parts, fmt.Sprintf("%v:%v", m["name"], m["replicas"]))
		}
		what = fmt.Sprintf(" schedule=[%s]", strings.Join(parts, " "))
	}
	res := "ok"
	switch {
	case err != nil:
		res = "error: " + err.Error()
	case out != nil:
		res = "ok rv=" + out.GetResourceVersion()
	}
	trace("done: %s %s %s %s sent rv=%s by %s%s: %s", cluster, verb, gvr.Resource, objectRef(sent.GetNamespace(), sent.GetName()),
		sent.GetResourceVersion(), callerPackage(), what, res)
}

// callerPackage names the first fedkit package on the stack outside the fakes and the soak:
// which loop made a traced write.
func callerPackage() string {
	pcs := make([]uintptr, 64)
	frames := goruntime.CallersFrames(pcs[:goruntime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		fn := f.Function
		if strings.HasPrefix(fn, "github.com/fedkit/fedkit/") && !strings.HasPrefix(fn, "github.com/fedkit/fedkit/fake") &&
			!strings.HasPrefix(fn, "github.com/fedkit/fedkit/test/") && !strings.HasPrefix(fn, "github.com/fedkit/fedkit/federation") &&
			!strings.HasPrefix(fn, "github.com/fedkit/fedkit/internal/") {
			return strings.TrimPrefix(fn, "github.com/fedkit/fedkit/")
		}
		if !more {
			return "?"
		}
	}
}
