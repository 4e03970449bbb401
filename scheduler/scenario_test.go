package scheduler_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/storytest"
	"github.com/fedkit/fedkit/scheduler"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in scheduler/testdata/*.txt")

// TestScenarios runs the datadriven files in testdata. Each case is
//
//	divide key=ns/web total=9 [algorithm=KubeFed] [strategy=CostOptimized] [rebalance]
//	       [refill] [spread=MINDOMAINS/MAXSKEW]
//	cluster NAME [current=N] [capacity=N] [cost=N] [domain=D]
//	pref NAME|* [weight=N] [min=N] [max=N]
//	----
//	expected output (one Explain line per cluster, then unplaced/overflow/summary)
//
// and cases are separated by blank lines; lines starting with # outside a case are comments
// (the format of package internal/storytest). go test ./scheduler -run TestScenarios -rewrite
// refreshes the expected output.
func TestScenarios(t *testing.T) {
	for _, file := range storytest.Files(t, "testdata/*.txt") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cases := storytest.Run(t, file, *rewrite, func(b storytest.Block) string { return runScenario(t, b.Lines) })
			t.Logf("%d cases", cases)
		})
	}
}

// runScenario parses one case's input, divides, and renders the plan.
func runScenario(t *testing.T, input []string) string {
	t.Helper()
	var req scheduler.Request
	for _, line := range input {
		fields := strings.Fields(line)
		args := map[string]string{}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			args[k] = v
		}
		num := func(k string) *int64 {
			v, ok := args[k]
			if !ok {
				return nil
			}
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, "%q", line)
			return &n
		}
		switch fields[0] {
		case "divide":
			req.Key = args["key"]
			if n := num("total"); n != nil {
				req.TotalReplicas = *n
			}
			_, req.Rebalance = args["rebalance"]
			_, req.Refill = args["refill"]
			req.Algorithm = federation.Algorithm(args["algorithm"])
			req.Strategy = federation.Strategy(args["strategy"])
			if s, ok := args["spread"]; ok {
				minD, skew, _ := strings.Cut(s, "/")
				m, _ := strconv.ParseInt(minD, 10, 32)
				k, _ := strconv.ParseInt(skew, 10, 64)
				req.Spread = &scheduler.Spread{MinDomains: int32(m), MaxSkew: k}
			}
		case "cluster":
			req.Clusters = append(req.Clusters, scheduler.ClusterState{
				Name: fields[1], Current: num("current"), Capacity: num("capacity"), Cost: num("cost"), Domain: args["domain"],
			})
		case "pref":
			if req.Preferences == nil {
				req.Preferences = map[string]federation.ClusterPreferences{}
			}
			p := federation.ClusterPreferences{MinReplicas: num("min"), MaxReplicas: num("max")}
			if w := num("weight"); w != nil {
				p.Weight = *w
			}
			req.Preferences[fields[1]] = p
		default:
			t.Fatalf("unknown directive %q", line)
		}
	}
	plan, err := scheduler.Divide(req)
	if err != nil {
		return "error: " + err.Error()
	}
	if msg := checkPlan(req, plan); msg != "" && req.Strategy != federation.StrategyDuplicated {
		t.Errorf("%s: %s", input[0], msg)
	}
	var b strings.Builder
	for _, a := range plan.Clusters() {
		b.WriteString(a.Explain() + "\n")
	}
	if len(plan.Overflow) > 0 {
		names := make([]string, 0, len(plan.Overflow))
		for n := range plan.Overflow {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString("overflow:")
		for _, n := range names {
			fmt.Fprintf(&b, " %s=%d", n, plan.Overflow[n])
		}
		b.WriteString("\n")
	}
	b.WriteString("summary: " + plan.Summary())
	return b.String()
}
