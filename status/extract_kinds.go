package status

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The built-in extractors follow what `kubectl rollout status` waits for, so "ready" here means
// what an operator would call a finished rollout: the controller has seen the latest spec
// (status.observedGeneration caught up with metadata.generation), every desired replica runs
// the latest template, and all of them are available.
//
// Replicas is the member's desired count, spec.replicas as the member has it (what sync
// pushed from the schedule, or what a member autoscaler set with spec.retainReplicas), the
// "3" of kubectl's READY 2/3; the ready, available and updated counts are the observed
// progress towards it. The desired count is what the scheduler reads as a cluster's current
// replicas. status.replicas, the pods that exist, would lag the schedule by the time pods
// take to start and stop (and count surge pods during a rollout): a scheduler reading it
// right after moving replicas would see the old numbers and move them back, every rebalance
// period.

// behind returns the "not up to date" message when the controller has not observed the
// object's latest generation, else "". An observedGeneration absent (or 0) means no
// controller has looked at the object at all, which it says: a cluster without controllers
// (an API server alone) never gets further.
func behind(obj *unstructured.Unstructured, observed *int64) string {
	gen := obj.GetGeneration()
	og := int64(0)
	if observed != nil {
		og = *observed
	}
	switch {
	case gen > 0 && og == 0:
		return fmt.Sprintf("no controller has observed it: status.observedGeneration is absent at generation %d (does the cluster run its controllers, kube-controller-manager for built-in kinds?)", gen)
	case gen > 0 && og < gen:
		return fmt.Sprintf("observedGeneration %d behind generation %d", og, gen)
	}
	return ""
}

// workload reads the counts the replicated kinds share: status.readyReplicas,
// availableReplicas, updatedReplicas (when updated; a ReplicaSet has none) and
// observedGeneration, and spec.replicas (default 1) as the desired count in Replicas.
func (f *fields) workload(updated bool) (Observation, int64) {
	o := Observation{
		ReadyReplicas:     f.count("status", "readyReplicas"),
		AvailableReplicas: f.count("status", "availableReplicas"),
	}
	if updated {
		o.UpdatedReplicas = f.count("status", "updatedReplicas")
	}
	o.ObservedGeneration = f.optional("status", "observedGeneration")
	desired := f.desired()
	o.Replicas = &desired
	return o, desired
}

// DeploymentStatus extracts an apps/v1 Deployment: spec.replicas (default 1) as replicas,
// status.readyReplicas, availableReplicas, updatedReplicas and observedGeneration. It is ready when the controller
// has observed the latest generation, every desired replica (spec.replicas, default 1) is
// updated and available, and no old replica is left; a Progressing condition with reason
// ProgressDeadlineExceeded makes it not ready whatever the counts. While it is not ready, it is
// Progressing (Observation.Progressing) when its controller says its rollout progresses
// within progressDeadlineSeconds with its availability held: conditions Progressing True
// (not ProgressDeadlineExceeded) and Available True.
func DeploymentStatus(obj *unstructured.Unstructured) (Observation, error) {
	f := fields{obj: obj.Object}
	pods := f.count("status", "replicas")
	o, desired := f.workload(true)
	if f.err != nil {
		return Observation{}, f.err
	}
	progressing := condition(obj.Object, "Progressing")
	switch {
	case behind(obj, o.ObservedGeneration) != "":
		o.Message = behind(obj, o.ObservedGeneration)
	case progressing != nil && str(progressing, "reason") == "ProgressDeadlineExceeded":
		o.Message = "progress deadline exceeded"
	case *o.UpdatedReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d replicas updated", *o.UpdatedReplicas, desired)
	case *pods > *o.UpdatedReplicas:
		o.Message = fmt.Sprintf("%d old replicas pending termination", *pods-*o.UpdatedReplicas)
	case *o.AvailableReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d replicas available", *o.AvailableReplicas, desired)
	default:
		o.Ready = true
	}
	o.Progressing = !o.Ready && rolloutProgresses(obj.Object)
	return o, nil
}

// rolloutProgresses reports whether a Deployment's controller says its rollout progresses
// within its progressDeadlineSeconds (condition Progressing True, with a reason other than
// ProgressDeadlineExceeded) with its availability held (condition Available True: at least
// replicas minus maxUnavailable are available).
func rolloutProgresses(obj map[string]any) bool {
	p, a := condition(obj, "Progressing"), condition(obj, "Available")
	return p != nil && a != nil && str(p, "status") == "True" && str(p, "reason") != "ProgressDeadlineExceeded" && str(a, "status") == "True"
}

