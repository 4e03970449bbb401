package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/sync/plan"
)

// Member namespaces. A real API server refuses an object whose namespace does not exist, and
// a federated object's namespace need not exist in every member. Sync creates it, labelled
// as the federation's and annotated as created by sync, unless a FederatedNamespace governs
// it (then the FederatedNamespace's own sync creates it, with its template and overrides,
// and this object waits, or says the namespace will not come where that does not place it).
// A namespace sync created is deleted again when the last object sync put there is removed
// and nothing lives in it but what the federation is removing, as discovery and a List of
// every namespaced resource tell (see occupant); when they cannot tell, it is kept.

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// ensureNamespace creates namespace ns in a member. When a FederatedNamespace governs the
// namespace it creates nothing and returns that FederatedNamespace: the object waits for it
// (plan.Report says whether it places the namespace in the cluster).
func (s *Syncer) ensureNamespace(ctx context.Context, c federation.ClusterClient, cluster, ns string) (*unstructured.Unstructured, error) {
	governing, err := s.governingNamespace(ctx, ns)
	if err != nil || governing != nil {
		return governing, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        ns,
			"labels":      map[string]any{federation.ManagedByLabel: s.opts.Identity},
			"annotations": map[string]any{plan.CreatedNamespaceAnnotation: "true"},
		},
	}}
	if err := s.limits.wait(ctx, cluster); err != nil {
		return nil, err
	}
	_, err = s.send(ctx, c, memberWrite{gvr: namespaceGVR, action: plan.ActionCreate, desired: obj})
	switch {
	case err == nil:
		logr.FromContextOrDiscard(ctx).V(1).Info("Created a member namespace", "cluster", cluster, "namespace", ns)
		return nil, nil
	case apierrors.IsAlreadyExists(err):
		return nil, nil // created meanwhile, by anyone
	}
	return nil, fmt.Errorf("create namespace %q: %w", ns, err)
}

// governedNamespace reports whether a FederatedNamespace for ns exists on the host (a host
// that does not serve FederatedNamespaces governs nothing).
func (s *Syncer) governedNamespace(ctx context.Context, ns string) (bool, error) {
	u, err := s.governingNamespace(ctx, ns)
	return u != nil, err
}

// governingNamespace returns the FederatedNamespace for ns, nil when there is none (or the
// host does not serve FederatedNamespaces, or the Syncer is one of FederatedNamespaces).
func (s *Syncer) governingNamespace(ctx context.Context, ns string) (*unstructured.Unstructured, error) {
	if s.namespaceType() {
		return nil, nil
	}
	u, err := s.host.Get(ctx, federation.NamespaceType.FederatedGVR(), ns, ns)
	switch {
	case err == nil:
		return u, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	}
	return nil, fmt.Errorf("read FederatedNamespace %s: %w", ns, err)
}

// noteNamespaceWaits records which clusters of key's pass wait for their namespace
// (ReasonWaitingForNamespace, ReasonNamespaceNotPlaced in rep), so that Run passes over key
// again as soon as the namespace appears there (a member cache of Namespaces, started here,
// notifies it).
//
// A namespace can appear between the pass's read and this record, its notification then
// finding no waiter: each wait recorded here looks at the member cache once more, and a
// namespace already there brings key back to Run's queue at once.
func (s *Syncer) noteNamespaceWaits(ctx context.Context, key federation.Key, rep plan.Result) {
	if !s.typ.Namespaced || rep.Status == nil {
		return
	}
	var waiting []string
	for _, e := range rep.Status.Clusters {
		if e.Propagation == plan.ReasonWaitingForNamespace || e.Propagation == plan.ReasonNamespaceNotPlaced {
			waiting = append(waiting, e.Name)
		}
	}
	first := s.waitForNamespaces(key, waiting)
	mc, ok := s.clusters.(federation.MemberCache)
	if !ok || len(waiting) == 0 {
		return
	}
	for _, cluster := range first {
		// Starts the cache whose notifications Run watches; the requeue covers a failure.
		_, _ = mc.CachedReader(cluster, namespaceGVR)
	}
	s.mu.RLock()
	enqueue := s.enqueue
	s.mu.RUnlock()
	if enqueue == nil {
		return
	}
	for _, cluster := range waiting {
		r, err := mc.CachedReader(cluster, namespaceGVR)
		if err != nil {
			continue
		}
		if ns, err := r.Get(ctx, namespaceGVR, "", key.Namespace); err == nil && ns.GetDeletionTimestamp() == nil {
			enqueue(key) // it came while this pass ran
			return
		}
	}
}

