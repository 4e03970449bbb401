package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// shared is the environment of the current test binary, set up by Main and started
// by the first Shared. It is the package's only global, on purpose: TestMain and the
// tests of a package have no other way to hand each other a value, and one
// environment per test binary is what makes real apiservers affordable (seconds
// and about 300 MiB each) for every test that needs them.
var shared struct {
	mu     sync.Mutex
	inMain bool      // Main is running
	opts   Options   // from Main
	once   sync.Once // starts env on the first Shared
	env    *Env
	err    error
}

// Main runs the tests of m with a shared environment of the named clusters and
// returns the exit code, for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, "host", "member1")) }
//
// The environment starts on the first call to Shared, not before, so tests that do
// not call Shared pay nothing. Main stops it after the tests; if stopping fails, a
// zero exit code becomes 1.
func Main(m *testing.M, clusters ...string) int {
	return MainOptions(m, Options{Clusters: clusters})
}

// MainOptions is Main with all of Options. When opts.Logf is nil and tests run with
// -v, progress is written to stderr.
func MainOptions(m *testing.M, opts Options) int {
	shared.mu.Lock()
	shared.inMain, shared.opts = true, opts
	shared.mu.Unlock()

	code := m.Run()

	shared.mu.Lock()
	env := shared.env
	shared.inMain = false
	shared.mu.Unlock()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Shared returns the test binary's environment, starting it on the first call.
//
// It skips the test in -short mode, and when the binaries are missing (see
// hack/install-testbins.sh) unless the environment variable CI is "true": in CI a
// missing binary fails the test instead, so the integration tests cannot pass by
// not running. Any other startup error fails the test; the environment is started
// only once, so the other tests fail fast with the same error.
//
// Shared fails the test when TestMain does not call Main or MainOptions.
func Shared(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: real API servers are skipped in -short mode")
	}
	shared.mu.Lock()
	inMain, opts := shared.inMain, shared.opts
	shared.mu.Unlock()
	if !inMain {
		t.Fatal("testenv: Shared needs TestMain to call testenv.Main(m, clusters...)")
	}

	shared.once.Do(func() {
		if opts.Logf == nil && testing.Verbose() {
			opts.Logf = func(format string, args ...any) {
				fmt.Fprintf(os.Stderr, format+"\n", args...)
			}
		}
		env, err := Start(context.Background(), opts)
		shared.mu.Lock()
		shared.env, shared.err = env, err
		shared.mu.Unlock()
	})

	shared.mu.Lock()
	env, err := shared.env, shared.err
	shared.mu.Unlock()
	if err != nil {
		SkipIfMissing(t, err)
		t.Fatal(err)
	}
	return env
}

// SkipIfMissing skips t when err says the binaries are missing and the environment
// variable CI is not "true". Tests that call Start themselves use it like this:
//
//	env, err := testenv.Start(ctx, opts)
//	testenv.SkipIfMissing(t, err)
//	require.NoError(t, err)
func SkipIfMissing(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrBinariesMissing) && os.Getenv("CI") != "true" {
		t.Skipf("%v (set CI=true to fail instead of skipping)", err)
	}
}
