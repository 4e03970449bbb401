// Package conformance_test runs internal/conformance against both ClusterClient
// implementations: federation/kube on a real kube-apiserver (started by internal/testenv) and
// the in-memory fake. It also checks that fedkit's CRDs install on a real API server and that
// their schemas accept the documented YAML and reject invalid objects.
package conformance_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/testenv"
)

// realCluster is the name of the one API server this package's tests share.
const realCluster = "conformance"

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, realCluster))
}

// crdsOnce installs fedkit's CRDs on the shared API server once per test binary.
var crdsOnce struct {
	sync.Once
	err      error
	duration time.Duration
}

// realClient returns a kube.Client for the shared API server, with fedkit's CRDs (the
// built-in federated types included) installed and Established.
func realClient(t *testing.T) *kube.Client {
	t.Helper()
	env := testenv.Shared(t)
	c := env.Client(t, realCluster)
	crdsOnce.Do(func() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		crds, err := federation.CRDs(federation.BuiltinTypes()...)
		if err == nil {
			err = conformance.InstallCRDs(ctx, c, crds...)
		}
		crdsOnce.err, crdsOnce.duration = err, time.Since(start)
		t.Logf("installed %d CRDs in %s", len(crds), crdsOnce.duration.Round(time.Millisecond))
	})
	require.NoError(t, crdsOnce.err)
	return c
}
