package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	kptr "k8s.io/utils/ptr"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestAutoscaleAdmissionCases checks Go validation against the table that autoscale's
// TestAutoscaleAdmissionOnRealServer checks the CRD against: the fields each preference has
// wrong, and that the CRD refuses nothing Go accepts.
func TestAutoscaleAdmissionCases(t *testing.T) {
	for _, tc := range fedtest.PolicyCases(t, "testdata/autoscale.yaml", "shop", "") {
		t.Run(tc.Name, func(t *testing.T) {
			rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(tc.Policy)
			require.NoError(t, err)
			federation.DefaultReplicaSchedulingPreference(rsp)
			var got []string
			for _, e := range federation.ValidateReplicaSchedulingPreference(rsp) {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.Invalid, got); diff != "" && !(len(tc.Invalid) == 0 && len(got) == 0) {
				t.Errorf("invalid fields (-want +got):\n%s", diff)
			}
			if tc.Refused && len(got) == 0 {
				t.Errorf("the CRD refuses %s, which fedkit's validation accepts", tc.Name)
			}
		})
	}
}

// TestFleetTotal: the total the scheduler divides is the preference's own without autoscale;
// with it, the autoscaler's decision (Central) or the preference's (before the first decision,
// and in Distributed mode), always within the fleet's bounds.
func TestFleetTotal(t *testing.T) {
	auto := func(mode federation.AutoscaleMode, lo *int32, hi int32) *federation.Autoscale {
		return &federation.Autoscale{Mode: mode, MinReplicas: lo, MaxReplicas: hi}
	}
	decided := func(n int32) federation.ReplicaSchedulingPreferenceStatus {
		return federation.ReplicaSchedulingPreferenceStatus{Autoscale: &federation.AutoscaleStatus{DesiredReplicas: &n}}
	}
	for _, tc := range []struct {
		name   string
		total  int64
		auto   *federation.Autoscale
		status federation.ReplicaSchedulingPreferenceStatus
		want   int64
	}{
		{name: "no autoscale", total: 9, want: 9},
		{name: "no autoscale ignores a status", total: 9, status: decided(20), want: 9},
		{name: "before the first decision", total: 9, auto: auto("", nil, 30), want: 9},
		{name: "spec total below the fleet min", total: 2, auto: auto("", kptr.To[int32](3), 30), want: 3},
		{name: "spec total below the default min", total: 0, auto: auto("", nil, 30), want: 1},
		{name: "spec total above the fleet max", total: 50, auto: auto("", nil, 30), want: 30},
		{name: "decided", total: 9, auto: auto(federation.AutoscaleCentral, nil, 30), status: decided(18), want: 18},
		{name: "decided above a max lowered since", total: 9, auto: auto("", nil, 12), status: decided(18), want: 12},
		{name: "distributed keeps the spec total", total: 9, auto: auto(federation.AutoscaleDistributed, nil, 30), status: decided(18), want: 9},
		{name: "contradicting bounds hold nothing", total: 9, auto: auto("", kptr.To[int32](10), 5), status: decided(18), want: 18},
		{name: "min zero", total: 0, auto: auto("", kptr.To[int32](0), 5), want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rsp := &federation.ReplicaSchedulingPreference{Status: tc.status}
			rsp.Spec.TotalReplicas, rsp.Spec.Autoscale = tc.total, tc.auto
			if got := federation.FleetTotal(rsp); got != tc.want {
				t.Errorf("FleetTotal() = %d; want %d", got, tc.want)
			}
		})
	}
}

// TestDefaultAutoscale: the defaults are an HPA's (the API server's and the controller
// manager's), filled into what the user left out only, and idempotent.
func TestDefaultAutoscale(t *testing.T) {
	a := &federation.Autoscale{MaxReplicas: 10, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}},
	}}
	federation.DefaultAutoscale(a)
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	want := &federation.Autoscale{
		Mode: federation.AutoscaleCentral, MinReplicas: kptr.To[int32](1), MaxReplicas: 10,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: kptr.To[int32](80)},
		}}},
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: kptr.To[int32](0), SelectPolicy: &maxPolicy, Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}, {Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
			}},
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: kptr.To[int32](300), SelectPolicy: &maxPolicy, Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60},
			}},
		},
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("DefaultAutoscale (-want +got):\n%s", diff)
	}
	again := a.DeepCopy()
	federation.DefaultAutoscale(again)
	if diff := cmp.Diff(a, again); diff != "" {
		t.Errorf("DefaultAutoscale is not idempotent (-want +got):\n%s", diff)
	}
}
