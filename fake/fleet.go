package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/intern"
)

var _ federation.ClusterSet = (*Fleet)(nil)

// Fleet is a set of named member clusters. It implements [federation.ClusterSet] and
// [federation.MemberCache] (see [Fleet.CachedReader]), partitions members from the control
// plane, and describes them as [federation.Cluster] objects for placement and tests.
//
// A zero Fleet is valid and empty; [NewFleet] returns one. Every method is safe for concurrent
// use.
type Fleet struct {
	mu        sync.RWMutex       // read-locked by the lookups every call of every loop makes
	members   map[string]*member // guarded by mu, as are the members' fields
	added     int                // members ever added: each gets the next index for its default IP pool
	clock     clock.WithTicker
	workloads Workloads
	// unrecorded: members are created with recording off (SetRecording).
	unrecorded bool

	// The handlers of OnMemberChange, under their own lock: notifications are dispatched
	// while no other lock is held, and f.mu may be held while a member's lock is taken.
	hmu      sync.Mutex
	handlers []*changeHandler

	// intern is the members' interner: one object stored in many members is then mostly one
	// value in memory (see internal/intern), while interning is on (SetInterning).
	intern    intern.Table
	interning bool
}

// member is one cluster of the fleet. Its fields are guarded by the fleet's mu.
type member struct {
	cluster *Cluster
	labels  map[string]string
	created time.Time
}

// NewFleet returns an empty fleet using the real clock.
func NewFleet() *Fleet { return &Fleet{} }

// Add creates a member cluster named name with labels and returns it. The cluster uses the
// fleet's clock and simulated controllers (see SetClock and SetWorkloads). When labels carry
// topology.kubernetes.io/region or topology.kubernetes.io/zone, the cluster starts with one
// Node, "<name>-node-1", carrying those labels and 8 CPUs, 32Gi of memory and 110 pods
// allocatable, as a cluster monitor discovering zones expects. Adding a name that exists
// replaces its labels and returns the existing cluster with its state.
func (f *Fleet) Add(name string, labels map[string]string) *Cluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.members == nil {
		f.members = map[string]*member{}
	}
	if m, ok := f.members[name]; ok {
		m.labels = maps.Clone(labels)
		return m.cluster
	}
	c := NewCluster(name)
	if f.clock != nil {
		c.SetClock(f.clock)
	}
	c.SetWorkloads(f.workloads)
	if f.unrecorded {
		c.SetRecording(false)
	}
	f.added++
	c.lock()
	c.sim.index = f.added
	c.fleet = f
	c.intern = &f.intern
	c.interning = f.interning
	created := c.clock.Now()
	c.mu.Unlock()
	if node := topologyNode(name, labels); node != nil {
		// Seed cannot fail here: the cluster is new and the node well-formed.
		_ = c.Seed(node)
	}
	f.members[name] = &member{cluster: c, labels: maps.Clone(labels), created: created}
	return c
}

// topologyNode returns the Node a labelled member starts with, or nil without topology labels.
func topologyNode(cluster string, labels map[string]string) *unstructured.Unstructured {
	region, zone := labels[federation.RegionLabel], labels[federation.ZoneLabel]
	if region == "" && zone == "" {
		return nil
	}
	name := cluster + "-node-1"
	nodeLabels := map[string]any{corev1.LabelHostname: name, corev1.LabelOSStable: "linux"}
	if region != "" {
		nodeLabels[federation.RegionLabel] = region
	}
	if zone != "" {
		nodeLabels[federation.ZoneLabel] = zone
	}
	resources := map[string]any{"cpu": "8", "memory": "32Gi", "pods": "110"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Node",
		"metadata":   map[string]any{"name": name, "labels": nodeLabels},
		"status": map[string]any{
			"capacity":    resources,
			"allocatable": resources,
			"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady"}},
		},
	}}
}

// Client implements [federation.ClusterSet]. An unknown name is an error satisfying
// errors.Is(err, federation.ErrClusterNotFound). A partitioned member is returned all the
// same: its calls fail, as a real client's would.
func (f *Fleet) Client(name string) (federation.ClusterClient, error) {
	c, ok := f.Member(name)
	if !ok {
		return nil, fmt.Errorf("fake: fleet: %q: %w", name, federation.ErrClusterNotFound)
	}
	return c, nil
}

// Member returns the member cluster named name.
func (f *Fleet) Member(name string) (*Cluster, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m, ok := f.members[name]
	if !ok {
		return nil, false
	}
	return m.cluster, true
}

// Names returns the members' names, sorted.
func (f *Fleet) Names() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Sorted(maps.Keys(f.members))
}

// Remove takes a member out of the fleet and reports whether it was there. Its Cluster keeps
// working for whoever holds it; Client and CachedReader no longer find it, and its changes
// are no longer notified to the handlers of OnMemberChange.
func (f *Fleet) Remove(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.members[name]
	if ok {
		m.cluster.lock()
		m.cluster.fleet = nil
		m.cluster.mu.Unlock()
	}
	delete(f.members, name)
	return ok
}

