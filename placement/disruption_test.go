package placement_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// disruptionT0 is when the clusters of these tests are lost; they are judged at
// disruptionNow, ten minutes later.
var (
	disruptionT0  = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	disruptionNow = disruptionT0.Add(10 * time.Minute)
)

// fleetOf returns n clusters c0..c(n-1): those in lost have Ready False since disruptionT0
// plus the duration given, the others Ready for an hour.
func fleetOf(n int, lost map[int]time.Duration) []federation.Cluster {
	t0 := disruptionT0
	out := make([]federation.Cluster, n)
	for i := range out {
		out[i].Name = fmt.Sprintf("c%d", i)
		cond := metav1.Condition{Type: federation.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}
		if at, ok := lost[i]; ok {
			cond.Status, cond.Reason, cond.LastTransitionTime = metav1.ConditionFalse, "ClusterUnreachable", metav1.NewTime(t0.Add(at))
		}
		out[i].Status.Conditions = []metav1.Condition{cond}
	}
	return out
}

// TestFleetDisruption: the fleet is disrupted when every cluster is lost, whenever, or when
// at least 55% of it, and at least three clusters, were lost within five minutes of one
// another; never by a share alone when the losses are spread out or too few.
func TestFleetDisruption(t *testing.T) {
	every := map[int]time.Duration{0: 0, 1: time.Hour, 2: 48 * time.Hour}
	for _, tc := range []struct {
		name    string
		fleet   []federation.Cluster
		opts    placement.DisruptionOptions
		want    bool
		message string
	}{
		{name: "nothing lost", fleet: fleetOf(4, nil)},
		{name: "one of four lost", fleet: fleetOf(4, map[int]time.Duration{0: 0})},
		{name: "every cluster, hours apart", fleet: fleetOf(3, every), want: true, message: "every cluster (3) lost"},
		{name: "a single cluster fleet lost", fleet: fleetOf(1, map[int]time.Duration{0: 0}), want: true, message: "every cluster (1) lost"},
		{name: "the others back within the window count with the lost", fleet: back(fleetOf(4, map[int]time.Duration{0: 0, 1: 0}), 6*time.Minute, 2, 3), want: true,
			message: "every cluster (4) lost, 2 of them back within 5m0s"},
		{name: "back for longer than the window: an outage of its own", fleet: back(fleetOf(4, map[int]time.Duration{0: 0, 1: 0}), 4*time.Minute, 2, 3)},
		{name: "a share with some back", fleet: back(fleetOf(10, map[int]time.Duration{0: 0, 1: 0, 2: 0, 3: time.Minute}), 7*time.Minute, 4, 5), want: true,
			message: "6 of 10 clusters lost within 5m0s of one another, 2 of them back within 5m0s (at least 55% and 3)"},
		{name: "every cluster back: nothing lost, nothing disrupted", fleet: back(fleetOf(3, nil), 9*time.Minute, 0, 1, 2)},
		{name: "a new fleet turning Ready is no return", fleet: fresh(fleetOf(4, map[int]time.Duration{0: 0, 1: 0}), 9*time.Minute, 2, 3)},
		{name: "two of three together: too few for a share", fleet: fleetOf(3, map[int]time.Duration{0: 0, 1: time.Minute})},
		{name: "three of four within the window", fleet: fleetOf(4, map[int]time.Duration{0: 0, 1: 2 * time.Minute, 2: 5 * time.Minute}), want: true,
			message: "3 of 4 clusters lost within 5m0s of one another (at least 55% and 3)"},
		{name: "three of four, one outside the window", fleet: fleetOf(4, map[int]time.Duration{0: 0, 1: 2 * time.Minute, 2: 5*time.Minute + time.Second})},
		{name: "six of ten together, earlier outages aside", fleet: fleetOf(10, map[int]time.Duration{0: -time.Hour, 1: 0, 2: time.Second, 3: time.Minute, 4: time.Minute, 5: 2 * time.Minute, 6: 3 * time.Minute}), want: true,
			message: "6 of 10 clusters lost within 5m0s of one another (at least 55% and 3)"},
		{name: "five of ten together: under the threshold", fleet: fleetOf(10, map[int]time.Duration{0: 0, 1: 0, 2: 0, 3: 0, 4: 0})},
		{name: "a lower threshold", fleet: fleetOf(10, map[int]time.Duration{0: 0, 1: 0, 2: 0, 3: 0, 4: 0}), opts: placement.DisruptionOptions{Threshold: 0.5}, want: true,
			message: "5 of 10 clusters lost within 5m0s of one another (at least 50% and 3)"},
		{name: "a wider window", fleet: fleetOf(4, map[int]time.Duration{0: 0, 1: 2 * time.Minute, 2: 9 * time.Minute}), opts: placement.DisruptionOptions{Window: 10 * time.Minute}, want: true},
		{name: "threshold 1: only every cluster", fleet: fleetOf(4, map[int]time.Duration{0: 0, 1: 0, 2: 0}), opts: placement.DisruptionOptions{Threshold: 1}},
		{name: "disabled", fleet: fleetOf(3, every), opts: placement.DisruptionOptions{Disabled: true}},
		// The monitor, back after the control plane's own outage, has judged three clusters
		// lost (two before the outage's clock jump, one since) and not yet reached the other
		// three: their Ready is ten minutes old and says nothing about now.
		{name: "a Ready cluster not heard from within the window is no evidence", fleet: heard(fleetOf(6, map[int]time.Duration{0: 10 * time.Minute, 1: 0, 2: 0}), 0, 3, 4, 5), want: true,
			message: "every cluster (3) lost; 3 more Ready but not heard from within 5m0s"},
		{name: "a Ready cluster heard from within the window counts", fleet: heard(fleetOf(6, map[int]time.Duration{0: 10 * time.Minute, 1: 0, 2: 0}), 6*time.Minute, 3, 4, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := placement.FleetDisruption(tc.fleet, disruptionNow, tc.opts)
			if d.Disrupted != tc.want {
				t.Errorf("FleetDisruption = %+v; want disrupted %v", d, tc.want)
			}
			if tc.message != "" && d.Message != tc.message {
				t.Errorf("Message = %q; want %q", d.Message, tc.message)
			}
		})
	}
}

