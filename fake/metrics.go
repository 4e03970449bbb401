package fake

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The metrics APIs a member serves through aggregated API servers: metrics.k8s.io (its
// metrics-server), custom.metrics.k8s.io and external.metrics.k8s.io (an adapter such as
// Prometheus Adapter or KEDA).
var (
	// PodMetricsGVR is metrics.k8s.io's PodMetrics.
	PodMetricsGVR = schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}
	// CustomMetricsGroupVersion and ExternalMetricsGroupVersion are the adapters' APIs; an
	// external metric is the resource of its name (List it with the metric's selector).
	CustomMetricsGroupVersion   = schema.GroupVersion{Group: "custom.metrics.k8s.io", Version: "v1beta2"}
	ExternalMetricsGroupVersion = schema.GroupVersion{Group: "external.metrics.k8s.io", Version: "v1beta1"}
)

// DefaultMetricsWindow is the window of the PodMetrics a cluster serves when a point says
// none: metrics-server's.
const DefaultMetricsWindow = 30 * time.Second

// PodMetricsPoint is one point of a pod's usage series: from At on (on the cluster's clock),
// metrics.k8s.io serves Containers' usage, measured over Window ([DefaultMetricsWindow] when
// 0), until the next point. A point with no containers makes the pod's metrics missing from
// then on (metrics-server has no sample for it).
type PodMetricsPoint struct {
	At         time.Time
	Window     time.Duration
	Containers map[string]corev1.ResourceList
}

// MetricPoint is one point of a custom or external metric's series: from At on, the metric
// is Value, until the next point.
type MetricPoint struct {
	At    time.Time
	Value resource.Quantity
}

// metricsState is what a cluster's metrics APIs serve, set by the test. nil until a series is
// set: the APIs are served once the test sets one of theirs (as once metrics-server or an
// adapter is installed).
type metricsState struct {
	pods     map[objectKey][]PodMetricsPoint
	custom   map[customKey][]MetricPoint
	external map[string][]externalSeries // by namespace + "/" + metric
	served   map[string]bool             // by API group
}

// customKey is one custom metric of one object: resource is group-qualified ("pods",
// "ingresses.networking.k8s.io").
type customKey struct{ resource, namespace, name, metric string }

type externalSeries struct {
	labels map[string]string
	points []MetricPoint
}

func (c *Cluster) metricsLocked() *metricsState {
	if c.metrics == nil {
		c.metrics = &metricsState{pods: map[objectKey][]PodMetricsPoint{}, custom: map[customKey][]MetricPoint{},
			external: map[string][]externalSeries{}, served: map[string]bool{}}
	}
	return c.metrics
}

// SetPodMetrics sets the usage series metrics.k8s.io serves for a pod, replacing any other,
// and serves metrics.k8s.io from then on. A pod that has no point at or before the cluster's
// clock has no PodMetrics (a missing pod, as metrics-server reports a pod it has not scraped
// yet). A PodMetrics carries the pod's labels, so a List with a label selector finds the
// pods of a workload; a pod that does not exist has none. The timestamp of what is served is
// the cluster's clock (metrics-server scrapes all along).
func (c *Cluster) SetPodMetrics(namespace, pod string, series ...PodMetricsPoint) {
	c.lock()
	defer c.mu.Unlock()
	m := c.metricsLocked()
	m.served[PodMetricsGVR.Group] = true
	m.pods[objectKey{namespace, pod}] = sortedPoints(series, func(p PodMetricsPoint) time.Time { return p.At })
}

// SetCustomMetric sets the series custom.metrics.k8s.io serves for metric of one object:
// resource is group-qualified ("pods" for a Pods metric, "ingresses.networking.k8s.io" for
// an Object metric). It serves custom.metrics.k8s.io from then on.
func (c *Cluster) SetCustomMetric(namespace, resource, name, metric string, series ...MetricPoint) {
	c.lock()
	defer c.mu.Unlock()
	m := c.metricsLocked()
	m.served[CustomMetricsGroupVersion.Group] = true
	m.custom[customKey{resource, namespace, name, metric}] = sortedPoints(series, func(p MetricPoint) time.Time { return p.At })
}

