package fake

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Action is one recorded call to a cluster. Every call through the [federation.ClusterClient],
// [federation.HealthChecker] and [federation.VersionGetter] methods is recorded when it starts,
// including calls that then fail (partitioned, injected error, NotFound...). Writes by the test
// itself ([Cluster.Seed], [Cluster.Drift], [Cluster.DriftDelete], [Cluster.Peek]) and by the
// simulated controllers are not recorded: they are not the code under test.
type Action struct {
	Verb      Verb
	Resource  schema.GroupVersionResource
	Namespace string
	// Name is the object's name; empty for list and watch, and for a create that uses
	// generateName.
	Name string
	// Subresource is "status" for UpdateStatus, empty otherwise.
	Subresource string

	// Object is a copy of the object passed to Create, Update or UpdateStatus.
	Object *unstructured.Unstructured
	// PatchType and Patch are the arguments of Patch.
	PatchType types.PatchType
	Patch     []byte
	// ListOptions are the options of List and Watch.
	ListOptions metav1.ListOptions
	// DeleteOptions are the options of Delete.
	DeleteOptions metav1.DeleteOptions
}

// String returns a short description: "update-status apps/v1/deployments prod/web".
func (a Action) String() string {
	s := string(a.Verb)
	if !a.Resource.Empty() {
		s += " " + a.Resource.GroupVersion().String() + "/" + a.Resource.Resource
	}
	if a.Namespace != "" || a.Name != "" {
		s += " " + objectRef(a.Namespace, a.Name)
	}
	return s
}

func objectRef(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return fmt.Sprintf("%s/%s", namespace, name)
}

// deepCopy returns an Action that shares nothing with a.
func (a Action) deepCopy() Action {
	if a.Object != nil {
		a.Object = a.Object.DeepCopy()
	}
	a.Patch = slices.Clone(a.Patch)
	a.ListOptions = *a.ListOptions.DeepCopy()
	a.DeleteOptions = *a.DeleteOptions.DeepCopy()
	return a
}

// Actions returns a copy of the calls recorded since the cluster was created or
// [Cluster.ClearActions] was called, oldest first.
func (c *Cluster) Actions() []Action {
	c.lock()
	defer c.mu.Unlock()
	out := make([]Action, len(c.actions))
	for i, a := range c.actions {
		out[i] = a.deepCopy()
	}
	return out
}

// ClearActions forgets the recorded calls and their counts.
func (c *Cluster) ClearActions() {
	c.lock()
	defer c.mu.Unlock()
	c.actions = nil
	c.counts = nil
}

// ActionCounts returns how many calls of each verb the cluster received since it was created
// or [Cluster.ClearActions] was called. They are counted even when recording is off.
func (c *Cluster) ActionCounts() map[Verb]int {
	c.lock()
	defer c.mu.Unlock()
	out := make(map[Verb]int, len(c.counts))
	for v, n := range c.counts {
		out[v] = n
	}
	return out
}

// SetInterning turns on (or off, the default) the sharing of equal flat maps (labels,
// annotations, a ConfigMap's data, status entries) between the objects the cluster stores
// from then on (see internal/intern): a store of many similar objects, or a fleet's members holding
// the same object (Fleet.SetInterning), then takes about half the memory, for about a third
// more CPU per write. Nothing a client sees changes. For scale runs; off, writes are cheaper.
func (c *Cluster) SetInterning(on bool) {
	c.lock()
	defer c.mu.Unlock()
	c.interning = on
}

// SetRecording turns the recording of Actions on (the default) or off. A long benchmark or
// soak keeps every call (with a copy of every object written) otherwise; with recording off,
// only [Cluster.ActionCounts] keeps count.
func (c *Cluster) SetRecording(on bool) {
	c.lock()
	defer c.mu.Unlock()
	c.unrecorded = !on
	if !on {
		c.actions = nil
	}
}

// recordedObject returns the copy of obj an Action keeps: a normalised deep copy, or nil when
// obj cannot be encoded (the call then fails with BadRequest anyway).
func recordedObject(obj *unstructured.Unstructured) *unstructured.Unstructured {
	u, err := normalize(obj)
	if err != nil {
		return nil
	}
	return u
}
