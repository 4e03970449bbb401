package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// The autoscaling feature (Features.Autoscale): a few FederatedDeployments placed in every
// cluster whose preference has spec.autoscale, their pods in every member, and the load on
// those pods flapping from step to step, seeded. One member never serves metrics.k8s.io (a
// metric its HPA could not compute), and a pod now and then has no sample (a missing pod).
// The chaos's partitions and the outage cut members off meanwhile. The rules after every
// step (check_autoscale.go) watch the fleet totals the autoscaler writes.

// Autoscaled workloads, their pods and their bounds.
const (
	scaledWorkloads = 2
	scaledPods      = 2 // per member
	scaledMin       = 2
	scaledMax       = 40
	// scaledWindow is both stabilization windows of their behavior, in seconds: short
	// enough for a soak of 20 steps of 10 seconds to see several.
	scaledWindow = 60
)

// scaledKey is the i-th autoscaled workload's key: its FederatedDeployment's and its
// preference's.
func scaledKey(objects, i int) federation.Key {
	return federation.Key{Namespace: plainNamespaces(objects)[0], Name: fmt.Sprintf("scaled-%d", i)}
}

// seedAutoscale creates the autoscaled workloads and their pods in every member.
func (w *World) seedAutoscale(ctx context.Context) error {
	if w.Config.Without.Autoscale {
		return nil
	}
	names := w.Fleet.Names()
	w.autoscale = &autoscaleWatch{totals: map[federation.Key]*totalHistory{}, cutSince: map[string]time.Time{}, noMetrics: names[len(names)-1]}
	for i := range scaledWorkloads {
		key := scaledKey(w.Config.Objects, i)
		if err := w.createYAML(ctx, federation.DeploymentType.FederatedGVR(), scaledDeployment(key)); err != nil {
			return err
		}
		if err := w.createYAML(ctx, federation.ReplicaSchedulingPreferenceGVR, scaledPreference(key)); err != nil {
			return err
		}
		w.autoscale.totals[key] = &totalHistory{last: -1}
		for _, name := range w.Fleet.Names() {
			m, _ := w.Fleet.Member(name)
			for p := range scaledPods {
				if err := m.Seed(scaledPod(key, p, w.Clock.Now())); err != nil {
					return fmt.Errorf("soak: seed a pod of %s in %s: %w", key, name, err)
				}
			}
		}
	}
	return nil
}

// createYAML creates the object doc (flow YAML) on the host as the user.
func (w *World) createYAML(ctx context.Context, gvr schema.GroupVersionResource, doc string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return err
	}
	_, err := w.userCreate(ctx, gvr, u)
	return err
}

func scaledDeployment(key federation.Key) string {
	return fmt.Sprintf(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment, metadata: {name: %s, namespace: %s},
  spec: {template: {metadata: {labels: {app: %s}}, spec: {replicas: 4, selector: {matchLabels: {app: %s}}, template: {metadata: {labels: {app: %s}}, spec: {containers: [{name: app, image: "nginx:1.27"}]}}}},
    placement: {clusterSelector: {matchLabels: {}}}}}`, key.Name, key.Namespace, key.Name, key.Name, key.Name)
}

func scaledPreference(key federation.Key) string {
	return fmt.Sprintf(`{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference, metadata: {name: %s, namespace: %s},
  spec: {targetKind: FederatedDeployment, totalReplicas: 4, rebalance: true,
    autoscale: {minReplicas: %d, maxReplicas: %d, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}],
      behavior: {scaleUp: {stabilizationWindowSeconds: %d}, scaleDown: {stabilizationWindowSeconds: %d}}}}}`,
		key.Name, key.Namespace, scaledMin, scaledMax, scaledWindow, scaledWindow)
}

// scaledPod is the p-th pod of key's workload in a member, ready for an hour, asking 1 cpu.
func scaledPod(key federation.Key, p int, now time.Time) *unstructured.Unstructured {
	since := now.Add(-time.Hour).UTC().Format(time.RFC3339)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", key.Name, p), "namespace": key.Namespace, "labels": map[string]any{"app": key.Name}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}}},
		"status": map[string]any{"phase": "Running", "startTime": since,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": since}}},
	}}
}

// flapLoad sets the load of every autoscaled pod for step (seeded: the step's load replays):
// each workload high (1.2 cores of the 1 asked) or low (0.2) in every member, as a load
// that flaps faster than the window; a pod in ten has no sample. The last member never
// serves metrics.k8s.io (the one whose name sorted last when the soak began).
func (w *World) flapLoad(step int) {
	if w.Config.Without.Autoscale || w.autoscale == nil {
		return
	}
	r := rand.New(rand.NewPCG(w.Config.Seed, 0xa5ca1e+uint64(step)))
	now := w.Clock.Now()
	for i := range scaledWorkloads {
		key := scaledKey(w.Config.Objects, i)
		milli := int64(200)
		if r.IntN(2) == 0 {
			milli = 1200
		}
		for _, name := range w.Fleet.Names() {
			m, ok := w.Fleet.Member(name)
			if !ok || name == w.autoscale.noMetrics {
				continue
			}
			for p := range scaledPods {
				point := fake.PodMetricsPoint{At: now, Containers: map[string]corev1.ResourceList{"app": {corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}}
				if r.IntN(10) == 0 {
					point.Containers = nil // no sample for this pod
				}
				m.SetPodMetrics(key.Namespace, fmt.Sprintf("%s-%d", key.Name, p), point)
			}
		}
	}
}
