package status

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/fedkit/fedkit/federation"
)

// clusterInfo is what the monitor reads about a member besides its health.
type clusterInfo struct {
	version             string
	region              string
	zones               []string
	capacity, available corev1.ResourceList
}

// summarize computes a member's topology and resources from its nodes and pods. It is pure.
//
//   - capacity is the total of status.allocatable (cpu, memory, pods and any other resource)
//     over the nodes that can take a workload (see schedulable): what the cluster can run
//     at most.
//   - available is capacity minus the requests of the pods that are not finished (phase
//     neither Succeeded nor Failed) and are bound to one of those nodes or not bound yet
//     (they are about to take room), each pod counting one "pods"; never below zero. It is
//     the headroom: what more can be scheduled. The scheduler's capacity strategy reads it
//     (scheduler.ReplicaCapacity), so it must keep this meaning.
//   - region is the most common topology.kubernetes.io/region label of all nodes (ties:
//     the first in order), zones the sorted set of their topology.kubernetes.io/zone labels.
func summarize(nodes []corev1.Node, pods []corev1.Pod) (region string, zones []string, capacity, available corev1.ResourceList) {
	capacity = corev1.ResourceList{}
	counted := map[string]bool{}
	regions := map[string]int{}
	for i := range nodes {
		n := &nodes[i]
		if r := n.Labels[federation.RegionLabel]; r != "" {
			regions[r]++
		}
		if z := n.Labels[federation.ZoneLabel]; z != "" && !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
		if !schedulable(n) {
			continue
		}
		counted[n.Name] = true
		add(capacity, n.Status.Allocatable)
	}
	slices.Sort(zones)
	best := 0
	for r, n := range regions {
		if n > best || (n == best && r < region) {
			region, best = r, n
		}
	}

	used := corev1.ResourceList{}
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Spec.NodeName != "" && !counted[p.Spec.NodeName] {
			continue
		}
		add(used, podRequests(&p.Spec))
		v := used[corev1.ResourcePods]
		v.Add(*resource.NewQuantity(1, resource.DecimalSI))
		used[corev1.ResourcePods] = v
	}
	available = corev1.ResourceList{}
	for name, q := range capacity {
		left := q.DeepCopy()
		if u, ok := used[name]; ok {
			left.Sub(u)
		}
		if left.Sign() < 0 {
			left = *resource.NewQuantity(0, q.Format)
		}
		available[name] = left
	}
	return region, zones, capacity, available
}

// schedulable reports whether a workload can be scheduled to n: it is Ready, not cordoned
// (spec.unschedulable), and has no NoSchedule or NoExecute taint. Control-plane nodes
// (node-role.kubernetes.io/control-plane:NoSchedule) and nodes the node controller marked
// not ready or unreachable are left out; a workload that tolerates such a taint is rare
// enough that counting the node would overstate what fits. PreferNoSchedule is a preference
// and does not leave a node out.
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable || !nodeReady(n) {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	return true
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podRequests is what a pod holds on its node, as the kube-scheduler counts it
// (k8s.io/component-helpers/resource.PodRequests, the scheduler's own package, also used for a
// replica's requests by package scheduler): its containers' requests plus its restartable
// (sidecar) init containers', or the largest need during initialisation where that is larger,
// pod-level requests where set, plus the pod overhead. The pod's status is not read (the
// monitor decodes only its spec and phase), so a pod being resized in place counts by its
// spec.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	return resourcehelper.PodRequests(&corev1.Pod{Spec: *spec}, resourcehelper.PodResourcesOptions{})
}

// add adds b to a, resource by resource.
func add(a, b corev1.ResourceList) {
	for name, q := range b {
		v, ok := a[name]
		if !ok {
			a[name] = q.DeepCopy()
			continue
		}
		v.Add(q)
		a[name] = v
	}
}

// sameResources compares two resource lists by value ("1000m" equals "1").
func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		v, ok := b[name]
		if !ok || q.Cmp(v) != 0 {
			return false
		}
	}
	return true
}
