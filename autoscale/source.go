package autoscale

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
)

// MetricsSource gathers what one member reports about a workload. The loop asks it once per
// scheduled cluster and pass; [Members] reads push members through their ClusterClients,
// [Reports] reads what pull members' agents report, and [ByMode] puts them together.
type MetricsSource interface {
	// Sample reads req.Cluster's part of the workload: its pods, their usage and metrics,
	// the Object and External metrics, and (req.HPA) its HorizontalPodAutoscaler. It sets
	// Read when the data was read (req.Now for a live read) and leaves ClusterReady to the
	// loop. A metric the member cannot report goes in Sample.Failed; an error means nothing
	// could be read, and the loop keeps the member's last sample while it is fresh.
	Sample(ctx context.Context, req SampleRequest) (Sample, error)
}

// SampleRequest is one [MetricsSource.Sample] call.
type SampleRequest struct {
	// Cluster is the member.
	Cluster string
	// Type is the workload's type; Key its namespace and name (the federated object's).
	Type federation.TypeConfig
	Key  federation.Key
	// Metrics are spec.autoscale.metrics.
	Metrics []autoscalingv2.MetricSpec
	// HPA asks for the member's HorizontalPodAutoscaler of the workload (Distributed mode).
	HPA bool
	// Pull reports a pull cluster (spec.mode Pull): the hub cannot reach it ([Reports]).
	Pull bool
	// Now stamps a live read.
	Now time.Time
}

// HPAGVR is the resource of HorizontalPodAutoscalers (autoscaling/v2).
var HPAGVR = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")

var externalGV = schema.GroupVersion{Group: "external.metrics.k8s.io", Version: "v1beta1"}

// Members is the [MetricsSource] of push members: it reads each member's API through its
// ClusterClient, as a HorizontalPodAutoscaler's controller reads its own cluster. The
// workload (status.replicas, spec.selector), the selector's pods, metrics.k8s.io's PodMetrics
// (Resource and ContainerResource metrics), custom.metrics.k8s.io through
// [federation.CustomMetricsGetter] (Pods and Object metrics) and external.metrics.k8s.io
// (External metrics). A metrics API the member does not serve makes its metrics Failed for
// that member, not an error.
type Members struct {
	// Clusters hands out the members' clients.
	Clusters federation.ClusterSet
	// Identity is the value of federation.ManagedByLabel on the HorizontalPodAutoscalers it
	// writes (as [HPAWriter]). Default: federation.ManagedByValue.
	Identity string
	// Gate is where DeleteHPA sends its deletes (package gate: the HPA must carry
	// federation.ManagedByLabel with Identity, outside the reserved namespaces). nil:
	// gate.New(gate.Options{}).
	Gate *gate.Gate
}

var (
	_ MetricsSource = Members{}
	_ HPAWriter     = Members{}
)

// Sample implements [MetricsSource].
func (m Members) Sample(ctx context.Context, req SampleRequest) (Sample, error) {
	s := Sample{Cluster: req.Cluster}
	c, err := m.Clusters.Client(req.Cluster)
	if err != nil {
		return s, err
	}
	ns := req.Key.Namespace
	w, err := c.Get(ctx, req.Type.TargetGVR(), ns, req.Key.Name)
	switch {
	case apierrors.IsNotFound(err):
		s.Read = req.Now // nothing runs there yet
		return s, nil
	case err != nil:
		return s, err
	}
	replicas, _, _ := unstructured.NestedInt64(w.Object, "status", "replicas")
	s.Replicas = int32(replicas)
	selector, err := recommend.Selector(w)
	if err != nil {
		return s, fmt.Errorf("%s %s in cluster %s: %w", req.Type.Target.Kind, req.Key, req.Cluster, err)
	}
	if s.Pods, err = pods(ctx, c, ns, selector); err != nil {
		return s, err
	}
	r := reader{c: c, ns: ns, selector: selector, s: &s}
	for _, spec := range req.Metrics {
		if err := r.read(ctx, spec); err != nil {
			return s, err
		}
	}
	if req.HPA {
		if err := r.hpa(ctx, req.Key.Name); err != nil {
			return s, err
		}
	}
	s.Read = req.Now
	return s, nil
}

// pods lists the selector's pods.
func pods(ctx context.Context, c federation.ClusterClient, ns, selector string) ([]Pod, error) {
	list, err := c.List(ctx, recommend.PodsResource, ns, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return recommend.PodsOf(list)
}

// reader reads the metrics of one member into s.
type reader struct {
	c        federation.ClusterClient
	ns       string
	selector string
	s        *Sample
	resource bool // metrics.k8s.io read already
}

// read reads one metric's data. An error is the member's (unreachable); a metric the member
// cannot report is recorded in s.Failed.
func (r *reader) read(ctx context.Context, m autoscalingv2.MetricSpec) error {
	key := MetricKey(m)
	var err error
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
		if r.resource {
			return nil
		}
		r.resource = true
		err = r.podMetrics(ctx)
	case autoscalingv2.PodsMetricSourceType:
		err = r.custom(ctx, key, "pods", "*", m.Pods.Metric)
	case autoscalingv2.ObjectMetricSourceType:
		err = r.object(ctx, key, m.Object)
	case autoscalingv2.ExternalMetricSourceType:
		err = r.external(ctx, key, m.External.Metric)
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, federation.ErrUnreachable) || ctx.Err() != nil {
		return err
	}
	if r.s.Failed == nil {
		r.s.Failed = map[string]string{}
	}
	r.s.Failed[key] = failure(err)
	return nil
}

