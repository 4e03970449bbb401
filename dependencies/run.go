package dependencies

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run passes over namespaces until ctx is done. It watches the workload types' federated
// objects, the dependency kinds' federated objects and the host's ConfigMaps, Secrets,
// ServiceAccounts and PVCs; any change queues the object's namespace. Its passes read from
// Run's caches, but Secrets are cached without their data, so a pass reads each Secret it
// needs from the API server: the host's Secrets are not kept in memory.
//
// Run returns an error when its caches do not sync within Options.CacheSyncTimeout (a CRD
// the host does not serve). Otherwise it blocks until ctx is done and returns nil after every
// goroutine it started has exited.
func (d *Dependencies) Run(ctx context.Context) error {
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
		native := loop.Source{GVR: typ.TargetGVR(), Namespace: d.opts.Namespace, Keys: byNamespace}
		if kind == KindSecret {
			native.Transform, native.TransformName = dropSecretData, "dependencies/secret-without-data"
		}
		sources = append(sources, native)
	}
	l, err := loop.New(d.host, sources, loop.Options{
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

// dropSecretData keeps a Secret's metadata only: a change still queues its namespace, and a
// pass reads the whole Secret from the host.
func dropSecretData(u *unstructured.Unstructured) {
	delete(u.Object, "data")
	delete(u.Object, "stringData")
}
