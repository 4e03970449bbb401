package federation

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Autoscale scales a ReplicaSchedulingPreference's total with the load its members report,
// as a HorizontalPodAutoscaler scales a Deployment. It carries the autoscaling/v2 spec: the
// fleet's minReplicas and maxReplicas, metrics and behavior.
//
// It is a block of the preference rather than a kind of its own: the preference already says
// how many replicas run and how they are divided (per-cluster minReplicas, maxReplicas and
// weights), so autoscaling changes one number, the total, next to the rules that divide it.
// One object holds one total, with one writer for it (the autoscaler, in status), and the
// bounds of the fleet and of each cluster are checked together. Package autoscale explains
// the choice against a FederatedHPA kind (Karmada's) in its documentation.
//
// +kubebuilder:validation:XValidation:rule="self.maxReplicas >= (has(self.minReplicas) ? self.minReplicas : 1)",message="maxReplicas must not be less than minReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas > 0 || (has(self.metrics) && self.metrics.exists(m, m.type == 'Object' || m.type == 'External'))",message="minReplicas 0 needs an Object or External metric: pods that do not run report nothing"
type Autoscale struct {
	// Mode says who computes the replicas: Central (the default) computes the fleet's total
	// from the members' metrics and lets the scheduler divide it; Distributed runs a
	// HorizontalPodAutoscaler in every member with its share of the fleet's bounds, keeps
	// the members' replicas (the federated object needs spec.retainReplicas) and shows
	// their sum.
	// +optional
	Mode AutoscaleMode `json:"mode,omitempty"`

	// MinReplicas is the fleet's lower bound (default 1). 0 is allowed with an Object or
	// External metric, which can report load while no pod runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the fleet's upper bound.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// Metrics are the autoscaling/v2 metric specifications. The fleet's total is the highest
	// of the totals they ask for, as for an HPA. Default: cpu at 80% of requests.
	// Resource and ContainerResource metrics come from the members' metrics.k8s.io, Pods and
	// Object metrics from their custom.metrics.k8s.io, External from external.metrics.k8s.io.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// Behavior bounds the rate of change, as an HPA's: scale-up and scale-down policies and
	// stabilization windows. Default: scale up by 4 pods or 100% per 15 seconds, whichever
	// is more, at once; scale down by up to 100% per 15 seconds, to the highest
	// recommendation of the last 300 seconds.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// AutoscaleMode is [Autoscale].Mode. "" means AutoscaleCentral.
//
// +kubebuilder:validation:Enum="";Central;Distributed
type AutoscaleMode string

const (
	// AutoscaleCentral computes the fleet's total from the members' metrics and writes it to
	// status.autoscale.desiredReplicas; the scheduler divides it. The default.
	AutoscaleCentral AutoscaleMode = "Central"

	// AutoscaleDistributed gives each member a HorizontalPodAutoscaler of its own, bounded by
	// its share of the fleet's minReplicas and maxReplicas; the members' replicas are kept
	// (spec.retainReplicas on the federated object) and their sum shown.
	AutoscaleDistributed AutoscaleMode = "Distributed"
)

// AutoscaleModes returns the modes, default first: the values validation accepts besides "".
func AutoscaleModes() []AutoscaleMode { return []AutoscaleMode{AutoscaleCentral, AutoscaleDistributed} }

// ReplicaSchedulingPreferenceStatus is what the loops observed about a preference.
type ReplicaSchedulingPreferenceStatus struct {
	// Autoscale is the autoscaler's status: absent while spec.autoscale is.
	// +optional
	Autoscale *AutoscaleStatus `json:"autoscale,omitempty"`
}

// AutoscaleStatus is the autoscaler's account of a preference, in the words of an HPA's
// status.
type AutoscaleStatus struct {
	// ObservedGeneration is the preference's generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// DesiredReplicas is the fleet's total the autoscaler decided (Central mode): the
	// scheduler divides it, within spec.autoscale's bounds. Absent before the first
	// decision, when the scheduler divides spec.totalReplicas within those bounds.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// CurrentReplicas is the sum of the replicas the members ran at the last read: their
	// workloads' status.replicas (Central) or their HorizontalPodAutoscalers' (Distributed).
	// +optional
	CurrentReplicas int32 `json:"currentReplicas,omitempty"`

	// LastScaleTime is when DesiredReplicas last changed.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`

	// CurrentMetrics are the fleet's values of spec.autoscale.metrics at the last
	// recommendation, in the same order, as an HPA's status.currentMetrics.
	// +optional
	// +listType=atomic
	CurrentMetrics []autoscalingv2.MetricStatus `json:"currentMetrics,omitempty"`

	// Clusters are the members the autoscaler read, with what each contributed and, in
	// Distributed mode, the bounds of its HorizontalPodAutoscaler.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []AutoscaleCluster `json:"clusters,omitempty"`

	// Conditions are an HPA's: ScalingActive (metrics could be computed: the message says
	// how the total came about, "12 -> 18: cpu 91% of 60% over 14 ready pods in 3 of 3
	// clusters"), AbleToScale (the total could be written, or why it waits: stabilization)
	// and ScalingLimited (a bound or a rate policy held the total).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AutoscaleCluster is one member in [AutoscaleStatus].Clusters.
type AutoscaleCluster struct {
	// Name is the Cluster's.
	Name string `json:"name"`

	// CurrentReplicas is what the member ran at its last read.
	// +optional
	CurrentReplicas *int32 `json:"currentReplicas,omitempty"`

	// MinReplicas and MaxReplicas are its HorizontalPodAutoscaler's bounds (Distributed).
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// DesiredReplicas is what its HorizontalPodAutoscaler asks for (Distributed).
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// Stale is true when the member's data was left out: its Cluster is not Ready or it was
	// not read within the freshness window.
	// +optional
	Stale bool `json:"stale,omitempty"`

	// Message says why a member's data was left out or what it could not report.
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types of [AutoscaleStatus], an HPA's.
const (
	// ConditionScalingActive: the autoscaler could compute a total from the metrics.
	ConditionScalingActive = string(autoscalingv2.ScalingActive)
	// ConditionAbleToScale: the autoscaler can write the total (or says what it waits for).
	ConditionAbleToScale = string(autoscalingv2.AbleToScale)
	// ConditionScalingLimited: a bound or a rate policy changed the total the metrics asked
	// for.
	ConditionScalingLimited = string(autoscalingv2.ScalingLimited)
)
