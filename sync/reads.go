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
)

// memberName returns the namespace and name of fed's object in a member cluster: the federated
// object's own, without a namespace for a cluster-scoped target type.
func (s *Syncer) memberName(fed *federation.FederatedObject) (string, string) {
	if !s.typ.Namespaced {
		return "", fed.Name
	}
	return fed.Namespace, fed.Name
}

// readMembers reads fed's member object in every ready cluster where it may be. With a
// cluster set that offers member caches ([federation.MemberCache]) that is every ready
// cluster, at no API cost, one after the other (they answer from memory); without, a live Get,
// several at once, in the placed clusters and the clusters status.clusters lists (where sync
// put the object before). keys are the clusters' render input keys (Decision.inputs): a placed
// cluster whose object is still at the version sync verified for the same key is not even
// read when the cache can tell its version ([federation.VersionReader]).
func (s *Syncer) readMembers(ctx context.Context, fed *federation.FederatedObject, clusters []federation.Cluster, t Targets, keys map[string]string) map[string]MemberState {
	key := federation.Key{Namespace: fed.Namespace, Name: fed.Name}
	mc, cached := s.clusters.(federation.MemberCache)
	var wanted map[string]bool // live reads only: a cache is read for every ready cluster
	if !cached {
		wanted = make(map[string]bool, len(t.Order)+len(fed.Status.Clusters))
		for _, n := range t.Order {
			wanted[n] = true
		}
		for _, c := range fed.Status.Clusters {
			wanted[c.Name] = true
		}
	}
	var names []string
	for i := range clusters {
		c := &clusters[i]
		if !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			continue
		}
		if cached || wanted[c.Name] || fed.DeletionTimestamp != nil {
			names = append(names, c.Name)
		}
	}
	out := make(map[string]MemberState, len(names))
	placed := func(name string) bool { _, ok := t.Replicas[name]; return ok && fed.DeletionTimestamp == nil }
	if cached {
		for _, name := range names {
			out[name] = s.readMember(ctx, mc, key, fed, name, placed(name), keys[name])
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
			ms := s.readMember(ctx, nil, key, fed, name, placed(name), keys[name])
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
// the version sync verified for input key k is not read at all (MemberState.unchanged).
func (s *Syncer) readMember(ctx context.Context, mc federation.MemberCache, key federation.Key, fed *federation.FederatedObject, cluster string, placed bool, k string) MemberState {
	ns, name := s.memberName(fed)
	gvr := s.typ.TargetGVR()
	v, conflicted := s.recall(key, cluster)
	ms := MemberState{memo: v}
	if mc != nil && !conflicted {
		if r, err := mc.CachedReader(cluster, gvr); err == nil {
			if vr, ok := r.(federation.VersionReader); ok && placed && v.rv != "" && v.input == k {
				if rv, err := vr.ResourceVersion(ctx, gvr, ns, name); err == nil && rv == v.rv {
					ms.unchanged = true
					return ms
				}
			}
			obj, err := r.Get(ctx, gvr, ns, name)
			switch {
			case err == nil:
				ms.Object = obj
				return ms
			case objectNotFound(err, name):
				return ms
			}
			// Any other answer from the cache (not running, not synced): ask the member.
		}
	}
	obj, err := s.liveGet(ctx, cluster, ns, name)
	ms.Object, ms.Err = obj, err
	return ms
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
		return nil, fmt.Errorf("%w: %v", errTypeNotServed, err)
	}
	return nil, err
}

// errTypeNotServed marks a member answering 404 for the resource itself.
var errTypeNotServed = errors.New("sync: the member cluster does not serve the type")

func typeNotServed(err error) bool { return errors.Is(err, errTypeNotServed) }

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
// NamespaceLifecycle admission's 404 names the namespace).
func namespaceMissing(err error, namespace string) bool {
	if !apierrors.IsNotFound(err) || namespace == "" {
		return false
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == namespace
}
