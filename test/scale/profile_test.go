package scale_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"
)

var cpuProfileFlag = flag.String("scale.cpuprofile", "", "file the real-server run writes a CPU profile of the test process (control plane and harness) to, over the federated phase; empty: none")

// profileLabel is the pprof label that splits a CPU profile of a real-server run: "harness" for
// the test's own clients, creates and member watches, "controlplane" for the control plane
// (`go tool pprof -tagfocus who=controlplane <file>`).
const profileLabel = "who"

// labelHarness labels the test goroutine, and so every goroutine it starts from now on, as the
// harness's, until the test ends, and returns the context holding that label: pprof.Do restores
// the labels of the context it is given.
func labelHarness(t testing.TB) context.Context {
	t.Helper()
	ctx := pprof.WithLabels(context.Background(), pprof.Labels(profileLabel, "harness"))
	pprof.SetGoroutineLabels(ctx)
	t.Cleanup(func() { pprof.SetGoroutineLabels(context.Background()) })
	return ctx
}

// startCPUProfile starts a CPU profile of the test process into -scale.cpuprofile, when the flag
// is set, and returns what stops it. The control plane and the harness share the process: the
// profile is how SCALE.md splits their CPU (`go tool pprof -top -cum <file>`).
func startCPUProfile(t testing.TB) func() {
	t.Helper()
	if *cpuProfileFlag == "" {
		return func() {}
	}
	out, err := os.Create(*cpuProfileFlag)
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(out))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(t, out.Close())
		t.Logf("CPU profile %s", *cpuProfileFlag)
	}
}

var heapProfileFlag = flag.String("scale.heapprofile", "", "directory the in-memory runs write heap profiles to (after convergence and after the template change); empty: none")

// writeHeapProfile writes a heap profile of the live heap, after a GC, to
// <-scale.heapprofile>/heap-<n>x<c>-shards<k>-<phase>.pprof, when the flag is set. The profile
// is how SCALE.md's per-member-object breakdown is measured:
// `go tool pprof -sample_index=inuse_space -top <file>`. Beside it, goroutine-<...>.txt: the
// goroutines at the same moment (what a pass still under way waits on).
func writeHeapProfile(t testing.TB, r memResult, phase string) {
	t.Helper()
	if *heapProfileFlag == "" {
		return
	}
	require.NoError(t, os.MkdirAll(*heapProfileFlag, 0o755))
	path := filepath.Join(*heapProfileFlag, fmt.Sprintf("heap-%dx%d-shards%d-%s.pprof", r.n, r.c, r.shards, phase))
	runtime.GC()
	out, err := os.Create(path)
	require.NoError(t, err)
	defer out.Close()
	require.NoError(t, pprof.Lookup("heap").WriteTo(out, 0))
	// The goroutines at the same moment: what a pass still under way waits on.
	gpath := filepath.Join(*heapProfileFlag, fmt.Sprintf("goroutine-%dx%d-shards%d-%s.txt", r.n, r.c, r.shards, phase))
	gout, err := os.Create(gpath)
	require.NoError(t, err)
	defer gout.Close()
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(gout, 1))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap profile %s: HeapInuse %s after GC", path, mib(ms.HeapInuse))
}
