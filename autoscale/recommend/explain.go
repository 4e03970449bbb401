package recommend

import (
	"fmt"
	"strings"
)

// Explain decides as the loop would for in ([Decide]) and says so in a few lines: the total
// and why, each metric's total (or why it could not be computed), each member's part, and
// the conditions. It is a pure function, for a dry run (package preview, a CLI) over samples
// read live or written by hand; an empty in.History is a fresh memory, as after a restart.
func Explain(in DecideInput) (Decision, string) {
	d := Decide(in)
	var b strings.Builder
	fmt.Fprintf(&b, "total: %s\n", d.Message)
	for _, m := range d.Recommendation.Metrics {
		if m.Err != "" {
			fmt.Fprintf(&b, "  metric %s: cannot be computed: %s\n", m.Name, m.Err)
			continue
		}
		fmt.Fprintf(&b, "  metric %s: %d (%s)\n", m.Name, m.Replicas, m.Summary)
	}
	for _, c := range d.Recommendation.Clusters {
		state := "fresh"
		if !c.Fresh {
			state = "stale: " + c.Message
		}
		fmt.Fprintf(&b, "  cluster %s: %d replicas (%s)\n", c.Name, c.Replicas, state)
	}
	for _, c := range d.Conditions {
		fmt.Fprintf(&b, "  %s=%s %s\n", c.Type, c.Status, c.Reason)
	}
	return d, strings.TrimRight(b.String(), "\n")
}
