package sync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// Clusters leaving the federation. A Syncer puts its ClusterFinalizer (one per type and
// federation identity) on a Cluster the first time it creates (or adopts) an object there. When the Cluster is deleted, every federated
// object's pass treats the cluster as no longer placed and orphans or deletes its object
// there (Options.ClusterRemoval); ReconcileCluster releases the Cluster once none of the
// Syncer's objects is left in it, or after Options.DeletionTimeout if the cluster cannot be
// cleaned (unreachable), with an event. Without the finalizer a client like kube.ClusterSet
// would drop the cluster's client with the Cluster, and the objects would be left behind
// unnoticed.

// clusterRecheck is how soon a Cluster waiting for its cleanup is looked at again.
const clusterRecheck = 5 * time.Second

// ClusterFinalizer is the finalizer a Syncer of typ with Options.Identity identity puts on the
// Clusters it has objects in. Each federation (identity) has its own, so one that has cleaned
// up never releases a Cluster another still has objects in. The default identity ("" or
// federation.ManagedByValue) keeps the name without one, federation.k8s.io/sync-<resource>;
// another is federation.k8s.io/sync-<resource>.<identity>, with a hash of the identity
// instead when that would be longer than a finalizer name may be. (Before each identity had
// its own, every Syncer used the default's name: such a finalizer left on a Cluster by a
// Syncer of another identity is released by the default identity's Syncer, or by hand.)
func ClusterFinalizer(typ federation.TypeConfig, identity string) string {
	const prefix = "federation.k8s.io/"
	name := "sync-" + typ.FederatedResource
	if identity == "" || identity == federation.ManagedByValue {
		return prefix + name
	}
	if n := name + "." + identity; len(n) <= maxFinalizerName {
		return prefix + n
	}
	sum := sha256.Sum256([]byte(identity))
	suffix := "." + hex.EncodeToString(sum[:])[:12]
	if len(name)+len(suffix) > maxFinalizerName {
		name = strings.TrimRight(name[:maxFinalizerName-len(suffix)], "-._")
	}
	return prefix + name + suffix
}

// maxFinalizerName is the longest name part of a qualified name, as a finalizer is.
const maxFinalizerName = 63

// clusterFinalizer is this Syncer's ClusterFinalizer.
func (s *Syncer) clusterFinalizer() string { return ClusterFinalizer(s.typ, s.opts.Identity) }

// errClusterLeaving is returned by holdCluster for a Cluster that is being deleted or gone.
var errClusterLeaving = errors.New("the cluster is leaving the federation")

// holdCluster makes sure the Cluster carries this Syncer's finalizer before sync creates (or
// adopts) its first object there, so the cluster cannot leave without sync cleaning up. A
// Cluster being deleted, or gone, is not held: the error wraps errClusterLeaving. uid is the
// Cluster the pass decided for; a Cluster is remembered as held by its uid, so one unjoined
// and joined again under the same name is held again, even by a shard that never saw it go
// (sync's Cluster passes are sharded by name: another shard may have released it). A uid
// that is not the live Cluster's (it was replaced meanwhile) fails the pass, which is then
// decided again on the new Cluster.
//
// The first objects of a type propagate in many passes at once: one of them reads and
// patches the Cluster, and the others wait for its result instead of each reading it and
// patching it in a race they mostly lose (a Conflict each).
func (s *Syncer) holdCluster(ctx context.Context, cluster string, uid types.UID) error {
	if s.isHeld(cluster, uid) {
		return nil
	}
	_, err, _ := s.holding.Do(cluster+"/"+string(uid), func() (any, error) { return nil, s.holdClusterOnce(ctx, cluster, uid) })
	return err
}

// isHeld reports whether the Cluster cluster with uid was found to carry the finalizer ("":
// whatever its uid).
func (s *Syncer) isHeld(cluster string, uid types.UID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	held, ok := s.held[cluster]
	return ok && (uid == "" || held == uid)
}

// holdClusterOnce is holdCluster's read and patch.
func (s *Syncer) holdClusterOnce(ctx context.Context, cluster string, uid types.UID) error {
	if s.isHeld(cluster, uid) {
		return nil // held by the call just before this one
	}
	for attempt := 0; ; attempt++ {
		u, err := s.host.Get(ctx, federation.ClusterGVR, "", cluster)
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("hold Cluster %s: %w", cluster, errClusterLeaving)
		case err != nil:
			return fmt.Errorf("hold Cluster %s: %w", cluster, err)
		case u.GetDeletionTimestamp() != nil:
			return fmt.Errorf("hold Cluster %s: %w", cluster, errClusterLeaving)
		case uid != "" && u.GetUID() != uid:
			return fmt.Errorf("hold Cluster %s: %w: uid %s, not %s (it was deleted and made again)", cluster, errClusterReplaced, u.GetUID(), uid)
		}
		if !slices.Contains(u.GetFinalizers(), s.clusterFinalizer()) {
			_, err = s.patchFinalizers(ctx, u, append(slices.Clone(u.GetFinalizers()), s.clusterFinalizer()))
			if apierrors.IsConflict(err) && attempt < s.opts.ConflictRetries {
				continue
			}
			if err != nil {
				return fmt.Errorf("hold Cluster %s: %w", cluster, err)
			}
		}
		s.mu.Lock()
		s.held[cluster] = u.GetUID()
		s.mu.Unlock()
		return nil
	}
}