// failure says why a metric could not be read.
func failure(err error) string {
	if apierrors.IsNotFound(err) {
		return "not served: " + err.Error()
	}
	return err.Error()
}

// podMetrics reads metrics.k8s.io's PodMetrics of the pods into their Usage.
func (r *reader) podMetrics(ctx context.Context) error {
	list, err := r.c.List(ctx, recommend.PodMetricsResource, r.ns, metav1.ListOptions{LabelSelector: r.selector})
	if err != nil {
		return err
	}
	return recommend.SetUsage(r.s.Pods, list)
}

// custom reads a custom metric: a Pods metric into the pods' Values (name "*"), an Object
// metric into the sample's Values.
func (r *reader) custom(ctx context.Context, key, resource, name string, id autoscalingv2.MetricIdentifier) error {
	g, ok := r.c.(federation.CustomMetricsGetter)
	if !ok {
		return fmt.Errorf("this cluster's client cannot read custom.metrics.k8s.io")
	}
	list, err := g.GetCustomMetric(ctx, r.ns, resource, name, id.Name, r.selector, selectorString(id.Selector))
	if err != nil {
		return err
	}
	values := map[string]int64{}
	for _, item := range list.Items {
		v, err := quantity(item.Object, "value")
		if err != nil {
			return err
		}
		n, _, _ := unstructured.NestedString(item.Object, "describedObject", "name")
		values[n] = v
	}
	if name != "*" {
		v, ok := values[name]
		if !ok {
			return fmt.Errorf("no value of %s for %s %s", id.Name, resource, name)
		}
		r.value(key, v)
		return nil
	}
	for i := range r.s.Pods {
		if v, ok := values[r.s.Pods[i].Name]; ok {
			if r.s.Pods[i].Values == nil {
				r.s.Pods[i].Values = map[string]int64{}
			}
			r.s.Pods[i].Values[key] = v
		}
	}
	return nil
}

// object reads an Object metric: the described object's resource comes from the client's
// REST mapping when it has one, else from its kind.
func (r *reader) object(ctx context.Context, key string, o *autoscalingv2.ObjectMetricSource) error {
	gv, err := schema.ParseGroupVersion(o.DescribedObject.APIVersion)
	if err != nil {
		return fmt.Errorf("describedObject.apiVersion: %w", err)
	}
	gvk := gv.WithKind(o.DescribedObject.Kind)
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	if m, ok := r.c.(interface {
		RESTMapping(schema.GroupVersionKind) (*meta.RESTMapping, error)
	}); ok {
		if mapping, err := m.RESTMapping(gvk); err == nil {
			gvr = mapping.Resource
		}
	}
	res := gvr.Resource
	if gvr.Group != "" {
		res += "." + gvr.Group
	}
	return r.custom(ctx, key, res, o.DescribedObject.Name, o.Metric)
}

// external reads an External metric: the sum of the series its selector selects, as an HPA
// sums them.
func (r *reader) external(ctx context.Context, key string, id autoscalingv2.MetricIdentifier) error {
	list, err := r.c.List(ctx, externalGV.WithResource(id.Name), r.ns, metav1.ListOptions{LabelSelector: selectorString(id.Selector)})
	if err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no series of %s", id.Name)
	}
	var sum int64
	for _, item := range list.Items {
		v, err := quantity(item.Object, "value")
		if err != nil {
			return err
		}
		sum = recommend.AddMilli(sum, v)
	}
	r.value(key, sum)
	return nil
}

func (r *reader) value(key string, v int64) {
	if r.s.Values == nil {
		r.s.Values = map[string]Value{}
	}
	r.s.Values[key] = Value{Milli: v}
}

// hpa reads the member's HorizontalPodAutoscaler of the workload, if any.
func (r *reader) hpa(ctx context.Context, name string) error {
	u, err := r.c.Get(ctx, HPAGVR, r.ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	var h autoscalingv2.HorizontalPodAutoscaler
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &h); err != nil {
		return fmt.Errorf("HorizontalPodAutoscaler %s: %w", name, err)
	}
	r.s.HPA = hpaOf(&h)
	return nil
}

func hpaOf(h *autoscalingv2.HorizontalPodAutoscaler) *MemberHPA {
	out := &MemberHPA{Max: h.Spec.MaxReplicas, Current: h.Status.CurrentReplicas, Desired: h.Status.DesiredReplicas, Active: true}
	if h.Spec.MinReplicas != nil {
		out.Min = *h.Spec.MinReplicas
	}
	for _, c := range h.Status.Conditions {
		if c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionFalse {
			out.Active, out.Message = false, c.Reason+": "+c.Message
		}
	}
	return out
}

func quantity(obj map[string]any, field string) (int64, error) {
	s, _, _ := unstructured.NestedString(obj, field)
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", field, s, err)
	}
	return q.MilliValue(), nil
}

func selectorString(ls *metav1.LabelSelector) string {
	if ls == nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return ""
	}
	return sel.String()
}
