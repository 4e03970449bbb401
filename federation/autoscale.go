package federation

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Defaults of [Autoscale], an HPA's.
const (
	// DefaultAutoscaleMinReplicas is spec.autoscale.minReplicas when absent.
	DefaultAutoscaleMinReplicas int32 = 1
	// DefaultCPUUtilization is the average cpu utilization (percent of requests) of the
	// metric spec.autoscale.metrics defaults to.
	DefaultCPUUtilization int32 = 80
	// DefaultScaleDownStabilizationSeconds is the scale-down stabilization window when
	// absent: the kube-controller-manager's --horizontal-pod-autoscaler-downscale-stabilization.
	DefaultScaleDownStabilizationSeconds int32 = 300
	// DefaultScaleUpStabilizationSeconds is the scale-up stabilization window when absent.
	DefaultScaleUpStabilizationSeconds int32 = 0
	// DefaultTolerance is how far the ratio of a metric to its target may be from 1 before
	// the total changes: the kube-controller-manager's --horizontal-pod-autoscaler-tolerance.
	DefaultTolerance = 0.1
)

// FleetTotal returns the total the scheduler divides for rsp. It is spec.totalReplicas, unless
// spec.autoscale is set: then it is the autoscaler's status.autoscale.desiredReplicas (in
// Central mode, once decided) or else spec.totalReplicas, held within spec.autoscale's
// minReplicas and maxReplicas. Bounds that contradict each other (which validation refuses)
// hold nothing. It reads rsp as given: defaulting is the caller's.
func FleetTotal(rsp *ReplicaSchedulingPreference) int64 {
	a := rsp.Spec.Autoscale
	if a == nil {
		return rsp.Spec.TotalReplicas
	}
	total := rsp.Spec.TotalReplicas
	if st := rsp.Status.Autoscale; st != nil && st.DesiredReplicas != nil && a.Mode != AutoscaleDistributed {
		total = int64(*st.DesiredReplicas)
	}
	lo := int64(DefaultAutoscaleMinReplicas)
	if a.MinReplicas != nil {
		lo = int64(*a.MinReplicas)
	}
	hi := int64(a.MaxReplicas)
	if lo < 0 || hi < lo {
		return total
	}
	return min(max(total, lo), hi)
}

// DefaultAutoscale fills in absent fields of a in place, as the API server defaults an HPA:
// mode Central, minReplicas 1, the cpu metric at 80% when there is none, and every field of
// both directions' behavior (scale up: no stabilization, 4 pods or 100% per 15 seconds,
// whichever is more; scale down: a 300 second window, 100% per 15 seconds). The tolerance is
// left absent: [DefaultTolerance] applies. It is idempotent; a nil a is left alone.
func DefaultAutoscale(a *Autoscale) {
	if a == nil {
		return
	}
	if a.Mode == "" {
		a.Mode = AutoscaleCentral
	}
	if a.MinReplicas == nil {
		m := DefaultAutoscaleMinReplicas
		a.MinReplicas = &m
	}
	if len(a.Metrics) == 0 {
		u := DefaultCPUUtilization
		a.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u},
			},
		}}
	}
	if a.Behavior == nil {
		a.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	}
	a.Behavior.ScaleUp = defaultRules(a.Behavior.ScaleUp, DefaultScaleUpStabilizationSeconds,
		autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
		autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15})
	a.Behavior.ScaleDown = defaultRules(a.Behavior.ScaleDown, DefaultScaleDownStabilizationSeconds,
		autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15})
}

// defaultRules fills in what r leaves out: the window, selectPolicy Max, the policies.
func defaultRules(r *autoscalingv2.HPAScalingRules, window int32, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	if r == nil {
		r = &autoscalingv2.HPAScalingRules{}
	}
	if r.StabilizationWindowSeconds == nil {
		w := window
		r.StabilizationWindowSeconds = &w
	}
	if r.SelectPolicy == nil {
		p := autoscalingv2.MaxChangePolicySelect
		r.SelectPolicy = &p
	}
	if r.Policies == nil {
		r.Policies = policies
	}
	return r
}
