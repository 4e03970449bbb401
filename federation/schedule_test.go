package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
)

func TestScheduleReplicas(t *testing.T) {
	cases := []struct {
		name     string
		schedule *federation.Schedule
		want     map[string]int64
	}{
		{"not scheduled", nil, nil},
		{"scheduled nowhere", &federation.Schedule{}, map[string]int64{}},
		{"clusters", &federation.Schedule{Clusters: []federation.ScheduledCluster{{Name: "us", Replicas: 3}, {Name: "eu", Replicas: 0}}},
			map[string]int64{"us": 3, "eu": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.schedule.Replicas()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Replicas() (-want +got):\n%s", diff)
			}
			if (got == nil) != (tc.want == nil) {
				t.Errorf("Replicas() = %#v; want %#v (nil means not scheduled)", got, tc.want)
			}
		})
	}
}