// SetExternalMetric sets the series external.metrics.k8s.io serves for metric in namespace
// with the given labels (one series per label set), and serves external.metrics.k8s.io
// from then on.
func (c *Cluster) SetExternalMetric(namespace, metric string, seriesLabels map[string]string, series ...MetricPoint) {
	c.lock()
	defer c.mu.Unlock()
	m := c.metricsLocked()
	m.served[ExternalMetricsGroupVersion.Group] = true
	k := namespace + "/" + metric
	s := externalSeries{labels: seriesLabels, points: sortedPoints(series, func(p MetricPoint) time.Time { return p.At })}
	all := slices.DeleteFunc(m.external[k], func(e externalSeries) bool { return labels.Equals(e.labels, seriesLabels) })
	m.external[k] = append(all, s)
}

func sortedPoints[P any](points []P, at func(P) time.Time) []P {
	out := slices.Clone(points)
	slices.SortStableFunc(out, func(a, b P) int { return at(a).Compare(at(b)) })
	return out
}

// current returns the last point at or before now.
func current[P any](points []P, at func(P) time.Time, now time.Time) (P, bool) {
	var zero P
	i := len(points) - 1
	for i >= 0 && at(points[i]).After(now) {
		i--
	}
	if i < 0 {
		return zero, false
	}
	return points[i], true
}

// metricsListLocked serves a List of the metrics APIs: metrics.k8s.io's PodMetrics and
// external.metrics.k8s.io's values. handled is false for every other resource. An API the
// test set no series of is not served (404).
func (c *Cluster) metricsListLocked(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (list *unstructured.UnstructuredList, handled bool, err error) {
	switch gvr.GroupVersion() {
	case PodMetricsGVR.GroupVersion():
	case ExternalMetricsGroupVersion:
	default:
		return nil, false, nil
	}
	if c.metrics == nil || !c.metrics.served[gvr.Group] || (gvr.Group == PodMetricsGVR.Group && gvr.Resource != PodMetricsGVR.Resource) {
		return nil, true, notServed()
	}
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, true, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	if gvr.Group == PodMetricsGVR.Group {
		return c.podMetricsLocked(namespace, sel), true, nil
	}
	return c.externalLocked(namespace, gvr.Resource, sel), true, nil
}

// podMetricsLocked lists the PodMetrics of the pods in namespace ("" = all) that sel selects
// and that have a point now.
func (c *Cluster) podMetricsLocked(namespace string, sel labels.Selector) *unstructured.UnstructuredList {
	now := c.clock.Now()
	list := newMetricsList(PodMetricsGVR.GroupVersion(), "PodMetricsList")
	for _, pod := range c.podsLocked(namespace, sel) {
		p, ok := current(c.metrics.pods[objectKey{pod.GetNamespace(), pod.GetName()}], func(p PodMetricsPoint) time.Time { return p.At }, now)
		if !ok || len(p.Containers) == 0 {
			continue
		}
		window := cmp.Or(p.Window, DefaultMetricsWindow)
		var containers []any
		for _, name := range sortedKeys(p.Containers) {
			usage := map[string]any{}
			for r, q := range p.Containers[name] {
				usage[string(r)] = q.String()
			}
			containers = append(containers, map[string]any{"name": name, "usage": usage})
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": PodMetricsGVR.GroupVersion().String(), "kind": "PodMetrics",
			"metadata": map[string]any{
				"name": pod.GetName(), "namespace": pod.GetNamespace(), "labels": toAny(pod.GetLabels()),
				"creationTimestamp": now.UTC().Format(time.RFC3339),
			},
			"timestamp": now.UTC().Format(time.RFC3339), "window": window.String(), "containers": containers,
		}})
	}
	return list
}

// externalLocked lists the values of metric's series in namespace that sel selects.
func (c *Cluster) externalLocked(namespace, metric string, sel labels.Selector) *unstructured.UnstructuredList {
	now := c.clock.Now()
	list := newMetricsList(ExternalMetricsGroupVersion, "ExternalMetricValueList")
	for _, s := range c.metrics.external[namespace+"/"+metric] {
		p, ok := current(s.points, func(p MetricPoint) time.Time { return p.At }, now)
		if !ok || !sel.Matches(labels.Set(s.labels)) {
			continue
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{
			"metricName": metric, "metricLabels": toAny(s.labels),
			"timestamp": now.UTC().Format(time.RFC3339), "value": p.Value.String(),
		}})
	}
	return list
}

