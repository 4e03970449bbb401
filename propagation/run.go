package propagation

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run propagates until ctx is done. It watches the native objects of its types, their
// Federated<Kind> and ReplicaSchedulingPreferences (a change reconciles the object of the
// same name), and the policies: a PropagationPolicy change reconciles every native object
// of its namespace, a ClusterPropagationPolicy change every native object (a change of its
// spec: not of its status). Its passes read
// from the informer caches; writes go to the host. Run returns an error when its caches do
// not sync within Options.CacheSyncTimeout (a policy CRD missing on the host, say), else
// nil once every goroutine it started has exited.
func (p *Propagator) Run(ctx context.Context) error {
	var l *loop.Loop
	l, err := loop.New(p.host, p.sources(&l), loop.Options{
		Name:             "propagation/" + kinds(p.types),
		Workers:          p.opts.Workers,
		Clock:            p.opts.Clock,
		Logger:           p.opts.Logger,
		CacheSyncTimeout: p.opts.CacheSyncTimeout,
		Shard:            p.opts.Shard,
		Registerer:       p.opts.Registerer,
		Cache:            p.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return p.reconcileFrom(ctx, cached, false, key)
		}))
	}
	if err != nil {
		return fmt.Errorf("propagation: %w", err)
	}
	return nil
}

// Watches returns the host resources Run watches: the native objects of its types and their
// Federated<Kind>, the ReplicaSchedulingPreferences (in Options.Namespace) and the policies.
func (p *Propagator) Watches() []federation.Watch {
	var l *loop.Loop
	return loop.Watches(p.sources(&l))
}

// sources are what Run watches, and how a change maps to keys; l is the loop once Run made
// it (a policy's change reads the native objects from its cache).
func (p *Propagator) sources(l **loop.Loop) []loop.Source {
	natives := func(namespace string) []federation.Key {
		var keys []federation.Key
		for _, t := range p.types {
			list, err := (*l).Reader().List(context.Background(), t.TargetGVR(), namespace, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range list.Items {
				keys = append(keys, federation.Key{Namespace: list.Items[i].GetNamespace(), Name: list.Items[i].GetName()})
			}
		}
		return keys
	}
	var sources []loop.Source
	for _, t := range p.types {
		sources = append(sources,
			loop.Source{GVR: t.TargetGVR(), Namespace: p.opts.Namespace},
			loop.Source{GVR: t.FederatedGVR(), Namespace: p.opts.Namespace})
	}
	sources = append(sources,
		loop.Source{GVR: federation.ReplicaSchedulingPreferenceGVR, Namespace: p.opts.Namespace},
		loop.Source{GVR: federation.PropagationPolicyGVR, Namespace: p.opts.Namespace, Changed: specChanged, Deleted: p.decoded.forget,
			Keys: func(u *unstructured.Unstructured) []federation.Key { return natives(u.GetNamespace()) }},
		loop.Source{GVR: federation.ClusterPropagationPolicyGVR, Changed: specChanged, Deleted: p.decoded.forget,
			Keys: func(*unstructured.Unstructured) []federation.Key { return natives(p.opts.Namespace) }},
	)
	return sources
}

// specChanged reports whether a policy update matters: its spec (generation) or its
// deletion. The PolicyMonitor's status writes do not.
func specChanged(old, new *unstructured.Unstructured) bool {
	return old.GetGeneration() != new.GetGeneration() || (old.GetDeletionTimestamp() == nil) != (new.GetDeletionTimestamp() == nil)
}
