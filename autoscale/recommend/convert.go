package recommend

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// PodOf is what the autoscaler needs of a pod: its phase, readiness, start and the requests
// of the containers that run with it (restartable init containers, sidecars, included).
func PodOf(p *corev1.Pod) Pod {
	out := Pod{Name: p.Name, Phase: p.Status.Phase, Deleting: p.DeletionTimestamp != nil}
	if p.Status.StartTime != nil {
		out.Started = p.Status.StartTime.Time
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Ready, out.ReadySince = c.Status, c.LastTransitionTime.Time
		}
	}
	containers := p.Spec.Containers
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c) // a sidecar runs with the pod
		}
	}
	for _, c := range containers {
		out.Containers = append(out.Containers, Container{Name: c.Name, Requests: milliValues(c.Resources.Requests)})
	}
	return out
}

// Selector returns a workload's spec.selector as a label selector string.
func Selector(w *unstructured.Unstructured) (string, error) {
	raw, found, err := unstructured.NestedMap(w.Object, "spec", "selector")
	if err != nil || !found {
		return "", fmt.Errorf("no spec.selector")
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return "", fmt.Errorf("spec.selector: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", fmt.Errorf("spec.selector: %w", err)
	}
	return sel.String(), nil
}

// PodsOf decodes a list of pods ([PodOf] each).
func PodsOf(list *unstructured.UnstructuredList) ([]Pod, error) {
	out := make([]Pod, 0, len(list.Items))
	for i := range list.Items {
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &p); err != nil {
			return nil, fmt.Errorf("pod %s: %w", list.Items[i].GetName(), err)
		}
		out = append(out, PodOf(&p))
	}
	return out, nil
}

// The resources a source lists in a member to sample a workload: its pods, and their
// metrics.k8s.io PodMetrics (both with the workload's selector, [Selector]).
var (
	PodsResource       = corev1.SchemeGroupVersion.WithResource("pods")
	PodMetricsResource = schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}
)

// SetUsage decodes a list of metrics.k8s.io PodMetrics ([UsageOf] each) into the Usage of
// the pods of the same name; a pod without PodMetrics gets none. The push members' source
// (package autoscale) and a pull member's agent (package agent) read usage with it.
func SetUsage(pods []Pod, list *unstructured.UnstructuredList) error {
	byName := make(map[string]*Usage, len(list.Items))
	for i := range list.Items {
		u, err := UsageOf(list.Items[i].Object)
		if err != nil {
			return fmt.Errorf("PodMetrics %s: %w", list.Items[i].GetName(), err)
		}
		byName[list.Items[i].GetName()] = u
	}
	for i := range pods {
		pods[i].Usage = byName[pods[i].Name]
	}
	return nil
}

// UsageOf decodes one metrics.k8s.io PodMetrics object.
func UsageOf(obj map[string]any) (*Usage, error) {
	var pm struct {
		Timestamp  metav1.Time     `json:"timestamp"`
		Window     metav1.Duration `json:"window"`
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &pm); err != nil {
		return nil, err
	}
	u := &Usage{Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration, Containers: map[string]map[corev1.ResourceName]int64{}}
	for _, c := range pm.Containers {
		u.Containers[c.Name] = milliValues(c.Usage)
	}
	return u, nil
}

// ReportOf is pods as a pull agent reports them (federation.WorkloadMetrics' Pods);
// [PodsOfReport] reads them back. Pods metrics (Values) are not reported.
func ReportOf(pods []Pod) []federation.PodMetrics {
	out := make([]federation.PodMetrics, 0, len(pods))
	for _, p := range pods {
		r := federation.PodMetrics{Name: p.Name, Phase: p.Phase, Deleting: p.Deleting, Ready: p.Ready,
			ReadySince: timeOrNil(p.ReadySince), Started: timeOrNil(p.Started)}
		for _, c := range p.Containers {
			r.Requests = append(r.Requests, federation.ContainerResources{Name: c.Name, Resources: quantities(c.Requests)})
		}
		if p.Usage != nil {
			r.Sampled, r.Window = &metav1.Time{Time: p.Usage.Timestamp}, &metav1.Duration{Duration: p.Usage.Window}
			for _, name := range slices.Sorted(maps.Keys(p.Usage.Containers)) {
				r.Usage = append(r.Usage, federation.ContainerResources{Name: name, Resources: quantities(p.Usage.Containers[name])})
			}
		}
		out = append(out, r)
	}
	return out
}

// PodsOfReport is the pods of a pull agent's report ([ReportOf]'s inverse).
func PodsOfReport(report []federation.PodMetrics) []Pod {
	out := make([]Pod, 0, len(report))
	for _, r := range report {
		p := Pod{Name: r.Name, Phase: r.Phase, Deleting: r.Deleting, Ready: r.Ready, ReadySince: timeOf(r.ReadySince), Started: timeOf(r.Started)}
		for _, c := range r.Requests {
			p.Containers = append(p.Containers, Container{Name: c.Name, Requests: milliValues(c.Resources)})
		}
		if r.Sampled != nil {
			p.Usage = &Usage{Timestamp: r.Sampled.Time, Containers: make(map[string]map[corev1.ResourceName]int64, len(r.Usage))}
			if r.Window != nil {
				p.Usage.Window = r.Window.Duration
			}
			for _, c := range r.Usage {
				p.Usage.Containers[c.Name] = milliValues(c.Resources)
			}
		}
		out = append(out, p)
	}
	return out
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func milliValues(l corev1.ResourceList) map[corev1.ResourceName]int64 {
	if len(l) == 0 {
		return nil
	}
	out := make(map[corev1.ResourceName]int64, len(l))
	for k, q := range l {
		out[k] = q.MilliValue()
	}
	return out
}

func quantities(m map[corev1.ResourceName]int64) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := make(corev1.ResourceList, len(m))
	for k, v := range m {
		out[k] = *resource.NewMilliQuantity(v, resource.DecimalSI)
	}
	return out
}
