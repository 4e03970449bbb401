package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Label names. Every fedkit metric that has one of these dimensions uses this name for it.
const (
	// LabelLoop is the loop: one of the Loop* values.
	LabelLoop = "loop"
	// LabelType is the kind of object a loop's keys name: the federated kind
	// ("FederatedDeployment"), "Cluster" for the cluster monitor, the record kind for DNS.
	LabelType = "type"
	// LabelOutcome is what a pass did: one of the Outcome* values.
	LabelOutcome = "outcome"
	// LabelCluster is a member cluster's name. Series with it are deleted when the Cluster
	// leaves the federation, so their number is bounded by the fleet.
	LabelCluster = "cluster"
	// LabelVerb is the API verb of a request ("get", "list", "create", "update", "patch",
	// "delete", "watch"; a status update is an update), or "probe" for a health check.
	LabelVerb = "verb"
	// LabelResult is how a request ended: one of the Result* values.
	LabelResult = "result"
	// LabelName is a work queue's name, the loop's name ("scheduler/FederatedDeployment"),
	// as client-go's and controller-runtime's work queue metrics label it.
	LabelName = "name"
	// LabelController is the controller a work queue feeds, as controller-runtime labels its
	// work queue and reconcile metrics. A fedkit loop's is its queue's name (LabelName).
	LabelController = "controller"
	// LabelPriority is the priority of the keys counted in workqueue_depth, as
	// controller-runtime's priority queue labels it; "" for a fedkit loop's queue, which has
	// no priorities.
	LabelPriority = "priority"
)

// Values of LabelLoop.
const (
	LoopScheduler = "scheduler"
	LoopSync      = "sync"
	LoopStatus    = "status"
	LoopMonitor   = "cluster-monitor"
	LoopDNS       = "dns"
	// LoopDependencies is the loop that makes a workload's dependencies follow it.
	LoopDependencies = "dependencies"
	// LoopPropagation is package propagation's loop over native objects.
	LoopPropagation = "propagation"
	// LoopAutoscale is package autoscale's loop over autoscaled preferences.
	LoopAutoscale = "autoscale"
)

// registerEach registers each of cs with Register and replaces it with the collector reg
// holds, stopping at the first error.
func registerEach[C prometheus.Collector](reg prometheus.Registerer, cs ...*C) error {
	for _, c := range cs {
		var err error
		if *c, err = Register(reg, *c); err != nil {
			return err
		}
	}
	return nil
}

// Register registers c into reg and returns it, or returns the collector of the same
// description already registered there (so two loops share one family). A nil reg registers
// nothing: the loop's metrics still count, unexported. Any other registration failure (a name
// registered with other labels) is returned.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