// ReplicaSetStatus extracts an apps/v1 ReplicaSet: spec.replicas (default 1) as replicas,
// status.readyReplicas, availableReplicas and observedGeneration (a ReplicaSet has no updated count: every replica
// runs its only template). It is ready when the controller has observed the latest
// generation and exactly the desired replicas exist, all available.
func ReplicaSetStatus(obj *unstructured.Unstructured) (Observation, error) {
	f := fields{obj: obj.Object}
	pods := f.count("status", "replicas")
	o, desired := f.workload(false)
	if f.err != nil {
		return Observation{}, f.err
	}
	switch {
	case behind(obj, o.ObservedGeneration) != "":
		o.Message = behind(obj, o.ObservedGeneration)
	case *pods != desired:
		o.Message = fmt.Sprintf("%d replicas, %d desired", *pods, desired)
	case *o.AvailableReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d replicas available", *o.AvailableReplicas, desired)
	default:
		o.Ready = true
	}
	return o, nil
}

// StatefulSetStatus extracts an apps/v1 StatefulSet: spec.replicas (default 1) as replicas,
// status.readyReplicas, availableReplicas, updatedReplicas and observedGeneration. It is ready when the controller
// has observed the latest generation and the desired replicas are ready and available; with
// the RollingUpdate strategy the replicas at or above the partition must also be updated,
// and without a partition the current revision must be the update revision.
func StatefulSetStatus(obj *unstructured.Unstructured) (Observation, error) {
	f := fields{obj: obj.Object}
	o, desired := f.workload(true)
	partition, _ := f.int("spec", "updateStrategy", "rollingUpdate", "partition")
	if f.err != nil {
		return Observation{}, f.err
	}
	strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "updateStrategy", "type")
	rolling := strategy != "OnDelete"
	current, _, _ := unstructured.NestedString(obj.Object, "status", "currentRevision")
	update, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision")
	switch {
	case behind(obj, o.ObservedGeneration) != "":
		o.Message = behind(obj, o.ObservedGeneration)
	case rolling && *o.UpdatedReplicas < desired-max(partition, 0):
		o.Message = fmt.Sprintf("%d of %d replicas updated", *o.UpdatedReplicas, desired-max(partition, 0))
	case rolling && partition <= 0 && current != "" && update != "" && current != update:
		o.Message = fmt.Sprintf("revision %s still rolling out to %s", current, update)
	case *o.ReadyReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d replicas ready", *o.ReadyReplicas, desired)
	case *o.AvailableReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d replicas available", *o.AvailableReplicas, desired)
	default:
		o.Ready = true
	}
	return o, nil
}

// DaemonSetStatus extracts an apps/v1 DaemonSet: status.desiredNumberScheduled as replicas,
// numberReady as ready, numberAvailable as available, updatedNumberScheduled as updated, and
// observedGeneration. It is ready when the controller has observed the latest generation and
// every node that should run a pod runs an updated, available one.
func DaemonSetStatus(obj *unstructured.Unstructured) (Observation, error) {
	f := fields{obj: obj.Object}
	o := Observation{
		Replicas:           f.count("status", "desiredNumberScheduled"),
		ReadyReplicas:      f.count("status", "numberReady"),
		AvailableReplicas:  f.count("status", "numberAvailable"),
		UpdatedReplicas:    f.count("status", "updatedNumberScheduled"),
		ObservedGeneration: f.optional("status", "observedGeneration"),
	}
	if f.err != nil {
		return Observation{}, f.err
	}
	desired := *o.Replicas
	switch {
	case behind(obj, o.ObservedGeneration) != "":
		o.Message = behind(obj, o.ObservedGeneration)
	case *o.UpdatedReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d nodes updated", *o.UpdatedReplicas, desired)
	case *o.AvailableReplicas < desired:
		o.Message = fmt.Sprintf("%d of %d nodes available", *o.AvailableReplicas, desired)
	default:
		o.Ready = true
	}
	return o, nil
}

