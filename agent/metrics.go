package agent

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
)

// metrics is the workload metrics as's report carries: for an applied workload (an object
// with spec.selector), its pods and their usage read from the member when the last report
// is MetricsPeriod old, else the last report's. A member whose pods cannot be listed keeps
// the last report, which ages: the hub's freshness rule then leaves the cluster out.
// Nothing for other objects, or with a negative MetricsPeriod.
func (a *Agent) metrics(ctx context.Context, as *federation.Assignment, obj *unstructured.Unstructured) *federation.WorkloadMetrics {
	last := as.Status.Metrics
	if a.opts.MetricsPeriod < 0 || obj == nil || as.Spec.Change != federation.AssignmentApply {
		return nil
	}
	selector, err := recommend.Selector(obj)
	if err != nil {
		return nil // not a workload
	}
	now := a.opts.Clock.Now()
	if last != nil && now.Sub(last.Read.Time) < a.opts.MetricsPeriod {
		return last
	}
	pods, err := a.pods(ctx, obj.GetNamespace(), selector)
	if err != nil {
		a.opts.Logger.Info("Keeping the last metrics report: the pods cannot be listed", "cluster", a.opts.Cluster, "assignment", as.Name, "error", err.Error())
		return last
	}
	m := &federation.WorkloadMetrics{Read: metav1.Time{Time: now}}
	if err := a.usage(ctx, obj.GetNamespace(), selector, pods); err != nil {
		m.Failed = fmt.Sprintf("metrics.k8s.io in cluster %s: %v", a.opts.Cluster, err)
	}
	m.Pods = recommend.ReportOf(pods)
	return m
}

// pods lists the selector's pods in the member.
func (a *Agent) pods(ctx context.Context, ns, selector string) ([]recommend.Pod, error) {
	list, err := a.member.List(ctx, recommend.PodsResource, ns, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return recommend.PodsOf(list)
}

// usage reads metrics.k8s.io's PodMetrics of the selector's pods into pods.
func (a *Agent) usage(ctx context.Context, ns, selector string, pods []recommend.Pod) error {
	list, err := a.member.List(ctx, recommend.PodMetricsResource, ns, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	return recommend.SetUsage(pods, list)
}
