// Package deploy_test runs fedkit as a platform team deploys it: fedkit-controller-manager as
// a separate process against real API servers (internal/testenv), its /metrics, /healthz and
// /readyz over HTTP, and config/default's objects applied to an RBAC host with the binary
// run as their ServiceAccount, in the in-cluster way a pod runs it; and fedkit-agent run as
// config/agent deploys it in a pull member, through a partition from the host.
package deploy_test

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

const hostName = "host"

var memberNames = []string{"m1", "m2"}

// edgeName is a member no push Cluster reaches: the pull-mode agent's (agent_test.go).
const edgeName = "edge"

func TestMain(m *testing.M) {
	code := testenv.Main(m, append([]string{hostName, edgeName}, memberNames...)...)
	managertest.Cleanup()
	os.Exit(code)
}
