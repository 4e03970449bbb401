package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
)

// PodRequests returns what one replica of a workload template asks for: the sum of its
// containers' resource requests, or the largest init container's request where that is
// larger (the rule the kube-scheduler uses), plus one "pods". template is a federated
// object's spec.template; the pod spec is read from spec.template.spec. A template without a
// pod spec asks for one pod only.
func PodRequests(template map[string]interface{}) (corev1.ResourceList, error) {
	out := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	raw, ok, _ := unstructured.NestedFieldNoCopy(template, "spec", "template", "spec")
	if !ok {
		return out, nil
	}
	podSpec, ok := raw.(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("%w: spec.template.spec.template.spec: not an object", ErrInvalidRequest)
	}
	var pod corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(podSpec, &pod); err != nil {
		return nil, fmt.Errorf("%w: spec.template.spec.template.spec: %v", ErrInvalidRequest, err)
	}
	sum := corev1.ResourceList{}
	for _, c := range pod.Containers {
		for name, q := range c.Resources.Requests {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	for _, c := range pod.InitContainers {
		for name, q := range c.Resources.Requests {
			if v, ok := sum[name]; !ok || q.Cmp(v) > 0 {
				sum[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range sum {
		if name != corev1.ResourcePods {
			out[name] = q
		}
	}
	return out, nil
}

// ReplicaCapacity returns how many more replicas asking perReplica each fit in the cluster's
// headroom (status.available, written by the cluster monitor): the smallest quotient over the
// resources both name. It returns nil (unknown, unbounded) when the cluster reports no
// headroom for any resource a replica asks for.
func ReplicaCapacity(c *federation.Cluster, perReplica corev1.ResourceList) *int64 {
	var best *int64
	for name, need := range perReplica {
		have, ok := c.Status.Available[name]
		if !ok || need.Sign() <= 0 {
			continue
		}
		n := int64(0)
		if have.Sign() > 0 {
			n = have.MilliValue() / need.MilliValue()
		}
		if best == nil || n < *best {
			best = &n
		}
	}
	return best
}
