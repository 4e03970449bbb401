package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
)

// TestEffectiveFailover: the placement's failover wins over the preference's, and the result
// carries the defaults.
func TestEffectiveFailover(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	defaults := federation.Failover{PurgeMode: federation.PurgeGraciously, GracePeriodSeconds: i32(600)}
	rsp := &federation.ReplicaSchedulingPreference{Spec: federation.ReplicaSchedulingPreferenceSpec{
		Failover: &federation.Failover{PurgeMode: federation.PurgeNever, Application: &federation.ApplicationFailover{}}}}
	tests := []struct {
		name string
		p    federation.Placement
		rsp  *federation.ReplicaSchedulingPreference
		want federation.Failover
	}{
		{name: "none: the defaults", want: defaults},
		{name: "the preference's, defaulted", rsp: rsp, want: federation.Failover{PurgeMode: federation.PurgeNever, GracePeriodSeconds: i32(600),
			Application: &federation.ApplicationFailover{ToleranceSeconds: i32(300), BackoffSeconds: i32(600)}}},
		{name: "the placement's wins", p: federation.Placement{Failover: &federation.Failover{GracePeriodSeconds: i32(30)}}, rsp: rsp,
			want: federation.Failover{PurgeMode: federation.PurgeGraciously, GracePeriodSeconds: i32(30)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, federation.EffectiveFailover(tt.p, tt.rsp)); diff != "" {
				t.Errorf("EffectiveFailover (-want +got):\n%s", diff)
			}
		})
	}
	if rsp.Spec.Failover.Application.ToleranceSeconds != nil {
		t.Error("EffectiveFailover changed the preference it read")
	}
}
