package recommend

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Sample is what one member cluster reported about the workload at one moment: its pods, their
// resource usage and metrics, and its object and external metrics. A MetricsSource (package autoscale) gathers
// one per scheduled cluster; [Recommend] reads them. It is plain data: build it by hand in a
// test, or from any other source (the pull agent's reports).
type Sample struct {
	// Cluster is the member's name.
	Cluster string

	// ClusterReady reports whether the Cluster's Ready condition is True. Data from a cluster
	// that is not Ready is stale however recently it was read (status's rule).
	ClusterReady bool

	// Read is when the member was read successfully; zero when it was not (the sample is
	// stale).
	Read time.Time

	// Replicas is what the member's workload runs (status.replicas), or, for a member that
	// could not be read, what it last ran: the count a stale member's share holds at.
	Replicas int32

	// Pods are the workload's pods (its selector's), with their usage and metrics.
	Pods []Pod

	// Values are the Object and External metrics the member reported, by [MetricKey].
	Values map[string]Value

	// Failed says, by [MetricKey], why the member could not report a metric: the API not
	// served, an adapter's error. Such a member's share holds for that metric, as a stale
	// member's does for every metric.
	Failed map[string]string

	// HPA is the member's HorizontalPodAutoscaler of the workload (Distributed mode); nil
	// when it has none or was not asked.
	HPA *MemberHPA

	// Message says why the member could not be read ("" when it was).
	Message string
}

// Pod is one pod of the workload in a member.
type Pod struct {
	// Name is the pod's name (unique within its cluster).
	Name string

	// Phase is status.phase.
	Phase corev1.PodPhase

	// Deleting reports a deletionTimestamp.
	Deleting bool

	// Ready is the status of the Ready condition ("" when the pod has none), ReadySince its
	// lastTransitionTime.
	Ready      corev1.ConditionStatus
	ReadySince time.Time

	// Started is status.startTime; zero before the kubelet started the pod.
	Started time.Time

	// Containers are the pod's containers (restartable init containers included), with
	// their requests.
	Containers []Container

	// Usage is the pod's resource usage as metrics.k8s.io reported it; nil when it reported
	// none for the pod (a missing pod).
	Usage *Usage

	// Values are the pod's Pods metrics (custom.metrics.k8s.io), in milli-units, by
	// [MetricKey]; a metric the adapter did not report for the pod is missing for it.
	Values map[string]int64
}

// Container is one container of a pod and what it requests, in milli-units.
type Container struct {
	Name     string
	Requests map[corev1.ResourceName]int64
}

// Usage is one PodMetrics: the usage of each container, in milli-units, measured over Window
// up to Timestamp.
type Usage struct {
	Timestamp  time.Time
	Window     time.Duration
	Containers map[string]map[corev1.ResourceName]int64
}

// Value is one Object or External metric value, in milli-units.
type Value struct {
	Milli     int64
	Timestamp time.Time
}

// ResourceMetricsKey is the [MetricKey] of every Resource and ContainerResource metric: one
// API (metrics.k8s.io) serves them all, and a member that does not serve it reports none.
const ResourceMetricsKey = "metrics.k8s.io"

// MetricKey names the data of metric m in a [Sample]: [ResourceMetricsKey] for Resource and
// ContainerResource metrics, "pods/NAME", "object/KIND/NAME/METRIC" and "external/NAME" for
// the others, each followed by "?SELECTOR" when the metric has a selector. Two metrics with
// one key read the same data.
func MetricKey(m autoscalingv2.MetricSpec) string {
	switch m.Type {
	case autoscalingv2.PodsMetricSourceType:
		if m.Pods != nil {
			return "pods/" + identifier(m.Pods.Metric)
		}
	case autoscalingv2.ObjectMetricSourceType:
		if o := m.Object; o != nil {
			return fmt.Sprintf("object/%s/%s/%s", o.DescribedObject.Kind, o.DescribedObject.Name, identifier(o.Metric))
		}
	case autoscalingv2.ExternalMetricSourceType:
		if m.External != nil {
			return "external/" + identifier(m.External.Metric)
		}
	}
	return ResourceMetricsKey
}

// identifier is a metric's name with its selector.
func identifier(id autoscalingv2.MetricIdentifier) string {
	if id.Selector == nil {
		return id.Name
	}
	return id.Name + "?" + metav1.FormatLabelSelector(id.Selector)
}

// MemberHPA is what a member's HorizontalPodAutoscaler of the workload reports (Distributed
// mode).
type MemberHPA struct {
	// Min and Max are its spec's bounds.
	Min, Max int32
	// Current and Desired are its status.currentReplicas and desiredReplicas.
	Current, Desired int32
	// Active is its ScalingActive condition; Message that condition's message when False.
	Active  bool
	Message string
}
