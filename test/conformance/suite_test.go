package conformance_test

import (
	"testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/conformance"
)

// TestKubeConformance runs the suite against federation/kube on a real kube-apiserver: this
// run defines what the behaviours mean.
func TestKubeConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewClient: func(t *testing.T) federation.ClusterClient { return realClient(t) },
	})
}

// fakeDifferences are the behaviours where fake.Cluster is known to differ from a real
// kube-apiserver (TestKubeConformance passes all of them). Each entry is reported to the
// fake's owner; remove it when the fake is fixed, and the run fails if it goes stale.
var fakeDifferences = map[string]string{}

// TestFakeConformance runs the suite against the in-memory fake. It needs no API server.
func TestFakeConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewClient: func(t *testing.T) federation.ClusterClient { return fake.NewHost("conformance") },
		Skip:      fakeDifferences,
	})
}
