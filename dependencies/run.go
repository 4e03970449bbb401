package dependencies

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run passes over namespaces until ctx is done. It watches the workload types' federated
// objects, the dependency kinds' federated objects and the host's ConfigMaps,
// ServiceAccounts and PVCs; any change queues the object's namespace. A change of a
// Cluster's labels, spec or readiness queues every namespace whose last pass found
// workloads that propagate their dependencies. Its passes read from
// Run's caches. The host's Secrets are neither watched nor listed: a pass gets each Secret
// it needs from the API server, and a namespace with Secret dependencies is looked at again
// every [SecretRecheck].
//
// Run returns an error when its caches do not sync within Options.CacheSyncTimeout (a CRD
// the host does not serve). Otherwise it blocks until ctx is done and returns nil after every
// goroutine it started has exited.
func (d *Dependencies) Run(ctx context.Context) error {
	l, err := loop.New(d.host, d.sources(), loop.Options{
		Name:             "dependencies",
		Workers:          d.opts.Workers,
		Clock:            d.opts.Clock,
		Logger:           d.opts.Logger,
		CacheSyncTimeout: d.opts.CacheSyncTimeout,
		Shard:            d.opts.Shard,
		Registerer:       d.opts.Registerer,
		Cache:            d.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return d.reconcileFrom(ctx, cached, key)
		}))
	}
	if err != nil {
		return fmt.Errorf("dependencies: %w", err)
	}
	return nil
}

// clusterChanged reports whether what a pass reads of a Cluster differs between two versions:
// its labels, spec, deletion and whether it is Ready. Heartbeats and capacity, which the
// cluster monitor refreshes often, do not: a pass reads every Secret a namespace's workloads
// need from the host.
func clusterChanged(old, new *unstructured.Unstructured) bool {
	view := func(u *unstructured.Unstructured) []any {
		ready := ""
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == federation.ConditionReady {
				ready, _ = m["status"].(string)
			}
		}
		return []any{u.GetLabels(), u.Object["spec"], u.GetDeletionTimestamp() != nil, ready}
	}
	return !apiequality.Semantic.DeepEqual(view(old), view(new))
}

// Watches returns the host resources Run watches: the workload types' and the dependency
// kinds' federated resources, the host's ConfigMaps, ServiceAccounts and
// PersistentVolumeClaims (in Options.Namespace; never its Secrets), and the Clusters.
func (d *Dependencies) Watches() []federation.Watch { return loop.Watches(d.sources()) }

// sources are what Run watches, and how a change maps to keys: a namespace.
func (d *Dependencies) sources() []loop.Source {
	byNamespace := func(u *unstructured.Unstructured) []federation.Key {
		return []federation.Key{{Namespace: u.GetNamespace()}}
	}
	var sources []loop.Source
	for _, w := range d.workloads {
		sources = append(sources, loop.Source{GVR: w.typ.FederatedGVR(), Namespace: d.opts.Namespace, Keys: byNamespace})
	}
	for _, kind := range []string{KindConfigMap, KindPersistentVolumeClaim, KindSecret, KindServiceAccount} {
		typ := d.kinds[kind]
		sources = append(sources, loop.Source{GVR: typ.FederatedGVR(), Namespace: d.opts.Namespace, Keys: byNamespace})
		if kind == KindSecret {
			// The host's Secrets are not watched: the control plane's role may get a Secret
			// by name, never list the Secrets of the workloads' namespaces. A pass reads each
			// Secret it needs from the host, and looks again every SecretRecheck.
			continue
		}
		sources = append(sources, loop.Source{GVR: typ.TargetGVR(), Namespace: d.opts.Namespace, Keys: byNamespace})
	}
	// A Cluster's labels choose selector overrides (what a cluster's pods refer to), and its
	// spec (taints, region, zones) and readiness what a user's dependency refuses: their
	// change concerns every namespace with workloads that propagate their dependencies.
	sources = append(sources, loop.Source{GVR: federation.ClusterGVR, Changed: clusterChanged,
		Keys: func(*unstructured.Unstructured) []federation.Key { return d.namespaceKeys() }})
	return sources
}