// JobStatus extracts a batch/v1 Job into Remote: active, succeeded and failed pod counts and
// complete (its Complete condition is True). A Job has no replica counts. It is ready once
// complete; a Failed condition, or a Job still running, is not ready.
func JobStatus(obj *unstructured.Unstructured) (Observation, error) {
	f := fields{obj: obj.Object}
	active, _ := f.int("status", "active")
	succeeded, _ := f.int("status", "succeeded")
	failed, _ := f.int("status", "failed")
	if f.err != nil {
		return Observation{}, f.err
	}
	complete := condition(obj.Object, "Complete")
	failedCond := condition(obj.Object, "Failed")
	o := Observation{Remote: map[string]any{
		"active":    active,
		"succeeded": succeeded,
		"failed":    failed,
		"complete":  complete != nil && str(complete, "status") == "True",
	}}
	switch {
	case o.Remote["complete"] == true:
		o.Ready = true
	case failedCond != nil && str(failedCond, "status") == "True":
		o.Message = "failed"
		if r := str(failedCond, "reason"); r != "" {
			o.Message += ": " + r
		}
	default:
		o.Message = fmt.Sprintf("running: %d active, %d succeeded, %d failed", active, succeeded, failed)
	}
	return o, nil
}

// ServiceStatus extracts a core/v1 Service: its status.loadBalancer into Remote when the
// load balancer has an ingress. A Service of type LoadBalancer is ready once it has an
// ingress; any other Service is ready as soon as it exists.
func ServiceStatus(obj *unstructured.Unstructured) (Observation, error) {
	lb, ok, err := unstructured.NestedFieldNoCopy(obj.Object, "status", "loadBalancer")
	var ingress []any
	if err == nil && ok && lb != nil {
		m, isMap := lb.(map[string]any)
		if !isMap {
			return Observation{}, fmt.Errorf("%w: status.loadBalancer: want an object, got %s", ErrInvalidMemberStatus, describe(lb))
		}
		if raw, present := m["ingress"]; present && raw != nil {
			if ingress, ok = raw.([]any); !ok {
				return Observation{}, fmt.Errorf("%w: status.loadBalancer.ingress: want an array, got %s", ErrInvalidMemberStatus, describe(raw))
			}
		}
	}
	o := Observation{Ready: true}
	if len(ingress) > 0 {
		o.Remote = map[string]any{"loadBalancer": copyJSON(lb)}
	}
	typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	if strings.EqualFold(typ, "LoadBalancer") && len(ingress) == 0 {
		o.Ready, o.Message = false, "waiting for a load-balancer ingress"
	}
	return o, nil
}

// GenericStatus reads any other kind: its whole status goes into Remote (the Collector keeps
// only the conditions when it is too large), integer status.replicas, readyReplicas,
// availableReplicas, updatedReplicas and observedGeneration are copied when present (custom
// workloads often have them; other types there are left out, as their schema is unknown).
// It is ready when the controller, if it reports an observedGeneration, has caught up, and
// the Ready condition, else the Available condition, if there is one, is True. A kind
// without status (a ConfigMap) is ready as soon as it exists.
func GenericStatus(obj *unstructured.Unstructured) (Observation, error) {
	f := fields{obj: obj.Object}
	o := Observation{
		Replicas:           f.optional("status", "replicas"),
		ReadyReplicas:      f.optional("status", "readyReplicas"),
		AvailableReplicas:  f.optional("status", "availableReplicas"),
		UpdatedReplicas:    f.optional("status", "updatedReplicas"),
		ObservedGeneration: f.optional("status", "observedGeneration"),
	}
	// The schema is unknown: a field of another type is simply not a count (f.err is ignored).
	switch st := obj.Object["status"].(type) {
	case nil:
	case map[string]any:
		if len(st) > 0 {
			o.Remote = copyMap(st)
		}
	default:
		o.Remote = map[string]any{"status": copyJSON(st)}
	}
	o.Ready = true
	if o.ObservedGeneration != nil {
		if msg := behind(obj, o.ObservedGeneration); msg != "" {
			o.Ready, o.Message = false, msg
			return o, nil
		}
	}
	o.Ready, o.Message = conditionsReady(obj)
	return o, nil
}

// conditionsReady is the common shape's readiness by conditions: the Ready condition, else
// the Available condition, must be True when there is one; without either, ready.
func conditionsReady(obj *unstructured.Unstructured) (bool, string) {
	for _, t := range []string{"Ready", "Available"} {
		c := condition(obj.Object, t)
		if c == nil {
			continue
		}
		if s := str(c, "status"); s != "True" {
			msg := fmt.Sprintf("condition %s is %s", t, cmp.Or(s, "empty"))
			if r := str(c, "reason"); r != "" {
				msg += " (" + r + ")"
			}
			return false, msg
		}
		return true, ""
	}
	return true, ""
}
