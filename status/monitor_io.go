package status

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// coreGVR is a core/v1 resource.
func coreGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: resource}
}

// listPageSize is the page size of the monitor's node and pod lists: a large cluster is read
// in pages, as kubectl does, instead of one answer of hundreds of megabytes.
const listPageSize = 500

// readInfo reads the member's version, nodes and pods, and summarizes them.
func (m *ClusterMonitor) readInfo(ctx context.Context, name string) (clusterInfo, error) {
	raw, err := m.clusters.Client(name)
	if err != nil {
		return clusterInfo{}, err
	}
	client := m.metrics.members.Client(name, raw) // the lists below are member requests
	var info clusterInfo
	if vg, ok := raw.(federation.VersionGetter); ok {
		v, err := bounded(ctx, m.opts, func(ctx context.Context) (*version.Info, error) { return vg.ServerVersion(ctx) })
		m.metrics.members.Observe(name, "get", err)
		if err != nil {
			return clusterInfo{}, fmt.Errorf("get version: %w", err)
		}
		info.version = v.GitVersion
	}
	var nodes []corev1.Node
	if err := m.listAll(ctx, client, coreGVR("nodes"), func(u *unstructured.Unstructured) error {
		var n corev1.Node
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &n); err != nil {
			return fmt.Errorf("node %q: %w", u.GetName(), err)
		}
		nodes = append(nodes, n)
		return nil
	}); err != nil {
		return clusterInfo{}, err
	}
	var pods []corev1.Pod
	if err := m.listAll(ctx, client, coreGVR("pods"), func(u *unstructured.Unstructured) error {
		// Only what the requests and the phase need: a pod's status and metadata are large.
		var p corev1.Pod
		spec, _ := u.Object["spec"].(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &p.Spec); err != nil {
			return fmt.Errorf("pod %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		p.Status.Phase = corev1.PodPhase(phase)
		pods = append(pods, p)
		return nil
	}); err != nil {
		return clusterInfo{}, err
	}
	info.region, info.zones, info.capacity, info.available = summarize(nodes, pods)
	return info, nil
}

// listAll lists gvr in every namespace, page by page, and calls fn for each item. Each page
// is bounded by the monitor's Timeout.
func (m *ClusterMonitor) listAll(ctx context.Context, c federation.Reader, gvr schema.GroupVersionResource, fn func(*unstructured.Unstructured) error) error {
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		list, err := bounded(ctx, m.opts, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
			return c.List(ctx, gvr, "", opts)
		})
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for i := range list.Items {
			if err := fn(&list.Items[i]); err != nil {
				return err
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// bounded runs one member request with a context that ends after opts.Timeout on
// opts.Clock: a member that accepts the connection and never answers holds a worker no
// longer than a probe would. A request cut off that way fails with errReadTimeout.
func bounded[T any](ctx context.Context, opts MonitorOptions, call func(context.Context) (T, error)) (T, error) {
	rctx, cancel := loop.WithTimeout(ctx, opts.Clock, opts.Timeout, errReadTimeout)
	defer cancel()
	v, err := call(rctx)
	if err != nil && context.Cause(rctx) == errReadTimeout {
		err = fmt.Errorf("%w: no answer within %s: %w", errReadTimeout, opts.Timeout, err)
	}
	return v, err
}

// writeStatus writes the Cluster's status (the monitor owns all of it), re-reading after a
// Conflict. It returns the object as stored.
func (m *ClusterMonitor) writeStatus(ctx context.Context, u *unstructured.Unstructured, st federation.ClusterStatus) (*unstructured.Unstructured, error) {
	enc, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return nil, fmt.Errorf("status: encode the status of Cluster %q: %w", u.GetName(), err)
	}
	return m.update(ctx, u, "status", func(u *unstructured.Unstructured) error {
		u.Object["status"] = runtime.DeepCopyJSON(enc)
		return nil
	})
}

// writeTaints brings the monitor's taints of spec.taints in line with in, re-reading after a
// Conflict (and keeping the user's taints of the object as it then is). It returns the object
// as stored.
func (m *ClusterMonitor) writeTaints(ctx context.Context, u *unstructured.Unstructured, in taintInputs) (*unstructured.Unstructured, error) {
	return m.update(ctx, u, "taints", func(u *unstructured.Unstructured) error {
		var spec struct {
			Taints []corev1.Taint `json:"taints,omitempty"`
		}
		if raw, ok := u.Object["spec"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
				return fmt.Errorf("spec.taints: %w", err)
			}
		}
		taints, _, _ := desiredTaints(spec.Taints, in)
		list := make([]any, 0, len(taints))
		for i := range taints {
			t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&taints[i])
			if err != nil {
				return fmt.Errorf("encode taint %s: %w", taints[i].Key, err)
			}
			list = append(list, t)
		}
		if len(list) == 0 {
			unstructured.RemoveNestedField(u.Object, "spec", "taints")
			return nil
		}
		return unstructured.SetNestedSlice(u.Object, list, "spec", "taints")
	})
}

// update applies mutate to u and writes the part ("status" or "taints"), re-reading the
// Cluster and applying mutate again after a Conflict, at most conflictRetries times.
func (m *ClusterMonitor) update(ctx context.Context, u *unstructured.Unstructured, part string, mutate func(*unstructured.Unstructured) error) (*unstructured.Unstructured, error) {
	name := u.GetName()
	for attempt := 1; ; attempt++ {
		u = u.DeepCopy()
		if err := mutate(u); err != nil {
			return nil, federation.Terminal(fmt.Errorf("status: Cluster %q: %w", name, err))
		}
		var out *unstructured.Unstructured
		var err error
		if part == "status" {
			out, err = m.host.UpdateStatus(ctx, federation.ClusterGVR, u)
		} else {
			out, err = m.host.Update(ctx, federation.ClusterGVR, u)
		}
		if err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) || attempt >= conflictRetries {
			return nil, fmt.Errorf("status: write the %s of Cluster %q: %w", part, name, err)
		}
		if u, err = m.host.Get(ctx, federation.ClusterGVR, "", name); err != nil {
			return nil, fmt.Errorf("status: get Cluster %q: %w", name, err)
		}
	}
}
