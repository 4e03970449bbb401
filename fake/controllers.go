package fake

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Workloads configures a cluster's simulated controllers, which stand in for the
// kube-controller-manager, scheduler and kubelets of a real cluster. The zero value simulates
// nothing. The simulation runs only when [Cluster.Tick] is called, or under [Cluster.Run]; it
// writes status as an external actor (no Action recorded, faults and partitions do not apply).
type Workloads struct {
	// Apps makes apps/v1 Deployments, ReplicaSets and StatefulSets report status that follows
	// their spec: observedGeneration, replicas, updatedReplicas, readyReplicas and
	// availableReplicas (and Deployment conditions Available and Progressing). No Pods or
	// ReplicaSets are created.
	Apps bool

	// ReadyAfter is how long, on the cluster's clock, a new generation of a workload takes to
	// be reported: a Tick at least ReadyAfter after the first Tick that saw the generation
	// writes its status. 0 means the first Tick that sees it.
	ReadyAfter time.Duration

	// PodCapacity is how many replicas the cluster can run in total; workloads are served
	// oldest first and the rest of their replicas stay unready (readyReplicas < replicas), as
	// unschedulable pods would. 0 means unlimited.
	PodCapacity int

	// FailingImages are container images whose pods never become ready, as an image that
	// cannot be pulled or crashes at start: a workload whose pod template uses one in a
	// container or init container reports its generation observed and its replicas updated,
	// none of them ready or available. Empty: every image works.
	FailingImages []string

	// LoadBalancers gives each Service of type LoadBalancer an ingress IP from
	// LoadBalancerIPs, in order, and takes it back when the Service changes type. Services
	// wait when the pool is exhausted.
	LoadBalancers bool

	// LoadBalancerIPs is the pool. Empty means 198.18.N.1 to 198.18.N.254 (a range reserved for
	// benchmarks, never routed), where N is the cluster's position in its Fleet (0 for a
	// standalone cluster), so fleet members hand out distinct addresses.
	LoadBalancerIPs []string

	// Interval is how often Run calls Tick. 0 means one second.
	Interval time.Duration
}

// simulation is the simulated controllers' state.
type simulation struct {
	cfg   Workloads
	index int // position in the fleet, for the default load-balancer pool
	seen  map[simKey]observed
}

type simKey struct {
	gvr schema.GroupVersionResource
	key objectKey
}

// observed is when the simulation first saw a workload's generation.
type observed struct {
	generation int64
	since      time.Time
}

// SetWorkloads configures the simulated controllers; the zero Workloads turns them off.
func (c *Cluster) SetWorkloads(w Workloads) {
	c.lock()
	defer c.mu.Unlock()
	w.LoadBalancerIPs = slices.Clone(w.LoadBalancerIPs)
	w.FailingImages = slices.Clone(w.FailingImages)
	c.sim.cfg = w
}

// Tick runs the simulated controllers once, at the cluster clock's current time. Tests call
// it after stepping a fake clock; [Cluster.Run] calls it periodically.
func (c *Cluster) Tick() {
	c.lock()
	defer c.unlock()
	if c.sim.cfg.Apps {
		c.tickAppsLocked(c.clock.Now())
	}
	if c.sim.cfg.LoadBalancers {
		c.tickServicesLocked()
	}
}

// Run calls Tick every Workloads.Interval on the cluster's clock until ctx is done, then
// returns nil. It starts no other goroutine.
func (c *Cluster) Run(ctx context.Context) error {
	c.lock()
	clk, interval := c.clock, c.sim.cfg.Interval
	c.mu.Unlock()
	return runTicks(ctx, clk, interval, c.Tick)
}

// workload is one apps object the simulation looks after.
type workload struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

