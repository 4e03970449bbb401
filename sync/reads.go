package sync

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// namespaceType reports whether the Syncer federates core Namespaces (FederatedNamespace).
func (s *Syncer) namespaceType() bool {
	return s.typ.Target.Group == "" && s.typ.Target.Kind == "Namespace"
}

// memberName returns the namespace and name of fed's object in a member cluster: the federated
// object's own, without a namespace for a cluster-scoped target type.
func (s *Syncer) memberName(fed *federation.FederatedObject) (string, string) {
	if !s.typ.Namespaced {
		return "", fed.Name
	}
	return fed.Namespace, fed.Name
}

// readMembers reads fed's member object in the clusters d says Decide needs (Decision.Read).
// With a cluster set that offers member caches ([federation.MemberCache]) it reads every
// ready cluster instead, at no API cost, one after the other (they answer from memory);
// without, it makes a live Get in each of d.Read, several at once. A placed cluster whose
// object is still at the version the Syncer verified for its render input key (d.Keys) is
// not even read when the cache can tell its version ([federation.VersionReader]).
func (s *Syncer) readMembers(ctx context.Context, fed *federation.FederatedObject, clusters []federation.Cluster, d plan.Decision) map[string]plan.MemberState {
	key := federation.Key{Namespace: fed.Namespace, Name: fed.Name}
	mc, cached := s.clusters.(federation.MemberCache)
	names := d.Read
	if cached {
		names = make([]string, 0, len(clusters))
		for i := range clusters {
			if meta.IsStatusConditionTrue(clusters[i].Status.Conditions, federation.ConditionReady) {
				names = append(names, clusters[i].Name)
			}
		}
	}
	out := make(map[string]plan.MemberState, len(names))
	placed := func(name string) bool { _, ok := d.Targets.Replicas[name]; return ok && fed.DeletionTimestamp == nil }
	if cached {
		for _, name := range names {
			out[name] = s.readMember(ctx, mc, key, fed, name, placed(name), d.Keys[name])
		}
		return out
	}
	var mu gosync.Mutex
	var wg gosync.WaitGroup
	sem := make(chan struct{}, s.opts.ClusterConcurrency)
	for _, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ms := s.readMember(ctx, nil, key, fed, name, placed(name), d.Keys[name])
			mu.Lock()
			out[name] = ms
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// readMember reads fed's object in one cluster: from the member cache mc when there is one,
// live otherwise, and live when the name is known to be taken by an object the cache cannot
// see (it has no managed-by label). A placed cluster whose object the cache reports still at
// the version the Syncer verified for input key k is not read at all: only its version
// (MemberState.Version).
func (s *Syncer) readMember(ctx context.Context, mc federation.MemberCache, key federation.Key, fed *federation.FederatedObject, cluster string, placed bool, k string) plan.MemberState {
	ns, name := s.memberName(fed)
	gvr := s.typ.TargetGVR()
	v, conflicted := s.recall(key, cluster)
	if mc != nil && !conflicted {
		if r, err := mc.CachedReader(cluster, gvr); err == nil {
			if vr, ok := r.(federation.VersionReader); ok && placed && v.ResourceVersion != "" && v.Input == k {
				if rv, err := vr.ResourceVersion(ctx, gvr, ns, name); err == nil && rv == v.ResourceVersion {
					return plan.MemberState{Version: rv}
				}
			}
			obj, err := r.Get(ctx, gvr, ns, name)
			switch {
			case err == nil:
				return plan.MemberState{Object: obj}
			case objectNotFound(err, name):
				return plan.MemberState{}
			}
			// Any other answer from the cache (not running, not synced): ask the member.
		}
	}
	obj, err := s.liveGet(ctx, cluster, ns, name)
	return plan.MemberState{Object: obj, Err: err}
}

// liveGet reads a member object from the member's API server: nil, nil when it is absent.
func (s *Syncer) liveGet(ctx context.Context, cluster, ns, name string) (*unstructured.Unstructured, error) {
	c, err := s.memberClient(cluster)
	if err != nil {
		return nil, err
	}
	obj, err := c.Get(ctx, s.typ.TargetGVR(), ns, name)
	switch {
	case err == nil:
		return obj, nil
	case objectNotFound(err, name):
		return nil, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%w: %v", plan.ErrTypeNotServed, err)
	}
	return nil, err
}

// objectNotFound tells "this object does not exist" (a 404 naming the object) from "this
// resource does not exist" (a 404 for the path, as a server answers for a type it does not
// serve): only the first means the object is absent.
func objectNotFound(err error, name string) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return true
	}
	d := se.Status().Details
	return d != nil && d.Name == name
}

// namespaceMissing reports whether a create failed because its namespace does not exist (the
// NamespaceLifecycle admission's 404 names the namespace): plan.NamespaceMissing.
func namespaceMissing(err error, namespace string) bool {
	return plan.NamespaceMissing(err, namespace)
}