// readNamespaces reads what plan.Decide needs to know of the member Namespaces in clusters
// (Decision.ReadNamespaces: a FederatedNamespace's change would delete them) into
// in.Members[cluster].Namespace: whether one is the host's own (the host is also a member, and
// the member Namespace has the uid of the host's Namespace of that name: KubeFed's
// IsPrimaryCluster), and whether objects the federation placed still live in it
// (plan.FederationObjectIn, over everything the namespace holds). When it cannot tell, it
// says why (NamespaceCheck.Err): nothing is deleted there, and the pass is retried.
func (s *Syncer) readNamespaces(ctx context.Context, in plan.Input, clusters []string) {
	type answer struct {
		uid types.UID
		err error
	}
	host := map[string]answer{} // one read per namespace, whatever the number of clusters
	for _, cluster := range clusters {
		ms := in.Members[cluster]
		if ms.Object == nil {
			continue
		}
		name := ms.Object.GetName()
		a, ok := host[name]
		if !ok {
			a.uid, a.err = s.hostUID(ctx, name)
			host[name] = a
		}
		check := &plan.NamespaceCheck{}
		switch {
		case a.err != nil:
			check.Err = fmt.Errorf("cannot tell whether namespace %q is the host's own, so it is not deleted: %w", name, a.err)
		case a.uid != "" && a.uid == ms.Object.GetUID():
			check.Host = true
		default:
			inUse, err := s.inUse(ctx, federation.Key{Namespace: in.Object.Namespace, Name: in.Object.Name}, cluster, name)
			if err != nil {
				check.Err = fmt.Errorf("cannot tell whether objects the federation placed live in namespace %q, so it is not deleted: %w", name, err)
			}
			check.InUse = inUse
		}
		ms.Namespace = check
		in.Members[cluster] = ms
	}
}

// inUse returns an object the federation placed in member namespace ns of cluster
// (FederationObjectIn), "" when there is none. Under Run, the FederatedNamespace key is then
// passed over again as soon as a managed object of those kinds changes there (see
// namespacesInUse).
func (s *Syncer) inUse(ctx context.Context, key federation.Key, cluster, ns string) (string, error) {
	c, err := s.memberClient(cluster)
	if err != nil {
		return "", err
	}
	var objs []*unstructured.Unstructured
	var kinds []schema.GroupVersionResource
	err = s.namespaceObjects(ctx, cluster, c, ns, func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
		if plan.KeepsNamespace(obj, s.opts.Identity) {
			objs = append(objs, obj)
			kinds = append(kinds, gvr)
		}
	})
	if err != nil {
		return "", err
	}
	found := plan.FederationObjectIn(s.opts.Identity, ns, objs)
	if found != "" {
		s.nsInUse.wait(s.clusters, memberNamespace{cluster, ns}, key, kinds)
	}
	return found, nil
}

// namespacesInUse brings a FederatedNamespace kept in a member for the federation's objects
// (ReasonNamespaceInUse) back to Run's queue when one of them changes or leaves, through the
// member caches of their kinds, which the kinds' own Syncers run: the namespace goes right
// after its last object instead of at the next recheck (plan.Report's requeue, which still
// bounds the wait where no cache notifies). A wait is used once: the pass it brings records
// it again while objects remain.
type namespacesInUse struct {
	mu      gosync.Mutex
	enqueue func(...federation.Key) // Run's; nil outside Run
	waits   map[memberNamespace]federation.Key
	watches map[schema.GroupVersionResource]func() // the removes of the registrations
}

// start makes Run's enqueue the target of the waits; the func it returns removes every
// registration and forgets the waits.
func (n *namespacesInUse) start(enqueue func(...federation.Key)) (stop func()) {
	n.mu.Lock()
	n.enqueue, n.waits, n.watches = enqueue, map[memberNamespace]federation.Key{}, map[schema.GroupVersionResource]func(){}
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		removes := n.watches
		n.enqueue, n.waits, n.watches = nil, nil, nil
		n.mu.Unlock()
		for _, remove := range removes {
			remove()
		}
	}
}

// wait records that key waits for the managed objects of kinds in member namespace m to
// leave, and watches the kinds' member changes. Outside Run it does nothing.
func (n *namespacesInUse) wait(set federation.ClusterSet, m memberNamespace, key federation.Key, kinds []schema.GroupVersionResource) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.enqueue == nil {
		return
	}
	n.waits[m] = key
	for _, gvr := range kinds {
		if _, ok := n.watches[gvr]; ok {
			continue
		}
		// A registration calls back on the cache's goroutine, not under n.mu.
		remove, _ := federation.WatchMemberChanges(set, gvr, n.changed)
		n.watches[gvr] = remove
	}
}

// changed is the member caches' callback: a managed object changed or left in cluster.
func (n *namespacesInUse) changed(cluster string, obj *unstructured.Unstructured) {
	m := memberNamespace{cluster, obj.GetNamespace()}
	n.mu.Lock()
	key, ok := n.waits[m]
	if ok {
		delete(n.waits, m)
	}
	enqueue := n.enqueue
	n.mu.Unlock()
	if ok && enqueue != nil {
		enqueue(key)
	}
}

// hostOwns reports whether the member Namespace ns is the host's own Namespace of that name
// (the same uid: the host is the member).
func (s *Syncer) hostOwns(ctx context.Context, ns *unstructured.Unstructured) (bool, error) {
	uid, err := s.hostUID(ctx, ns.GetName())
	return uid != "" && uid == ns.GetUID(), err
}

