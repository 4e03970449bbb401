package fake

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/fedkit/fedkit/federation"
)

// NewHost returns a cluster named name that serves fedkit's API, as a federation host does
// once fedkit's CRDs are installed: it is [NewCluster] with the CustomResourceDefinitions of
// [federation.CRDs] for the built-in federated types ([federation.BuiltinTypes]) created and
// Established: Clusters, ReplicaSchedulingPreferences, the propagation policies, and
// FederatedDeployment, FederatedService and the rest, each with its status subresource and
// scope.
//
// To federate a type of your own, create its CRD in the host as on a real one (see the
// example): the fake serves the resource of every CRD created in it.
//
// The CRDs are written as the cluster's own fixtures: no Action is recorded, and the
// resourceVersion moves past them.
func NewHost(name string) *Cluster {
	c := NewCluster(name)
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	if err != nil {
		// The CRDs are embedded in package federation and tested there: this is a build
		// defect, not a condition a caller can handle.
		panic(fmt.Sprintf("fake: fedkit's CRDs do not load: %v", err))
	}
	c.lock()
	defer c.unlock()
	for _, crd := range crds {
		if err := c.createCRDLocked(crd); err != nil {
			panic(fmt.Sprintf("fake: fedkit's CRD %s is refused: %v", crd.Name, err))
		}
	}
	return c
}

// createCRDLocked creates crd as a client's Create would, without recording it.
func (c *Cluster) createCRDLocked(crd *apiextensionsv1.CustomResourceDefinition) error {
	data, err := json.Marshal(crd)
	if err != nil {
		return err
	}
	u, err := decodeObject(data)
	if err != nil {
		return err
	}
	_, err = c.insertLocked(crdGVR(), u, false)
	return err
}