// errClusterReplaced is returned by holdCluster when the live Cluster is not the one the pass
// decided for.
var errClusterReplaced = errors.New("the Cluster is not the one the pass read")

// ReconcileCluster is the pass over one Cluster (key.Name) that Run makes when a Cluster
// changes: when the Cluster is being deleted and carries this Syncer's ClusterFinalizer, it
// removes the finalizer once no object this Syncer manages is left in the cluster (each
// federated object's own pass orphans or deletes its object there, Options.ClusterRemoval),
// or once Options.DeletionTimeout has passed since the deletion, reporting what was left
// behind. An embedder driving Reconcile from its own queue calls it for Cluster changes too.
func (s *Syncer) ReconcileCluster(ctx context.Context, key federation.Key) (federation.Result, error) {
	return s.reconcileCluster(ctx, key, s.host)
}

func (s *Syncer) reconcileCluster(ctx context.Context, key federation.Key, r federation.Reader) (federation.Result, error) {
	u, err := r.Get(ctx, federation.ClusterGVR, "", key.Name)
	if apierrors.IsNotFound(err) {
		s.mu.Lock()
		delete(s.held, key.Name)
		delete(s.leaving, key.Name)
		s.mu.Unlock()
		s.limits.forget(key.Name)
		s.metrics.members.ForgetCluster(key.Name) // the cluster left: its series go
		return federation.Result{}, nil
	}
	if err != nil {
		return federation.Result{}, fmt.Errorf("sync: get Cluster %s: %w", key.Name, err)
	}
	fin := s.clusterFinalizer()
	if u.GetDeletionTimestamp() == nil || !slices.Contains(u.GetFinalizers(), fin) {
		return federation.Result{}, nil
	}
	s.mu.Lock()
	s.leaving[key.Name] = true // member changes there now bring the Cluster back (see Run)
	s.mu.Unlock()
	left, err := s.managedIn(ctx, key.Name)
	if err == nil && left == 0 {
		return federation.Result{}, s.releaseCluster(ctx, u, "")
	}
	if waited := s.opts.Clock.Since(u.GetDeletionTimestamp().Time); waited >= s.opts.DeletionTimeout {
		why := fmt.Sprintf("%d object(s) left", left)
		if err != nil {
			why = err.Error()
		}
		return federation.Result{}, s.releaseCluster(ctx, u, why)
	}
	return federation.Result{RequeueAfter: clusterRecheck}, nil
}

// managedIn counts the objects of the Syncer's type that it manages in cluster (member
// namespaces sync created for other objects left out).
func (s *Syncer) managedIn(ctx context.Context, cluster string) (int, error) {
	var reader federation.Reader
	if mc, ok := s.clusters.(federation.MemberCache); ok {
		if r, err := mc.CachedReader(cluster, s.typ.TargetGVR()); err == nil {
			reader = r
		}
	}
	if reader == nil {
		c, err := s.memberClient(cluster)
		if err != nil {
			return 0, err
		}
		reader = c
	}
	list, err := reader.List(ctx, s.typ.TargetGVR(), "", metav1.ListOptions{LabelSelector: federation.ManagedByLabel + "=" + s.opts.Identity})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		// A namespace sync created for the objects of other types is not this Syncer's (a
		// FederatedNamespace Syncer's) to clean up: those objects' own passes see to it.
		if list.Items[i].GetAnnotations()[plan.CreatedNamespaceAnnotation] != "true" {
			n++
		}
	}
	return n, nil
}

// releaseCluster removes the finalizer; a non-empty leftBehind is reported as an event.
func (s *Syncer) releaseCluster(ctx context.Context, u *unstructured.Unstructured, leftBehind string) error {
	if leftBehind != "" {
		s.event(u, eventWarning, "MembersLeftBehind", "cluster %q left the federation after %s with its %s not cleaned up: %s",
			u.GetName(), s.opts.DeletionTimeout, s.typ.Target.Kind, leftBehind)
	}
	fins := slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(f string) bool { return f == s.clusterFinalizer() })
	if _, err := s.patchFinalizers(ctx, u, fins); err != nil {
		return fmt.Errorf("sync: release Cluster %s: %w", u.GetName(), err)
	}
	s.mu.Lock()
	if s.held[u.GetName()] == u.GetUID() {
		delete(s.held, u.GetName())
	}
	delete(s.leaving, u.GetName())
	s.mu.Unlock()
	return nil
}

// patchFinalizers sets a Cluster's finalizers, locked on its resourceVersion.
func (s *Syncer) patchFinalizers(ctx context.Context, u *unstructured.Unstructured, fins []string) (*unstructured.Unstructured, error) {
	return patchLocked(ctx, s.host, federation.ClusterGVR, u, map[string]any{"finalizers": fins})
}

// clusterUID is the uid of the Cluster called name among clusters, "" when none is.
func clusterUID(clusters []federation.Cluster, name string) types.UID {
	for i := range clusters {
		if clusters[i].Name == name {
			return clusters[i].UID
		}
	}
	return ""
}
