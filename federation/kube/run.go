package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Retry backoff of Run for Clusters whose Reconcile failed with a retryable error (the host
// could not be read).
const (
	retryBaseDelay = 100 * time.Millisecond
	retryMaxDelay  = 2 * time.Minute
)

// runState is what Run shares with CachedReader while it runs: the context and WaitGroup of
// the member informers it hosts.
type runState struct {
	ctx context.Context
	wg  *sync.WaitGroup
}

// Run keeps the set in line with the host until ctx is done: it watches Cluster objects and the
// Secrets in the set's namespace, and calls Reconcile for every Cluster that changed or whose
// Secret changed, retrying failures with exponential backoff (on Options.Clock). It also hosts
// the informers of CachedReader.
//
// Run is fedkit's one loop engine (the same as every loop's Run), so it behaves like them:
// its reconciles read Clusters and Secrets from its informer cache, and a Secret from the API
// server only when the cache shows it changed (the cache drops its data, see dropSecretData),
// so the monitor's heartbeats (a Cluster status write each) read no credentials; list and watch failures reach Options.Logger; and
// when the host cannot list Clusters or Secrets within Options.CacheSyncTimeout (on
// Options.Clock) Run stops and returns an error naming the resource. A Result's RequeueAfter
// is honoured.
//
// Otherwise Run blocks until ctx is done and returns nil, only after every goroutine it
// started (workers, informers, cached readers' informers) has exited. Calling Run while it is
// already running is an error. For a set built by ClusterSetFromKubeconfig, Run only hosts
// cached readers.
//
// Run has the func(context.Context) error shape, so it can be handed to a controller-runtime
// manager as manager.RunnableFunc(set.Run).
func (s *ClusterSet) Run(ctx context.Context) error {
	ctx = logr.NewContext(ctx, s.opts.Logger) // client-go's informers log through ctx
	var wg sync.WaitGroup
	s.mu.Lock()
	if s.run != nil {
		s.mu.Unlock()
		return errors.New("kube: Run: the cluster set is already running")
	}
	s.run = &runState{ctx: ctx, wg: &wg}
	s.mu.Unlock()
	defer s.stopRun(&wg)

	if s.host == nil {
		<-ctx.Done()
		return nil
	}
	l, err := loop.New(s.host, []loop.Source{
		{GVR: federation.ClusterGVR},
		{
			GVR: federation.SecretGVR, Namespace: s.opts.Namespace,
			// The informer only notices changes and keeps no credentials in memory:
			// Reconcile reads a Secret afresh when its resourceVersion moved.
			Transform: dropSecretData, TransformName: "kube/secret-without-data",
			Referrers: &loop.Referrers{GVR: federation.ClusterGVR, RefersTo: usesSecret},
		},
	}, loop.Options{
		Name:             "kube/clusterset",
		Workers:          s.opts.Workers,
		Clock:            s.opts.Clock,
		Logger:           s.opts.Logger,
		BaseDelay:        retryBaseDelay,
		MaxDelay:         retryMaxDelay,
		CacheSyncTimeout: s.opts.CacheSyncTimeout,
		Registerer:       s.opts.Registerer,
		Cache:            s.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		secrets := func(namespace, name string) (*unstructured.Unstructured, bool, error) {
			return l.GetTrimmed(federation.SecretGVR, namespace, name)
		}
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			res, err := s.reconcile(ctx, cached, secrets, key)
			if federation.IsTerminal(err) {
				// Reconcile logged the reason when it was new; a change to the Cluster or its
				// Secret brings the key back.
				return federation.Result{}, nil
			}
			return res, err
		}))
	}
	if err != nil {
		return fmt.Errorf("kube: Run: %w", err)
	}
	return nil
}

// stopRun stops every cached reader's informer and waits for them.
func (s *ClusterSet) stopRun(wg *sync.WaitGroup) {
	s.mu.Lock()
	s.run = nil
	for _, m := range s.members {
		m.stopCaches()
		m.caches = nil
	}
	s.mu.Unlock()
	wg.Wait()
}

// usesSecret reports whether cluster's spec.secretRef names secret.
func usesSecret(cluster, secret *unstructured.Unstructured) bool {
	ref, _, _ := unstructured.NestedString(cluster.Object, "spec", "secretRef", "name")
	return ref == secret.GetName()
}

// dropSecretData removes from a Secret, as the informer stores it, everything that holds or
// may hold its credentials: data and stringData, the annotations (kubectl's
// last-applied-configuration carries a copy of the data) and managedFields. What stays is
// what Run needs: the name, resourceVersion (a change) and labels (SecretClusterLabel).
func dropSecretData(u *unstructured.Unstructured) {
	delete(u.Object, "data")
	delete(u.Object, "stringData")
	u.SetAnnotations(nil)
	u.SetManagedFields(nil)
}
