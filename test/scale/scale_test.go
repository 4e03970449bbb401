// Package scale_test measures the control plane at fleet scale: in memory (package fake's host
// and fleet, every loop of FederatedConfigMap through controlplane.Run) and on real API servers
// (a host and three members from internal/testenv). The figures and the commands that reproduce
// them are in SCALE.md at the module root.
//
// `go test ./test/scale` (and so `make test`) runs bounded versions that assert what must hold
// at any size: convergence, a resync that writes nothing, a template change that writes exactly
// once per object and cluster. `make scale` runs the big sizes through the flags below, the
// real-server one with -scale.process: fedkit-controller-manager as a separate process, as
// deployed (process_test.go).
package scale_test

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

var (
	sizesFlag        = flag.String("scale.sizes", "", "in-memory sizes to run, NxC comma-separated (e.g. 1000x100,10000x10); empty: only the bounded test")
	shardsFlag       = flag.Int("scale.shards", 4, "static shards (control planes in one process) of the sharded in-memory runs; 0 or 1: no sharded run")
	hostQPSFlag      = flag.Int("scale.hostqps", 0, "QPS of the control plane's host client on real servers (burst twice that); 0: kube's default; negative: no limit")
	noSchedFlag      = flag.Bool("scale.noscheduler", false, "run no scheduler on real servers (sync then places by spec.placement): what the scheduler's status write costs a type without replicas")
	workersFlag      = flag.Int("scale.workers", 0, "Workers of sync, the collector and the scheduler on real servers; 0: their defaults")
	clusterQPSFlag   = flag.Float64("scale.clusterqps", 0, "sync's ClusterQPS (writes per second to each member) on real servers; 0 or negative: no limit (its default)")
	convergeOnlyFlag = flag.Bool("scale.convergeonly", false, "in-memory runs stop after convergence (and its heap profile): no resync, no template change")
	realFlag         = flag.Int("scale.real", 0, "federated objects to propagate on real API servers; 0: only the bounded test")
)

const hostName = "host"

var memberNames = []string{"m1", "m2", "m3"}

func TestMain(m *testing.M) {
	code := testenv.Main(m, append([]string{hostName}, memberNames...)...)
	managertest.Cleanup()
	os.Exit(code)
}

// parseSizes parses "NxC,NxC".
func parseSizes(s string) ([][2]int, error) {
	var out [][2]int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, c, ok := strings.Cut(f, "x")
		ni, err1 := strconv.Atoi(n)
		ci, err2 := strconv.Atoi(c)
		if !ok || err1 != nil || err2 != nil || ni <= 0 || ci <= 0 {
			return nil, fmt.Errorf("size %q: want NxC with N and C positive, as 1000x100", f)
		}
		out = append(out, [2]int{ni, ci})
	}
	return out, nil
}

// TestMemoryBounded is the in-memory run at a size CI affords: 100 objects x 10 clusters, on
// one control plane and on 4 static shards, beside the real-server test (which mostly waits
// on its servers). `make scale` runs the sizes SCALE.md reports.
func TestMemoryBounded(t *testing.T) {
	t.Parallel()
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			r := runMemory(t, 100, 10, shards)
			t.Log(memHeader)
			t.Log(r)
		})
	}
}

// memHeader heads the rows of memResult.String. "idle steps" are the fake clock seconds the
// harness stepped in each phase (converge, resync, change) when the loops sat idle waiting on
// time (the collector's pull period, requeues).
const memHeader = "| N x C | shards | converge | resync | template change | member objects/s | peak heap | heap after | idle steps |"

// TestMemoryScale runs the sizes of -scale.sizes, each on one control plane and on
// -scale.shards static shards, and prints the table of SCALE.md.
func TestMemoryScale(t *testing.T) {
	sizes, err := parseSizes(*sizesFlag)
	require.NoError(t, err)
	if len(sizes) == 0 {
		t.Skip("no -scale.sizes (make scale runs them)")
	}
	shards := []int{1}
	if *shardsFlag > 1 {
		shards = append(shards, *shardsFlag)
	}
	var rows []string
	for _, s := range sizes {
		for _, k := range shards {
			t.Run(fmt.Sprintf("%dx%d/shards=%d", s[0], s[1], k), func(t *testing.T) {
				r := runMemory(t, s[0], s[1], k)
				t.Log(r)
				rows = append(rows, r.String())
			})
		}
	}
	t.Log("\n" + memHeader + "\n|---|---|---|---|---|---|---|---|---|\n" + strings.Join(rows, "\n"))
}
