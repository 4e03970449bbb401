package preview_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/preview"
)

// TestPolicyPreview is the golden preview of testdata/policy.yaml: each native object with
// the policy chosen and why the others lost, then the generated objects' placement.
func TestPolicyPreview(t *testing.T) {
	data, err := os.ReadFile("testdata/policy.yaml")
	require.NoError(t, err)
	in, err := preview.Decode(data)
	require.NoError(t, err)
	in.AssumeReady, in.Fresh = true, true
	rep, err := preview.Run(in)
	require.NoError(t, err)

	var b strings.Builder
	for _, n := range rep.Natives {
		fmt.Fprintf(&b, "%s %s %s/%s: ", n.APIVersion, n.Kind, n.Namespace, n.Name)
		switch {
		case n.Policy == "":
			b.WriteString("no policy selects it\n")
			continue
		default:
			fmt.Fprintf(&b, "policy %s (%s)", n.Policy, n.Selected)
		}
		if n.Generated != "" {
			fmt.Fprintf(&b, " -> %s", n.Generated)
		}
		if n.Problem != "" {
			fmt.Fprintf(&b, "; %s", n.Problem)
		}
		b.WriteString("\n")
		for _, l := range n.Lost {
			fmt.Fprintf(&b, "  lost: %s: %s\n", l.Policy, l.Why)
		}
	}
	for _, o := range rep.Objects {
		fmt.Fprintf(&b, "%s %s/%s: %s %s\n", o.Kind, o.Namespace, o.Name, o.Scheduled.Status, o.Scheduled.Reason)
		for _, c := range o.Clusters {
			switch {
			case c.Selected && c.Replicas != nil:
				fmt.Fprintf(&b, "  %s: %d replicas\n", c.Name, *c.Replicas)
			case c.Selected:
				fmt.Fprintf(&b, "  %s: placed\n", c.Name)
			default:
				fmt.Fprintf(&b, "  %s: left out (%s)\n", c.Name, c.Rule)
			}
		}
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	const golden = "testdata/policy.golden"
	if *updateGolden {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run: go test ./preview -run TestPolicyPreview -update")
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("preview of testdata/policy.yaml (-golden +got):\n%s", diff)
	}
}
