// Package kinds_test federates a custom resource fedkit has no Go code for, on real
// kube-apiservers started by internal/testenv: a host and two members with the same CRD, the
// type enabled with `kubectl fed enable` (the plugin built from this checkout, as a process)
// while a control plane that reads type configurations runs, a FederatedWidget propagated with
// an override and judged by a CEL health rule, and `kubectl fed get` showing it per member.
package kinds_test

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

const (
	hostName = "host"
	member1  = "member1"
	member2  = "member2"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m, hostName, member1, member2)
	managertest.Cleanup()
	os.Exit(code)
}