// TestFleetDisruptionCounts: the clusters being deleted are not counted, a cluster not judged
// yet (Ready Unknown) counts in the fleet but is not lost, and Since is when the group that
// makes the disruption began.
func TestFleetDisruptionCounts(t *testing.T) {
	fleet := fleetOf(5, map[int]time.Duration{0: -time.Hour, 1: 0, 2: time.Minute, 3: 2 * time.Minute})
	fleet[4].Status.Conditions[0].Status = metav1.ConditionUnknown
	gone := fleetOf(1, map[int]time.Duration{0: 0})[0]
	gone.Name = "leaving"
	gone.DeletionTimestamp = &metav1.Time{}
	d := placement.FleetDisruption(append(fleet, gone), disruptionNow, placement.DisruptionOptions{})
	want := placement.Disruption{Disrupted: true, Lost: []string{"c0", "c1", "c2", "c3"}, Together: 3,
		Since: disruptionT0, Fleet: 5, Message: "3 of 5 clusters lost within 5m0s of one another (at least 55% and 3)"}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("FleetDisruption (-want +got):\n%s", diff)
	}
	if !d.Includes("c0") || d.Includes("c4") {
		t.Errorf("Includes: c0 %v, c4 %v; want true, false", d.Includes("c0"), d.Includes("c4"))
	}
}

// back makes the clusters at the indices Ready again, since disruptionT0 plus at, with the
// Failover condition the cluster monitor writes then (Recovered).
func back(fleet []federation.Cluster, at time.Duration, idx ...int) []federation.Cluster {
	since := metav1.NewTime(disruptionT0.Add(at))
	for _, i := range idx {
		fleet[i].Status.Conditions = []metav1.Condition{
			{Type: federation.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: since},
			{Type: federation.ConditionFailover, Status: metav1.ConditionFalse, Reason: "Recovered", LastTransitionTime: since},
		}
	}
	return fleet
}

// heard sets the clusters at the indices' lastHeartbeatTime to disruptionT0 plus at: when the
// monitor last reached them.
func heard(fleet []federation.Cluster, at time.Duration, idx ...int) []federation.Cluster {
	for _, i := range idx {
		t := metav1.NewTime(disruptionT0.Add(at))
		fleet[i].Status.LastHeartbeatTime = &t
	}
	return fleet
}

// fresh makes the clusters at the indices Ready for the first time since disruptionT0 plus
// at: no Failover condition.
func fresh(fleet []federation.Cluster, at time.Duration, idx ...int) []federation.Cluster {
	for _, i := range idx {
		fleet[i].Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(disruptionT0.Add(at))}}
	}
	return fleet
}

func TestDisruptionOptionsValidate(t *testing.T) {
	for _, o := range []placement.DisruptionOptions{{Threshold: -0.1}, {Threshold: 1.5}, {Window: -time.Second}} {
		if err := o.Validate(); !errors.Is(err, placement.ErrInvalidDisruptionOptions) {
			t.Errorf("%+v.Validate() = %v; want ErrInvalidDisruptionOptions", o, err)
		}
	}
	if err := (placement.DisruptionOptions{}).Validate(); err != nil {
		t.Errorf("zero Validate() = %v", err)
	}
}
