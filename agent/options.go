package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// ErrInvalidOptions is wrapped by New's and NewClusterSet's errors for invalid options.
var ErrInvalidOptions = errors.New("agent: invalid options")

// Defaults of Options.
const (
	// DefaultPeriod is how often Run reconciles (Options.Period).
	DefaultPeriod = 10 * time.Second
	// DefaultLeaseDuration is the Lease's duration (Options.LeaseDuration): the host judges
	// the cluster unreachable when the agent has not renewed it for that long.
	DefaultLeaseDuration = 40 * time.Second
	// DefaultMetricsPeriod is how old a workload's metrics report may get before the agent
	// reads the member's again (Options.MetricsPeriod): an HPA's sync period.
	DefaultMetricsPeriod = 15 * time.Second
)

// Options configure an Agent. The zero value is the default, except Cluster, which is
// required.
type Options struct {
	// Cluster is the name of the pull cluster's Cluster on the host (required). The agent
	// reads and writes only in its namespace there (federation.PullNamespace).
	Cluster string
	// Identity is the federation's identity (sync's Options.Identity): the agent deletes
	// and updates only member objects carrying it in federation.ManagedByLabel; "" is
	// federation.ManagedByValue.
	Identity string
	// Period is how often Run reconciles; 0: DefaultPeriod.
	Period time.Duration
	// LeaseDuration is written in the Lease; 0: DefaultLeaseDuration. It must be longer
	// than Period.
	LeaseDuration time.Duration
	// MetricsPeriod is how often the agent reads the pods and metrics.k8s.io usage of each
	// workload it applied (an object with spec.selector) into its report
	// (federation.WorkloadMetrics, status.metrics), for the hub's autoscaler: at most one
	// report write per workload and period for them. 0: DefaultMetricsPeriod; negative: the
	// agent reports no metrics.
	MetricsPeriod time.Duration
	// Renderer retains what the member owns before a manifest is written over a member
	// object (override.Renderer.Retain); nil: the default retention table.
	Renderer *override.Renderer
	// Clock is the agent's clock; nil: the real clock.
	Clock clock.WithTicker
	// Logger; zero: discard.
	Logger logr.Logger
}

func (o *Options) complete() error {
	if o.Cluster == "" {
		return fmt.Errorf("%w: Cluster is required", ErrInvalidOptions)
	}
	if errs := validation.IsDNS1123Label(federation.PullNamespace(o.Cluster)); len(errs) > 0 {
		return fmt.Errorf("%w: Cluster %q: its namespace on the host, %s, is not a valid name: %s", ErrInvalidOptions, o.Cluster, federation.PullNamespace(o.Cluster), errs[0])
	}
	if o.Period == 0 {
		o.Period = DefaultPeriod
	}
	if o.MetricsPeriod == 0 {
		o.MetricsPeriod = DefaultMetricsPeriod
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	switch {
	case o.Period < 0:
		return fmt.Errorf("%w: Period %s is negative", ErrInvalidOptions, o.Period)
	case o.LeaseDuration <= o.Period:
		return fmt.Errorf("%w: LeaseDuration %s must be longer than Period %s", ErrInvalidOptions, o.LeaseDuration, o.Period)
	}
	if o.Renderer == nil {
		o.Renderer = &override.Renderer{}
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}
