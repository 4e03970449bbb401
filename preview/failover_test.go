package preview_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/preview"
)


// TestFailoverPlanGolden: with eu-2 down, the preview shows where each object's replicas
// go (the moves against status.schedule), the evictions that keep copies meanwhile, and
// the Scheduled message that says why eu-2 is left out.
func TestFailoverPlanGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/failover.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, err := preview.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	in.AssumeReady = true
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	in.Down = []string{"eu-2"}
	rep, err := preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	type cluster struct {
		Name     string `json:"name"`
		Selected bool   `json:"selected"`
		Rule     string `json:"rule,omitempty"`
		Why      string `json:"why,omitempty"`
		Replicas *int64 `json:"replicas,omitempty"`
	}
	type object struct {
		Name      string            `json:"name"`
		Scheduled string            `json:"scheduled"`
		Clusters  []cluster         `json:"clusters"`
		Failover  *preview.Failover `json:"failover"`
	}
	var got []object
	for _, o := range rep.Objects {
		g := object{Name: o.Name, Scheduled: o.Scheduled.Message, Failover: o.Failover}
		for _, c := range o.Clusters {
			g.Clusters = append(g.Clusters, cluster{Name: c.Name, Selected: c.Selected, Rule: c.Rule, Why: c.Why, Replicas: c.Replicas})
		}
		got = append(got, g)
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	const golden = "testdata/failover.golden.json"
	if *updateGolden {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(out)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}

	// Without Down there is no failover plan.
	in.Down = nil
	rep, err = preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Objects[0].Failover != nil {
		t.Errorf("Failover without Down: %+v", rep.Objects[0].Failover)
	}
	in.Down = []string{"mars"}
	if _, err := preview.Run(in); err == nil {
		t.Error("a Down cluster no Cluster has: no error")
	}
}
