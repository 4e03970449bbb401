package plan_test

import (
	"testing"
	"time"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// FuzzDecideRollout decides on arbitrary cluster states, rollout records and times. The
// decision never panics, assigns every placed cluster the revision or the stable one, never
// fails on a stage whose clusters are all stale, never takes a failed revision further, and
// is the same for the same input.
func FuzzDecideRollout(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, int64(5), uint8(1), uint16(30))
	f.Add([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 7, 7}, int64(6), uint8(3), uint16(700))
	f.Add([]byte{}, int64(1), uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, states []byte, revision int64, stage uint8, ago uint16) {
		c := newRolloutCase()
		if revision < 1 || revision > 8 {
			revision = 5
		}
		c.in.Revision = revision
		if revision != 5 {
			c.in.History = append(c.in.History, plan.Revision{Number: revision, Name: "other", Spec: specWith("v9")})
			c.in.Object.Spec.Template = specWith("v9").Template
		}
		st := inStage(int32(stage%6), -time.Duration(ago)*time.Second, nil)
		if len(states) > 0 {
			switch states[0] % 6 {
			case 0:
				c.in.Object.Status.Rollout = nil
			case 1:
				st.Phase, st.FailedRevision = federation.RolloutFailed, st.Revision
			case 2:
				st.ReadySince = at(-time.Duration(ago/2) * time.Second)
			case 3:
				st.Reason = plan.RolloutReasonStaleData
			case 4:
				st.NotReadySince = at(-time.Duration(ago) * time.Second)
			}
			if states[0]%6 != 0 {
				c.rollout(st)
			}
		}
		allStale := true
		for i, name := range []string{"a", "b", "c"} {
			var b byte
			if i+1 < len(states) {
				b = states[i+1]
			}
			e := entry(name, int64(b%3)+revision-1, int64(b/3%3)+revision-1, b&16 != 0)
			e.Stale = b&32 != 0
			if b&64 != 0 {
				e.LastObserved = nil
			}
			if b&128 != 0 {
				notReadyCluster(c, name)
			}
			if name == "a" && !e.Stale && e.LastObserved != nil && b&128 == 0 {
				allStale = false
			}
			c.set(e)
		}
		if len(states) > 4 && states[4]&1 != 0 {
			c.in.Object.Annotations = map[string]string{federation.RolloutPausedAnnotation: "true"}
		}
		c.in.Now = now.Add(time.Duration(len(states)) * time.Second)

		d, err := plan.DecideRollout(c.in)
		if err != nil {
			t.Fatal(err)
		}
		d2, _ := plan.DecideRollout(c.in)
		if d.Status.Message != d2.Status.Message || d.Status.Phase != d2.Status.Phase {
			t.Fatalf("two decisions for one input: %q / %q", d.Status.Message, d2.Status.Message)
		}
		for _, p := range c.in.Placed {
			got, ok := d.Assign[p]
			if !ok || (got != revision && (d.Stable == nil || got != d.Stable.Number)) {
				t.Fatalf("cluster %s assigned %d (ok %v), revision %d, stable %+v", p, got, ok, revision, d.Stable)
			}
		}
		if d.Failed && d.Status.Stage == 1 && allStale && d.Status.Reason == plan.RolloutReasonProgressDeadlineExceeded {
			t.Fatalf("failed on stale data: %s", d.Status.Message)
		}
		if prev := c.in.Object.Status.Rollout; prev != nil && prev.Revision == revision && prev.Phase == federation.RolloutFailed {
			if d.Status.Phase != federation.RolloutFailed && d.Status.Phase != federation.RolloutComplete || d.Failed {
				t.Fatalf("a failed revision moved on: %+v", d.Status)
			}
		}
	})
}
