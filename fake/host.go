package fake

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	t, err := NewHostTemplate()
	if err != nil {
		// The CRDs are embedded in package federation and tested there: this is a build
		// defect, not a condition a caller can handle.
		panic(fmt.Sprintf("fake: %v", err))
	}
	return t.NewHost(name)
}

// HostTemplate is what [NewHost] installs, decoded once: tests that make a host each make
// them from one template, and skip decoding fedkit's CRDs every time.
type HostTemplate struct {
	crds []*unstructured.Unstructured
}

// NewHostTemplate decodes the CRDs [NewHost] installs. It fails only when fedkit's embedded
// CRDs do not load.
func NewHostTemplate() (*HostTemplate, error) {
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	if err != nil {
		return nil, fmt.Errorf("fedkit's CRDs do not load: %w", err)
	}
	t := &HostTemplate{}
	for _, crd := range crds {
		data, err := json.Marshal(crd)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		u, err := decodeObject(data)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		t.crds = append(t.crds, u)
	}
	return t, nil
}

// NewHost returns a cluster named name as [NewHost] does, with its own copy of t's CRDs.
// The CRDs are written as the cluster's own fixtures: no Action is recorded.
func (t *HostTemplate) NewHost(name string) *Cluster {
	c := NewCluster(name)
	c.lock()
	defer c.unlock()
	for _, crd := range t.crds {
		if _, err := c.insertLocked(crdGVR(), crd.DeepCopy(), false); err != nil {
			panic(fmt.Sprintf("fake: fedkit's CRD %s is refused: %v", crd.GetName(), err))
		}
	}
	return c
}
