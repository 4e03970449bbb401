// Package deploy_test runs fedkit as a platform team deploys it: fedkit-controller-manager as
// a separate process against real API servers (internal/testenv), its /metrics, /healthz and
// /readyz over HTTP, and config/default's objects applied to an RBAC host with the binary
// run as their ServiceAccount, in the in-cluster way a pod runs it.
package deploy_test

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

const hostName = "host"

var memberNames = []string{"m1", "m2"}

func TestMain(m *testing.M) {
	code := testenv.Main(m, append([]string{hostName}, memberNames...)...)
	managertest.Cleanup()
	os.Exit(code)
}
