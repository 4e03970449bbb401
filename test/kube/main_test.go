// Package kube_test tests federation/kube against real kube-apiservers started by
// internal/testenv: a host that stores Cluster objects and Secrets, and a member they point at.
package kube_test

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

const (
	hostName   = "host"
	memberName = "member"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, hostName, memberName))
}

var hostCRDs struct {
	sync.Once
	err error
}

// hostClient returns a client of the host API server, with the Cluster CRD installed.
func hostClient(t *testing.T) (*kube.Client, *testenv.Env) {
	t.Helper()
	env := testenv.Shared(t)
	c := env.Client(t, hostName)
	hostCRDs.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		crd, err := federation.ClusterCRD()
		if err == nil {
			err = conformance.InstallCRDs(ctx, c, crd)
		}
		hostCRDs.err = err
	})
	require.NoError(t, hostCRDs.err)
	return c, env
}
