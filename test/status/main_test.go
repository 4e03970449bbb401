// Package status_test runs the Collector and the ClusterMonitor against real kube-apiservers
// started by internal/testenv: a host with fedkit's CRDs and two members, one of which is
// stopped and started again.
package status_test

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/testenv"
)

const (
	hostName = "host"
	member1  = "member1"
	member2  = "member2"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, hostName, member1, member2))
}