// GetCustomMetric implements [federation.CustomMetricsGetter]: the MetricValueList of metric
// for the object of resource named name in namespace, or with name "*" for every object of
// resource that selector selects (pods only) and that has a point now. It is recorded as a
// Get of custom.metrics.k8s.io/v1beta2 resource/name/metric and fails like any call (a
// partition, an injected fault). Without a custom metric set in the cluster, the API is not
// served (404); a metric with no point now is NotFound too, as an adapter answers.
func (c *Cluster) GetCustomMetric(ctx context.Context, namespace, resource, name, metric, selector, metricSelector string) (*unstructured.UnstructuredList, error) {
	gvr := CustomMetricsGroupVersion.WithResource(resource)
	if _, err := c.begin(ctx, Action{Verb: VerbGet, Resource: gvr, Namespace: namespace, Name: name + "/" + metric,
		ListOptions: metav1.ListOptions{LabelSelector: selector}}); err != nil {
		return nil, err
	}
	c.lock()
	defer c.mu.Unlock()
	if c.metrics == nil || !c.metrics.served[gvr.Group] {
		return nil, notServed()
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	names := []string{name}
	if name == "*" {
		names = nil
		for _, p := range c.podsLocked(namespace, sel) {
			names = append(names, p.GetName())
		}
	}
	now := c.clock.Now()
	list := newMetricsList(CustomMetricsGroupVersion, "MetricValueList")
	for _, n := range names {
		p, ok := current(c.metrics.custom[customKey{resource, namespace, n, metric}], func(p MetricPoint) time.Time { return p.At }, now)
		if !ok {
			continue
		}
		kind, _, _ := strings.Cut(resource, ".")
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{
			"describedObject": map[string]any{"kind": kind, "namespace": namespace, "name": n},
			"metric":          map[string]any{"name": metric},
			"timestamp":       now.UTC().Format(time.RFC3339), "value": p.Value.String(),
		}})
	}
	if name != "*" && len(list.Items) == 0 {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name+"/"+metric)
	}
	return list, nil
}

// podsLocked returns the stored pods of namespace ("" = all) that sel selects, in name order.
func (c *Cluster) podsLocked(namespace string, sel labels.Selector) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for k, p := range c.objects[podsGVR] {
		if (namespace == "" || k.namespace == namespace) && sel.Matches(labels.Set(p.GetLabels())) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(strings.Compare(a.GetNamespace(), b.GetNamespace()), strings.Compare(a.GetName(), b.GetName()))
	})
	return out
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// servedMetricsLocked lists the metrics APIs' resources the cluster serves, for discovery.
func (c *Cluster) servedMetricsLocked() []metav1.APIResource {
	if c.metrics == nil {
		return nil
	}
	var out []metav1.APIResource
	if c.metrics.served[PodMetricsGVR.Group] {
		out = append(out, metav1.APIResource{Name: "pods", Group: PodMetricsGVR.Group, Version: PodMetricsGVR.Version, Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}})
	}
	if c.metrics.served[CustomMetricsGroupVersion.Group] {
		out = append(out, metav1.APIResource{Name: "*", Group: CustomMetricsGroupVersion.Group, Version: CustomMetricsGroupVersion.Version, Namespaced: true, Kind: "MetricValueList", Verbs: []string{"get"}})
	}
	if c.metrics.served[ExternalMetricsGroupVersion.Group] {
		out = append(out, metav1.APIResource{Name: "*", Group: ExternalMetricsGroupVersion.Group, Version: ExternalMetricsGroupVersion.Version, Namespaced: true, Kind: "ExternalMetricValueList", Verbs: []string{"list"}})
	}
	return out
}

func newMetricsList(gv schema.GroupVersion, kind string) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{"metadata": map[string]any{}}}
	list.SetAPIVersion(gv.String())
	list.SetKind(kind)
	list.Items = []unstructured.Unstructured{}
	return list
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
