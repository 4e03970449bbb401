package scheduler

import (
	"fmt"
	"math"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/fedkit/fedkit/federation"
)

// A cluster's capacity for one object, in replicas, is built from two numbers that must not be
// confused:
//
//   - headroom: how many MORE replicas fit in the cluster's status.available, which the
//     cluster monitor computes as allocatable minus what running pods request. The
//     object's own running pods are among those, so headroom alone shrinks as the object's
//     pods start: a cluster its replicas fill has a headroom of 0.
//   - capacity (ClusterState.Capacity): how many of the object's replicas the cluster can
//     hold in all = headroom + the replicas the object runs there already. It stays the same
//     as pods start, so the schedule does too.
//
// The replicas "running there already" are the scheduler's current replicas (see
// currentReplicas): the status loop's fresh observation of the member's status.replicas,
// else the previous schedule. status.replicas counts the member's pods that exist, and those
// bound to nodes are exactly the ones status.available already subtracted, so each is counted
// once. Two approximations remain, and both err towards leaving replicas where they are
// rather than moving running replicas away:
//
//   - pods that stay Pending for lack of room are in status.replicas but consume no headroom,
//     so the cluster looks able to hold them (the member's readyReplicas stays below its
//     replicas, which the status loop reports);
//   - without a fresh observation the previous schedule stands in, and its replicas may not
//     have started yet, while the headroom still has room for them.
//
// readyReplicas would be the wrong number: it drops while pods start or roll (they hold their
// requests all the same), and the schedule would take replicas away from a full cluster on
// every rollout.

// podRequests returns what one replica of a workload template asks of a node, as the
// kube-scheduler computes it (k8s.io/component-helpers/resource.PodRequests): the containers
// summed, native sidecars (init containers with restartPolicy Always) added to them, the other
// init containers as their peak together with the sidecars started before them, pod-level
// requests where the pod sets them, and the pod overhead; plus one "pods". template is a
// federated object's spec.template; the pod spec is read from spec.template.spec. A template
// without a pod spec asks for one pod only. The error names the field that does not decode.
func podRequests(template map[string]any) (corev1.ResourceList, *field.Error) {
	out := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	raw, ok, _ := unstructured.NestedFieldNoCopy(template, "spec", "template", "spec")
	if !ok {
		return out, nil
	}
	path := specPath.Child("template", "spec", "template", "spec")
	podSpec, ok := raw.(map[string]any)
	if !ok {
		return nil, field.Invalid(path, raw, "must be a pod spec (an object)")
	}
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(podSpec, &pod.Spec); err != nil {
		return nil, field.Invalid(path, "", fmt.Sprintf("does not decode as a pod spec: %v", err))
	}
	for name, q := range resourcehelper.PodRequests(&pod, resourcehelper.PodResourcesOptions{}) {
		if name != corev1.ResourcePods {
			out[name] = q
		}
	}
	return out, nil
}

// headroomReplicas returns how many MORE replicas asking perReplica each fit in the cluster's
// headroom (status.available): the smallest quotient, rounded down, over the resources both
// name. It is exact for any quantity and saturates at math.MaxInt64 (petabytes of memory in
// milli-units overflow an int64). It returns nil (unknown, unbounded) when the cluster reports
// no headroom for any resource a replica asks for. A negative headroom (a cluster
// overcommitted) counts as none.
func headroomReplicas(c *federation.Cluster, perReplica corev1.ResourceList) *int64 {
	var best *int64
	for name, need := range perReplica {
		have, ok := c.Status.Available[name]
		if !ok || need.Sign() <= 0 {
			continue
		}
		n := int64(0)
		if have.Sign() > 0 {
			n = quotient(have, need)
		}
		if best == nil || n < *best {
			best = &n
		}
	}
	return best
}

// quotient returns floor(have/need) for positive quantities, saturated at math.MaxInt64.
// Quantities that are whole milli-units below 2^63/1000 (all of them, in practice) divide as
// int64 milli-values without allocating; the others exactly, as decimals.
func quotient(have, need resource.Quantity) int64 {
	if h, ok := exactMilli(have); ok {
		if n, ok := exactMilli(need); ok && n > 0 {
			return h / n
		}
	}
	q := new(inf.Dec).QuoRound(have.AsDec(), need.AsDec(), 0, inf.RoundDown) // scale 0: an integer
	if v, ok := q.Unscaled(); ok {
		return v
	}
	return math.MaxInt64 // beyond an int64
}

// exactMilli returns q in milli-units when that is exact and cannot overflow.
func exactMilli(q resource.Quantity) (int64, bool) {
	if q.CmpInt64(math.MaxInt64/1000) >= 0 {
		return 0, false // MilliValue would wrap around
	}
	m := q.MilliValue() // rounded up: exact only when q has no finer digits
	return m, resource.NewMilliQuantity(m, q.Format).Cmp(q) == 0
}

// milliValue returns ceil(q·1000) for a non-negative quantity, saturated at math.MaxInt64
// (resource.Quantity.MilliValue wraps around above about 9.2e15).
func milliValue(q resource.Quantity) int64 {
	if q.CmpInt64(math.MaxInt64/1000) < 0 {
		return q.MilliValue()
	}
	d := new(inf.Dec).Mul(q.AsDec(), inf.NewDec(1000, 0))
	d.Round(d, 0, inf.RoundCeil)
	if v, ok := d.Unscaled(); ok {
		return v
	}
	return math.MaxInt64
}

// capacityFor returns a cluster's capacity for the object (see the top of this file): its
// headroom plus the replicas the object runs there, or nil when the headroom is unknown.
func capacityFor(headroom *int64, running int64) *int64 {
	if headroom == nil {
		return nil
	}
	v := satAdd(*headroom, max(running, 0))
	return &v
}

// blockedCapacity returns capacity for a cluster where sync cannot write the object (its
// status entry's propagation reason, federation.PropagationBlocked: an object of the same name
// that is not the federation's, a refused write, the cluster out of reach) capped at running,
// what the object runs there already: such a cluster takes no new replicas. The reason is ""
// and capacity is returned as it is when the cluster is not blocked.
func blockedCapacity(capacity *int64, running int64, status []federation.MemberStatus, cluster string) (*int64, string) {
	for i := range status {
		m := &status[i]
		if m.Name != cluster || !federation.PropagationBlocked(m.Propagation) {
			continue
		}
		return heldAt(capacity, running), m.Propagation
	}
	return capacity, ""
}

// heldAt returns capacity capped at running, what the object runs in the cluster already: a
// cluster that takes no new replicas.
func heldAt(capacity *int64, running int64) *int64 {
	held := max(running, 0)
	if capacity != nil && *capacity < held {
		held = *capacity
	}
	return &held
}
