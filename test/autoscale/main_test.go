// Package autoscale_test runs the autoscaler against real kube-apiservers started by
// internal/testenv: a host with fedkit's CRDs, and a member whose metrics.k8s.io is an
// aggregated APIService backed by a small metrics server in the test.
package autoscale_test

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/testenv"
)

const (
	hostName   = "host"
	memberName = "member"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, hostName, memberName))
}
