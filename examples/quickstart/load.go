package main

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// pods plays the members' ReplicaSet controllers and metrics-server for app-frontend, once
// w.load is set (the simulated members make no pods of their own): each member runs as many
// Running, Ready pods as its Deployment has ready replicas, and each uses the member's load
// (millicores of cpu) shared between them, as metrics.k8s.io reports it.
func (w *world) pods() error {
	if w.load == nil {
		return nil
	}
	for _, name := range w.fleet.Names() {
		m, _ := w.fleet.Member(name)
		if m.Partitioned() {
			continue
		}
		n := int64(0)
		if d, err := m.Peek(deployment.TargetGVR(), key.Namespace, key.Name); err == nil {
			n, _, _ = unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		}
		if err := w.podsIn(m, n); err != nil {
			return err
		}
	}
	return nil
}

// podsIn makes m run n pods of app-frontend, with m's share of the load.
func (w *world) podsIn(m *fake.Cluster, n int64) error {
	list, err := m.List(w.ctx, podsGVR, key.Namespace, metav1.ListOptions{LabelSelector: "app=frontend"})
	if err != nil {
		return err
	}
	for i := n; i < int64(len(list.Items)); i++ {
		if err := m.Delete(w.ctx, podsGVR, key.Namespace, fmt.Sprintf("frontend-%d", i), metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	started := w.clock.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	for i := range n {
		pod := fmt.Sprintf("frontend-%d", i)
		if i >= int64(len(list.Items)) {
			if err := m.Apply(fmt.Sprintf(`{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: %s, labels: {app: frontend}},
  spec: {containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 250m}}}]},
  status: {phase: Running, startTime: %q, conditions: [{type: Ready, status: "True", lastTransitionTime: %q}]}}`, pod, key.Namespace, started, started)); err != nil {
				return err
			}
		}
		use := *resource.NewMilliQuantity(w.load[m.Name()]/n, resource.DecimalSI)
		m.SetPodMetrics(key.Namespace, pod, fake.PodMetricsPoint{At: w.clock.Now(), Containers: map[string]corev1.ResourceList{"nginx": {corev1.ResourceCPU: use}}})
	}
	return nil
}

// setLoad gives every member running app-frontend a load of perPod millicores per pod it
// runs now.
func (w *world) setLoad(perPod int64) error {
	w.load = map[string]int64{}
	for _, name := range w.fleet.Names() {
		m, _ := w.fleet.Member(name)
		if d, err := m.Peek(deployment.TargetGVR(), key.Namespace, key.Name); err == nil {
			n, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
			w.load[name] = perPod * n
		}
	}
	return w.pods()
}

// setLoadTotal scales every member's load by f (0.2: a fifth of it).
func (w *world) setLoadTotal(f float64) {
	for name, l := range w.load {
		w.load[name] = int64(float64(l) * f)
	}
}

// autoscaleWith gives the ReplicaSchedulingPreference spec.autoscale, as a user would.
func (w *world) autoscaleWith(spec map[string]any) error {
	u, err := w.host.Get(w.ctx, federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedMap(u.Object, spec, "spec", "autoscale"); err != nil {
		return err
	}
	_, err = w.host.Update(w.ctx, federation.ReplicaSchedulingPreferenceGVR, u)
	return err
}