// hostUID returns the uid of the host's Namespace name, "" when there is none.
func (s *Syncer) hostUID(ctx context.Context, name string) (types.UID, error) {
	h, err := s.host.Get(ctx, namespaceGVR, "", name)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the host's namespace %s: %w", name, err)
	}
	return h.GetUID(), nil
}

// releaseNamespace deletes namespace ns in a member when sync created it, no FederatedNamespace
// governs it, it is not the host's own, and nothing lives in it but what the federation is
// removing (see occupant), unless Options.KeepCreatedNamespaces. deleted is the member object
// sync just deleted there. When it cannot tell, it keeps the namespace and logs why: the
// namespace is a courtesy, the object's deletion is done.
func (s *Syncer) releaseNamespace(ctx context.Context, c federation.ClusterClient, cluster, ns string, deleted *unstructured.Unstructured) {
	if ns == "" || s.opts.KeepCreatedNamespaces {
		return
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("cluster", cluster, "namespace", ns)
	keep := func(why string, err error) {
		log.Info("Kept a member namespace sync had created: "+why, "reason", err.Error())
	}
	obj, err := c.Get(ctx, namespaceGVR, "", ns)
	switch {
	case apierrors.IsNotFound(err):
		return
	case err != nil:
		keep("it could not be read", err)
		return
	case !plan.CreatedNamespace(obj, s.opts.Identity):
		return // not sync's to delete, or going already
	}
	if governed, err := s.governedNamespace(ctx, ns); err != nil {
		keep("cannot tell whether a FederatedNamespace governs it", err)
		return
	} else if governed {
		return
	}
	if own, err := s.hostOwns(ctx, obj); err != nil {
		keep("cannot tell whether it is the host's own", err)
		return
	} else if own {
		log.V(1).Info("Kept a member namespace sync had created: it is the host's own (the host is also a member)")
		return
	}
	who, err := s.occupant(ctx, cluster, c, ns, deleted)
	if err != nil {
		keep("cannot tell whether anything else lives in it", err)
		return
	}
	if who != "" {
		log.V(1).Info("Kept a member namespace sync had created: something else lives in it", "object", who)
		return
	}
	// The evidence: sync's own namespace (its label and annotation, plan.CreatedNamespace),
	// shown by occupant to hold nothing else.
	w := memberWrite{gvr: namespaceGVR, action: plan.ActionDelete, live: obj, gated: true, gate: gate.Write{
		Verb: gate.Delete, Cluster: cluster, Resource: namespaceGVR, Object: obj,
		Evidence: gate.Evidence{Mark: gate.ManagedBy(s.opts.Identity), NamespaceEmpty: true},
	}}
	if _, err := s.send(ctx, c, w); err != nil {
		keep("the delete failed", err)
		return
	}
	log.V(1).Info("Deleted a member namespace sync had created")
}

// occupant returns an object that lives in member namespace ns and is not the federation's
// to remove (plan.Occupant), "" when none, looking at every namespaced, listable resource the
// member serves (federation.ResourceDiscoverer). deleted is the member object sync just
// deleted there. It fails when it cannot look everywhere: no discovery, discovery failed, or
// a List failed.
func (s *Syncer) occupant(ctx context.Context, cluster string, c federation.ClusterClient, ns string, deleted *unstructured.Unstructured) (string, error) {
	var objs []plan.NamespaceObject
	err := s.namespaceObjects(ctx, cluster, c, ns, func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
		objs = append(objs, plan.NamespaceObject{Resource: gvr, Object: obj})
	})
	if err != nil {
		return "", err
	}
	return plan.Occupant(s.opts.Identity, ns, deleted, objs), nil
}

// namespaceObjects calls visit with every object of member namespace ns, over every
// namespaced, listable resource the member serves (federation.ResourceDiscoverer), one
// version of each. It fails when it cannot look everywhere: no discovery, discovery failed,
// or a List failed.
func (s *Syncer) namespaceObjects(ctx context.Context, cluster string, c federation.ClusterClient, ns string, visit func(schema.GroupVersionResource, *unstructured.Unstructured)) error {
	raw, err := s.clusters.Client(cluster) // c counts requests in the metrics, and hides the capability
	if err != nil {
		return err
	}
	d, ok := raw.(federation.ResourceDiscoverer)
	if !ok {
		return errors.New("the member's client offers no discovery (federation.ResourceDiscoverer) to list what the namespace holds")
	}
	resources, err := d.ServedResources(ctx)
	if err != nil {
		return fmt.Errorf("discovery of the resources the member serves: %w", err)
	}
	seen := map[schema.GroupResource]bool{}
	for _, r := range resources {
		gvr := schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Name}
		if !r.Namespaced || !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") || seen[gvr.GroupResource()] {
			continue
		}
		seen[gvr.GroupResource()] = true // one version of a resource holds all its objects
		list, err := c.List(ctx, gvr, ns, metav1.ListOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue // no longer served (a CRD deleted meanwhile)
		case err != nil:
			return fmt.Errorf("list %s in namespace %s: %w", gvr.GroupResource(), ns, err)
		}
		for i := range list.Items {
			visit(gvr, &list.Items[i])
		}
	}
	return nil
}
