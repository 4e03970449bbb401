package autoscale

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
)

// Reports is the [MetricsSource] of pull members: the hub never reaches them, so it reads
// what their agents report. A pull cluster's agent (package agent) adds the workload's pods
// and their resource usage, read from the member's own API and metrics.k8s.io, to the
// report of the workload's Assignment (status.metrics, federation.WorkloadMetrics); Reports
// reads that Assignment in the cluster's namespace on the host and turns it into a Sample.
//
//   - The sample's Read is the agent's read: a report the agent stopped renewing goes stale,
//     and status's freshness and quorum rules leave the cluster out as any stale member.
//   - An agent reports Resource and ContainerResource metrics only: a Pods, Object or
//     External metric is Failed for a pull member (its share holds, never 0).
//   - No Assignment: nothing runs there yet (0 replicas, read now). An Assignment without
//     metrics (an agent that does not report them yet) is an error: the member's last
//     sample counts while it is fresh.
type Reports struct {
	// Host reads the Assignments (federation.PullNamespace of the cluster).
	Host federation.ClusterClient
}

var _ MetricsSource = Reports{}

// errNotReported is the Failed reason of a metric a pull cluster's agent does not report.
const errNotReported = "a pull cluster's agent reports Resource and ContainerResource metrics only"

// Sample implements [MetricsSource].
func (r Reports) Sample(ctx context.Context, req SampleRequest) (Sample, error) {
	s := Sample{Cluster: req.Cluster}
	name := federation.AssignmentName(req.Type.TargetGVR(), req.Key.Namespace, req.Key.Name)
	u, err := r.Host.Get(ctx, federation.AssignmentGVR, federation.PullNamespace(req.Cluster), name)
	switch {
	case apierrors.IsNotFound(err):
		s.Read = req.Now // nothing is assigned there yet
		return s, nil
	case err != nil:
		return s, err
	}
	as := &federation.Assignment{}
	if err := federation.FromUnstructured(u, as); err != nil {
		return s, fmt.Errorf("cluster %s: Assignment %s: %w", req.Cluster, name, err)
	}
	m := as.Status.Metrics
	if m == nil {
		return s, fmt.Errorf("cluster %s: the agent has not reported the metrics of %s %s (Assignment %s)", req.Cluster, req.Type.Target.Kind, req.Key, name)
	}
	replicas, _, _ := unstructured.NestedInt64(as.Status.Object.Object, "status", "replicas")
	s.Replicas = int32(replicas)
	s.Pods = recommend.PodsOfReport(m.Pods)
	for _, spec := range req.Metrics {
		why := errNotReported
		switch spec.Type {
		case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
			why = m.Failed
		}
		if why != "" {
			if s.Failed == nil {
				s.Failed = map[string]string{}
			}
			s.Failed[MetricKey(spec)] = why
		}
	}
	s.Read = m.Read.Time
	return s, nil
}

// ByMode is a [MetricsSource] that samples push members with Push and pull members
// (SampleRequest.Pull) with Pull. The Autoscaler's default is ByMode{[Members], [Reports]}.
type ByMode struct {
	Push, Pull MetricsSource
}

var _ MetricsSource = ByMode{}

// Sample implements [MetricsSource].
func (b ByMode) Sample(ctx context.Context, req SampleRequest) (Sample, error) {
	if req.Pull {
		return b.Pull.Sample(ctx, req)
	}
	return b.Push.Sample(ctx, req)
}