// Partition cuts member name off (see [Cluster.Partition]). An unknown name is an error
// satisfying errors.Is(err, federation.ErrClusterNotFound).
func (f *Fleet) Partition(name string) error {
	c, ok := f.Member(name)
	if !ok {
		return fmt.Errorf("fake: fleet: partition %q: %w", name, federation.ErrClusterNotFound)
	}
	c.Partition()
	return nil
}

// Heal reconnects member name (see [Cluster.Heal]). An unknown name is an error satisfying
// errors.Is(err, federation.ErrClusterNotFound).
func (f *Fleet) Heal(name string) error {
	c, ok := f.Member(name)
	if !ok {
		return fmt.Errorf("fake: fleet: heal %q: %w", name, federation.ErrClusterNotFound)
	}
	c.Heal()
	return nil
}

// Clusters describes the members as the Cluster objects a host would hold, sorted by name:
// labels as given to Add; spec.apiEndpoint https://<name>.fake.invalid; spec.region,
// spec.zones and spec.provider from the labels topology.kubernetes.io/region,
// topology.kubernetes.io/zone and federation.k8s.io/provider; status.conditions a Ready
// condition, False with reason ClusterUnreachable while partitioned; status.kubernetesVersion
// the member's server version. Use it to feed placement and scheduling, or seed a host with it.
func (f *Fleet) Clusters() []federation.Cluster {
	f.mu.Lock()
	members := make(map[string]member, len(f.members))
	for name, m := range f.members {
		members[name] = *m // a snapshot: Add of an existing name replaces labels under f.mu
	}
	f.mu.Unlock()
	out := make([]federation.Cluster, 0, len(members))
	for _, name := range slices.Sorted(maps.Keys(members)) {
		out = append(out, members[name].describe(name))
	}
	return out
}

func (m member) describe(name string) federation.Cluster {
	c := m.cluster
	c.lock()
	partitioned, since, ver := c.partitioned, c.readySince, c.version.GitVersion
	c.mu.Unlock()

	region, zone := m.labels[federation.RegionLabel], m.labels[federation.ZoneLabel]
	var zones []string
	if zone != "" {
		zones = []string{zone}
	}
	ready := metav1.Condition{
		Type: federation.ConditionReady, Status: metav1.ConditionTrue,
		Reason: "ClusterReady", Message: "the API server answers",
		LastTransitionTime: metav1.NewTime(since.Truncate(time.Second)),
	}
	if partitioned {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "ClusterUnreachable", "the API server does not answer (partitioned)"
	}
	out := federation.Cluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Labels:            maps.Clone(m.labels),
			CreationTimestamp: metav1.NewTime(m.created.Truncate(time.Second)),
		},
		Spec: federation.ClusterSpec{
			APIEndpoint: "https://" + name + ".fake.invalid",
			Region:      region,
			Zones:       zones,
			Provider:    m.labels[federation.ProviderLabel],
		},
		Status: federation.ClusterStatus{
			Conditions:        []metav1.Condition{ready},
			Region:            region,
			Zones:             slices.Clone(zones),
			KubernetesVersion: ver,
		},
	}
	out.APIVersion, out.Kind = federation.ClusterGVK.ToAPIVersionAndKind()
	return out
}

// setAll runs set (which records a setting for future members) and then each on every
// present member, under the fleet's lock.
func (f *Fleet) setAll(set func(), each func(*Cluster)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set()
	for _, m := range f.members {
		each(m.cluster)
	}
}

// SetClock sets the clock of every member, present and future; nil restores the real clock.
func (f *Fleet) SetClock(clk clock.WithTicker) {
	f.setAll(func() { f.clock = clk }, func(c *Cluster) { c.SetClock(clk) })
}

// SetInterning turns interning on or off for every member, present and future (see
// [Cluster.SetInterning]); the members share one table, so an object stored in many members
// is mostly one value in memory.
func (f *Fleet) SetInterning(on bool) {
	f.setAll(func() { f.interning = on }, func(c *Cluster) { c.SetInterning(on) })
}

// SetRecording turns the recording of Actions on or off for every member, present and future
// (see [Cluster.SetRecording]).
func (f *Fleet) SetRecording(on bool) {
	f.setAll(func() { f.unrecorded = !on }, func(c *Cluster) { c.SetRecording(on) })
}

// SetWorkloads configures the simulated controllers of every member, present and future.
func (f *Fleet) SetWorkloads(w Workloads) {
	f.setAll(func() { f.workloads = w }, func(c *Cluster) { c.SetWorkloads(w) })
}

// Tick runs every member's simulated controllers once, in name order.
func (f *Fleet) Tick() {
	f.mu.Lock()
	members := maps.Clone(f.members)
	f.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(members)) {
		members[name].cluster.Tick()
	}
}

// Run calls Tick every Workloads.Interval (see SetWorkloads; default one second) on the
// fleet's clock until ctx is done, then returns nil.
func (f *Fleet) Run(ctx context.Context) error {
	f.mu.Lock()
	var clk clock.WithTicker = clock.RealClock{}
	if f.clock != nil {
		clk = f.clock
	}
	interval := f.workloads.Interval
	f.mu.Unlock()
	return runTicks(ctx, clk, interval, f.Tick)
}
