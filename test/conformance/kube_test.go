package conformance_test

import (
	"testing"

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
