package autoscale

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/fedkit/fedkit/autoscale/recommend"
)

// The autoscaler's decisions live in package autoscale/recommend, pure and linking no loop,
// so that package preview calls them without the loop. These names keep them where users
// first found them; both spell the same types and functions.

// Samples: what a [MetricsSource] gathers of one member.
type (
	Sample    = recommend.Sample
	Pod       = recommend.Pod
	Container = recommend.Container
	Usage     = recommend.Usage
	Value     = recommend.Value
	MemberHPA = recommend.MemberHPA
)

// The fleet's recommendation, its stabilization and the decision that puts both together.
type (
	Input          = recommend.Input
	Recommendation = recommend.Recommendation
	MetricResult   = recommend.MetricResult
	ClusterResult  = recommend.ClusterResult
	History        = recommend.History
	Recommended    = recommend.Recommended
	ScaleEvent     = recommend.ScaleEvent
	StabilizeInput = recommend.StabilizeInput
	Stabilized     = recommend.Stabilized
	DecideInput    = recommend.DecideInput
	Decision       = recommend.Decision
)

// ResourceMetricsKey is [recommend.ResourceMetricsKey].
const ResourceMetricsKey = recommend.ResourceMetricsKey

// Input's defaults ([recommend.DefaultCPUInitializationPeriod] and
// [recommend.DefaultInitialReadinessDelay]).
const (
	DefaultCPUInitializationPeriod = recommend.DefaultCPUInitializationPeriod
	DefaultInitialReadinessDelay   = recommend.DefaultInitialReadinessDelay
)

// The reasons of the conditions a [Decision] carries (package recommend documents each).
const (
	ReasonValidMetricFound    = recommend.ReasonValidMetricFound
	ReasonNoQuorum            = recommend.ReasonNoQuorum
	ReasonInvalidMetrics      = recommend.ReasonInvalidMetrics
	ReasonNoClusters          = recommend.ReasonNoClusters
	ReasonReadyForNewScale    = recommend.ReasonReadyForNewScale
	ReasonScaleUpStabilized   = recommend.ReasonScaleUpStabilized
	ReasonScaleDownStabilized = recommend.ReasonScaleDownStabilized
	ReasonDesiredWithinRange  = recommend.ReasonDesiredWithinRange
	ReasonTooManyReplicas     = recommend.ReasonTooManyReplicas
	ReasonTooFewReplicas      = recommend.ReasonTooFewReplicas
	ReasonScaleUpLimit        = recommend.ReasonScaleUpLimit
	ReasonScaleDownLimit      = recommend.ReasonScaleDownLimit
	ReasonScalingDisabled     = recommend.ReasonScalingDisabled
)

// MetricKey is [recommend.MetricKey].
func MetricKey(m autoscalingv2.MetricSpec) string { return recommend.MetricKey(m) }

// Recommend is [recommend.Recommend].
func Recommend(in Input) Recommendation { return recommend.Recommend(in) }

// Stabilize is [recommend.Stabilize].
func Stabilize(in StabilizeInput) Stabilized { return recommend.Stabilize(in) }

// Decide is [recommend.Decide]; the loop calls it.
func Decide(in DecideInput) Decision { return recommend.Decide(in) }

// Explain is [recommend.Explain].
func Explain(in DecideInput) (Decision, string) { return recommend.Explain(in) }