func (c *Cluster) tickAppsLocked(now time.Time) {
	var all []workload
	for gvr, objs := range c.objects {
		if gvr.Group != "apps" || (gvr.Resource != "deployments" && gvr.Resource != "replicasets" && gvr.Resource != "statefulsets") {
			continue
		}
		for _, obj := range objs {
			if obj.GetDeletionTimestamp() == nil {
				all = append(all, workload{gvr, obj})
			}
		}
	}
	// Oldest first, as pods that already run keep their place.
	slices.SortFunc(all, func(a, b workload) int {
		if n := a.obj.GetCreationTimestamp().Compare(b.obj.GetCreationTimestamp().Time); n != 0 {
			return n
		}
		return cmp.Or(cmp.Compare(a.gvr.Resource, b.gvr.Resource),
			compareKeys(objectKey{a.obj.GetNamespace(), a.obj.GetName()}, objectKey{b.obj.GetNamespace(), b.obj.GetName()}))
	})

	seen := make(map[simKey]observed, len(all))
	used := int64(0)
	for _, w := range all {
		k := simKey{w.gvr, objectKey{w.obj.GetNamespace(), w.obj.GetName()}}
		o, ok := c.sim.seen[k]
		if !ok || o.generation != w.obj.GetGeneration() {
			o = observed{generation: w.obj.GetGeneration(), since: now}
		}
		seen[k] = o
		if now.Sub(o.since) < c.sim.cfg.ReadyAfter {
			ready, _, _ := unstructured.NestedInt64(w.obj.Object, "status", "readyReplicas")
			used += ready // the previous generation's pods keep running meanwhile
			continue
		}
		desired := int64(1)
		if r, found, err := unstructured.NestedInt64(w.obj.Object, "spec", "replicas"); found && err == nil {
			desired = r
		}
		ready := desired
		if usesImage(w.obj, c.sim.cfg.FailingImages) {
			ready = 0
		}
		if capacity := int64(c.sim.cfg.PodCapacity); capacity > 0 {
			ready = min(desired, max(capacity-used, 0))
		}
		used += ready
		status, err := appsStatus(w.gvr.Resource, w.obj, desired, ready, now)
		if err != nil || equality.Semantic.DeepEqual(w.obj.Object["status"], status) {
			continue
		}
		next := w.obj.DeepCopy()
		next.Object["status"] = status
		c.commitLocked(w.gvr, watch.Modified, next, w.obj)
	}
	c.sim.seen = seen
}

// usesImage reports whether obj's pod template has a container or init container running one
// of images.
func usesImage(obj *unstructured.Unstructured, images []string) bool {
	if len(images) == 0 {
		return false
	}
	for _, list := range []string{"containers", "initContainers"} {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", list)
		for _, x := range containers {
			if m, ok := x.(map[string]any); ok {
				if image, ok := m["image"].(string); ok && slices.Contains(images, image) {
					return true
				}
			}
		}
	}
	return false
}

// appsStatus renders the status a healthy controller would report, through the typed status
// structs so that field names and omitted zero values match the real thing.
func appsStatus(resource string, obj *unstructured.Unstructured, desired, ready int64, now time.Time) (map[string]any, error) {
	gen := obj.GetGeneration()
	var typed any
	switch resource {
	case "deployments":
		var old appsv1.DeploymentStatus
		if m, ok := obj.Object["status"].(map[string]any); ok {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &old)
		}
		st := appsv1.DeploymentStatus{
			ObservedGeneration:  gen,
			Replicas:            int32(desired),
			UpdatedReplicas:     int32(desired),
			ReadyReplicas:       int32(ready),
			AvailableReplicas:   int32(ready),
			UnavailableReplicas: int32(desired - ready),
		}
		available := deploymentCondition(old, appsv1.DeploymentAvailable, corev1.ConditionTrue,
			"MinimumReplicasAvailable", "Deployment has minimum availability.", now)
		progressing := deploymentCondition(old, appsv1.DeploymentProgressing, corev1.ConditionTrue,
			"NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", obj.GetName()), now)
		if ready < desired {
			available = deploymentCondition(old, appsv1.DeploymentAvailable, corev1.ConditionFalse,
				"MinimumReplicasUnavailable", "Deployment does not have minimum availability.", now)
			progressing = deploymentCondition(old, appsv1.DeploymentProgressing, corev1.ConditionTrue,
				"ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", obj.GetName()), now)
		}
		st.Conditions = []appsv1.DeploymentCondition{available, progressing}
		typed = &st
	case "replicasets":
		typed = &appsv1.ReplicaSetStatus{
			ObservedGeneration:   gen,
			Replicas:             int32(desired),
			FullyLabeledReplicas: int32(desired),
			ReadyReplicas:        int32(ready),
			AvailableReplicas:    int32(ready),
		}
	default:
		typed = &appsv1.StatefulSetStatus{
			ObservedGeneration: gen,
			Replicas:           int32(desired),
			CurrentReplicas:    int32(desired),
			UpdatedReplicas:    int32(desired),
			ReadyReplicas:      int32(ready),
			AvailableReplicas:  int32(ready),
		}
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
}

// deploymentCondition returns the condition, keeping its times when old already has it with
// the same status and reason, so unchanged status stays byte-for-byte equal.
func deploymentCondition(old appsv1.DeploymentStatus, typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	t := metav1.NewTime(now.Truncate(time.Second))
	c := appsv1.DeploymentCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastUpdateTime: t, LastTransitionTime: t}
	for _, o := range old.Conditions {
		if o.Type != typ || o.Status != status {
			continue
		}
		c.LastTransitionTime = o.LastTransitionTime
		if o.Reason == reason && o.Message == msg {
			c.LastUpdateTime = o.LastUpdateTime
		}
	}
	return c
}

// runTicks calls tick now and then every interval (default one second) on clk until ctx is
// done.
func runTicks(ctx context.Context, clk clock.WithTicker, interval time.Duration, tick func()) error {
	if interval <= 0 {
		interval = time.Second
	}
	tick()
	t := clk.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			tick()
		}
	}
}
