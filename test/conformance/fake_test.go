package conformance_test

import (
	"testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/conformance"
)

// fakeDifferences are the behaviours where fake.Cluster is known to differ from a real
// kube-apiserver (TestKubeConformance passes all of them). Each entry is reported to the
// fake's owner; remove it when the fake is fixed, and the run fails if it goes stale.
var fakeDifferences = map[string]string{
	"create/invalid-name-is-invalid": "the fake stores objects whose metadata.name is not a DNS subdomain " +
		"(\"Not_A_DNS_Name\"); a real server answers 422 Invalid",
	"update/custom-resource-requires-resource-version": "the fake allows unconditional updates (no resourceVersion) " +
		"of custom resources; a real server refuses them with 422 Invalid (metadata.resourceVersion: must be specified for an update)",
	"generation/deployment-bumps-on-spec-and-annotations-only": "the fake does not bump a Deployment's generation " +
		"when only its annotations change; a real server does (annotations are copied to ReplicaSets)",
	"finalizers/update-cannot-set-deletion-timestamp": "the fake silently keeps the stored deletionTimestamp when an " +
		"Update sets one; a real server refuses the Update with 422 Invalid (metadata.deletionTimestamp: field is immutable)",
}

// TestFakeConformance runs the suite against the in-memory fake. It needs no API server.
func TestFakeConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewClient: func(t *testing.T) federation.ClusterClient { return fake.NewCluster("conformance") },
		Skip:      fakeDifferences,
	})
}
