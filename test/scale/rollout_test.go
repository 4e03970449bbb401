package scale_test

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

var rolloutsFlag = flag.String("scale.rollouts", "", "staged rollouts at fleet scale in memory, NxCxR: N FederatedConfigMaps on C clusters, R of them rolled out at once in four stages (1000x1000x100); empty: none")

// rolloutStages are the stages each rolled-out object gets: 1%, 10%, 50% and every cluster,
// each ready for 10 seconds before the next starts.
var rolloutStages = []any{
	map[string]any{"name": "canary", "percentage": int64(1), "minReadySeconds": int64(10)},
	map[string]any{"name": "tenth", "percentage": int64(10), "minReadySeconds": int64(10)},
	map[string]any{"name": "half", "percentage": int64(50), "minReadySeconds": int64(10)},
	map[string]any{"name": "all", "percentage": int64(100)},
}

// rolloutResult is one row of SCALE.md's rollout table.
type rolloutResult struct {
	n, c, r                int
	converge, rollout      time.Duration
	memberWrites           int
	hostWrites             int
	peakHeap, liveHeap     uint64
	peakGoroutines, idleGR int
	steps                  int
}

const rolloutHeader = "| N x C | rollouts | converge | every rollout done | member writes | host writes per rollout | host writes per stage | peak heap | heap after | goroutines (peak, idle) | clock steps |"

func (r rolloutResult) String() string {
	stages := len(rolloutStages)
	return fmt.Sprintf("| %d x %d | %d x %d stages | %s | %s | %d (%d per object and cluster) | %.1f | %.1f | %s | %s | %d, %d | %d |",
		r.n, r.c, r.r, stages, r.converge.Round(time.Second), r.rollout.Round(time.Second), r.memberWrites,
		r.memberWrites/max(r.r*r.c, 1), float64(r.hostWrites)/float64(r.r), float64(r.hostWrites)/float64(r.r*stages),
		mib(r.peakHeap), mib(r.liveHeap), r.peakGoroutines, r.idleGR, r.steps)
}

// TestMemoryRollouts runs -scale.rollouts: N FederatedConfigMaps converge on C fake clusters
// (one control plane, every loop of the type), then R of them get spec.rollout (four stages,
// see rolloutStages) and a new template at once. It measures the time until every rollout is
// Complete, the writes (each object changes once in each cluster, whatever its stage), the
// heap and the goroutines. `make scale` does not run it; SCALE.md gives the command.
func TestMemoryRollouts(t *testing.T) {
	if *rolloutsFlag == "" {
		t.Skip("no -scale.rollouts (see SCALE.md)")
	}
	f := strings.Split(*rolloutsFlag, "x")
	require.Len(t, f, 3, "-scale.rollouts: want NxCxR")
	var v [3]int
	for i, s := range f {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "-scale.rollouts")
		v[i] = n
	}
	require.LessOrEqual(t, v[2], v[0], "-scale.rollouts: R rollouts among N objects")
	r := runRollouts(t, v[0], v[1], v[2])
	t.Log("\n" + rolloutHeader + "\n|---|---|---|---|---|---|---|---|---|---|---|\n" + r.String())
}

func runRollouts(t testing.TB, n, c, r int) rolloutResult {
	t.Helper()
	res := rolloutResult{n: n, c: c, r: r}
	runtime.GC()
	heap := sampleHeap()
	f := newMemFleet(t, n, c, 1)
	timeout := 10*time.Minute + time.Duration(n*c)*time.Millisecond
	begin := time.Now()
	f.start(t)
	defer func() {
		if f.stops != nil {
			f.stop(t)
		}
	}()
	f.waitFor(t, "propagated", timeout, func() bool { m, _ := f.writes(); return m >= n*c })
	f.waitFor(t, "Ready", timeout, func() bool { return f.readyCount() == n })
	res.converge = time.Since(begin)
	f.settle(t)
	res.idleGR = runtime.NumGoroutine()
	steps := f.steps

	m0, h0 := f.writes()
	begin = time.Now()
	for i := range r {
		require.NoError(t, f.host.Drift(fedConfigMaps, memNamespace, objectName(i), func(u *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(u.Object, "2", "spec", "template", "data", "version"))
			require.NoError(t, unstructured.SetNestedMap(u.Object, map[string]any{"stages": rolloutStages}, "spec", "rollout"))
		}))
	}
	goroutines := func() bool {
		res.peakGoroutines = max(res.peakGoroutines, runtime.NumGoroutine())
		return true
	}
	f.waitFor(t, "every rollout Complete", timeout, func() bool { return goroutines() && f.rolloutsDone(t, r) == r })
	res.rollout = time.Since(begin)
	res.steps = f.steps - steps
	f.settle(t)
	m1, h1 := f.writes()
	res.memberWrites, res.hostWrites = m1-m0, h1-h0
	require.Equal(t, r*c, res.memberWrites, "member writes of the rollouts: want one per rolled-out object and cluster")
	res.peakHeap = heap.Stop()
	res.liveHeap = liveHeap()
	f.stop(t)
	runtime.KeepAlive(f)
	return res
}

// rolloutsDone counts the first r objects whose rollout of revision 2 is Complete.
func (f *memFleet) rolloutsDone(t testing.TB, r int) int {
	t.Helper()
	done := 0
	for i := range r {
		u, err := f.host.Peek(fedConfigMaps, memNamespace, objectName(i))
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		if st := obj.Status.Rollout; st != nil && st.Phase == federation.RolloutComplete && st.Revision >= 2 {
			done++
		}
	}
	return done
}
