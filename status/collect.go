package status

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Reconcile collects one federated object's status, in three steps:
//
//  1. Read: the federated object, the Clusters' Ready conditions, and the member object in
//     every cluster status.clusters lists whose Cluster is Ready (from the member caches when
//     the ClusterSet implements federation.MemberCache, else with a live Get bounded by
//     Options.ReadTimeout). A member object without federation.ManagedByLabel (with Options.Identity) is not the
//     federation's and counts as missing. A failed read is no error of the pass: the entry
//     keeps its last data, which goes stale after Options.StaleAfter.
//  2. Decide: [Aggregate], a pure function, computes the observed fields, status.aggregated
//     and the Ready condition, and whether any of them changed.
//  3. Write, only when something changed and sync has passed over the object (a new
//     object without status.clusters nor a Propagated condition has nothing to report yet): one UpdateStatus of the object as read, with the
//     Collector's fields replaced and every other loop's left as they are, locked on its
//     resourceVersion. After a Conflict the pass starts again from a live read of the
//     object, at most three times, without reading the Clusters or the members again.
//
// The Result asks for the next pull after Options.Period. A missing object (and one being
// deleted) is forgotten and not requeued. An object whose status does not decode returns an
// error wrapping [ErrInvalidStatus] marked with federation.Terminal. The Result is ignored
// when the error is not nil.
func (c *Collector) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return c.reconcileFrom(ctx, c.host, false, key)
}

// reconcileFrom is Reconcile reading the host through r: the host itself, or Run's informer
// caches (cached).
func (c *Collector) reconcileFrom(ctx context.Context, r federation.Reader, cached bool, key federation.Key) (federation.Result, error) {
	r = federation.PendingReader(r, c.opts.StatusWriter, c.typ.FederatedGVR())
	p := loop.Pass{Loop: fedmetrics.LoopStatus, Type: c.typ.Federated.Kind, Clock: c.opts.Clock, Logger: c.opts.Logger, Observe: c.metrics.observe}
	return p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) { return c.reconcile(ctx, r, cached, key) })
}

func (c *Collector) reconcile(ctx context.Context, r federation.Reader, cached bool, key federation.Key) (federation.Result, string, error) {
	log := logr.FromContextOrDiscard(ctx)
	read := map[string]reading{} // this pass's reads, kept across attempts
	var ready map[string]bool    // the Clusters' readiness, read once per pass
	objects := r
	for attempt := 1; ; attempt++ {
		u, err := objects.Get(ctx, c.typ.FederatedGVR(), key.Namespace, key.Name)
		if apierrors.IsNotFound(err) {
			c.freshness.forget(key)
			c.rules.forget(key)
			c.metrics.setStale(key, nil)
			return federation.Result{}, fedmetrics.OutcomeGone, nil
		}
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("status: get %s %s: %w", c.typ.Federated.Kind, key, err)
		}
		if u.GetDeletionTimestamp() != nil {
			c.freshness.forget(key)
			c.rules.forget(key)
			c.metrics.setStale(key, nil)
			return federation.Result{}, fedmetrics.OutcomeGone, nil // sync is deleting the members
		}
		st, err := decodeStatus(u)
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeInvalid, federation.Terminal(fmt.Errorf("%w: %s %s: %w", ErrInvalidStatus, c.typ.Federated.Kind, key, err))
		}
		if ready == nil {
			if ready, err = c.clusterReadiness(ctx, r, cached, st.Clusters); err != nil {
				return federation.Result{}, fedmetrics.OutcomeError, err
			}
		}
		c.freshness.retain(key, st.Clusters)
		members := c.observe(ctx, key, st.Clusters, ready, read, log)
		c.rules.report(ctx, c.opts.Events, u, key)
		agg := Aggregate(Input{
			Generation: u.GetGeneration(),
			Status:     st,
			Members:    members,
			Now:        c.opts.Clock.Now(),
			StaleAfter: c.opts.StaleAfter,
		})
		if !agg.Changed || waitingForSync(st) {
			c.remember(key, read)
			c.metrics.setStale(key, staleIn(agg.Clusters))
			return federation.Result{RequeueAfter: c.opts.Period}, fedmetrics.OutcomeUnchanged, nil
		}
		err = c.write(ctx, u, &agg)
		if apierrors.IsConflict(err) && attempt < conflictRetries {
			// the cache lags or another loop wrote: read the object as it is now
			objects = federation.PendingReader(c.host, c.opts.StatusWriter, c.typ.FederatedGVR())
			continue
		}
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
		c.remember(key, read)
		c.metrics.setStale(key, staleIn(agg.Clusters))
		log.V(1).Info("Collected status", "ready", agg.Ready.Status, "reason", agg.Ready.Reason, "fresh", agg.Fresh, "placed", len(agg.Clusters))
		c.report(ctx, u, st, &agg)
		return federation.Result{RequeueAfter: c.opts.Period}, fedmetrics.OutcomeWritten, nil
	}
}

// waitingForSync reports whether sync has yet to pass over the object: status.clusters is empty
// and there is no Propagated condition, or only sync's WaitingForSchedule (a new object
// before its schedule). The Collector then writes nothing: its Ready condition would say
// NoClusters for the moment before sync lists the placed clusters, and that write (and its
// Warning) is one more host write per new object. Sync's status write brings the object back
// to the Collector.
func waitingForSync(st *federation.FederatedStatus) bool {
	if len(st.Clusters) > 0 {
		return false
	}
	c := meta.FindStatusCondition(st.Conditions, federation.ConditionPropagated)
	return c == nil || c.Reason == reasonWaitingForSchedule
}

// reasonWaitingForSchedule is sync's Propagated reason while it waits for a new object's
// schedule (sync/plan's ReasonWaitingForSchedule; the packages do not import each other).
const reasonWaitingForSchedule = "WaitingForSchedule"

// decodeStatus decodes the federated object's status only (the template can be large and is
// not needed).
func decodeStatus(u *unstructured.Unstructured) (*federation.FederatedStatus, error) {
	st := &federation.FederatedStatus{}
	raw, ok := u.Object["status"]
	if !ok || raw == nil {
		return st, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("status: want an object, got %s", describe(raw))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, st); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return st, nil
}

// clusterReadiness returns whether the placed clusters' Cluster objects have Ready=True (a
// missing Cluster is not ready). Reading the host itself it lists the Clusters (one call);
// reading Run's informer cache it gets the placed ones (a cached List would copy every
// Cluster of the fleet for every object).
func (c *Collector) clusterReadiness(ctx context.Context, r federation.Reader, cached bool, placed []federation.MemberStatus) (map[string]bool, error) {
	out := make(map[string]bool, len(placed))
	if !cached {
		list, err := r.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("status: list Clusters: %w", err)
		}
		for i := range list.Items {
			out[list.Items[i].GetName()] = readyConditionTrue(list.Items[i].Object)
		}
		return out, nil
	}
	for i := range placed {
		name := placed[i].Name
		u, err := loop.View(ctx, r, federation.ClusterGVR, "", name) // read only: no copy of the cache's
		switch {
		case apierrors.IsNotFound(err):
			out[name] = false
		case err != nil:
			return nil, fmt.Errorf("status: get Cluster %q: %w", name, err)
		default:
			out[name] = readyConditionTrue(u.Object)
		}
	}
	return out, nil
}

// readyConditionTrue reports whether an object's status.conditions has Ready=True, without
// decoding the rest.
func readyConditionTrue(obj map[string]any) bool {
	c := condition(obj, federation.ConditionReady)
	return c != nil && str(c, "status") == string(metav1.ConditionTrue)
}

// remember commits a pass's reads to the freshness memory. It runs only once the federated
// object's status holds what they found (written, or unchanged), so that a memory record and
// the entry's fields always go together: a read whose write failed is not remembered, and the
// entry ages as if it had not been read.
func (c *Collector) remember(key federation.Key, read map[string]reading) {
	for name, r := range read {
		c.freshness.set(key, name, record{at: r.at, ready: r.obs.Ready, message: r.obs.Message})
	}
}

// reading is one successful member read of this pass.
type reading struct {
	at  time.Time
	obs *Observation
}

// observe reads the members of key's placed clusters whose Cluster is Ready, unless read
// holds them already (a retry after a Conflict), and returns what the Collector knows of each,
// in the order of placed. Successful reads are added to read; the caller commits them to the
// freshness memory once the status holds what they found.
func (c *Collector) observe(ctx context.Context, key federation.Key, placed []federation.MemberStatus, ready map[string]bool, read map[string]reading, log logr.Logger) []Member {
	members := make([]Member, len(placed))
	got := make([]*Observation, len(placed))
	var toRead []int
	for i := range placed {
		members[i].ClusterReady = ready[placed[i].Name]
		if _, done := read[placed[i].Name]; members[i].ClusterReady && !done {
			toRead = append(toRead, i)
		}
	}
	_, cached := c.clusters.(federation.MemberCache)
	at := make([]time.Time, len(placed))
	readOne := func(i int) {
		if o, t, ok := c.readMember(ctx, key, placed[i].Name, log); ok {
			got[i], at[i] = o, t
		}
	}
	if cached || len(toRead) <= 1 || c.opts.ClusterConcurrency == 1 {
		for _, i := range toRead {
			readOne(i)
		}
	} else {
		var wg sync.WaitGroup
		sem := make(chan struct{}, c.opts.ClusterConcurrency)
		for _, i := range toRead {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				readOne(i)
			})
		}
		wg.Wait()
	}
	for i := range placed {
		name := placed[i].Name
		if o := got[i]; o != nil {
			read[name] = reading{at: at[i], obs: o}
		}
		if r, ok := read[name]; ok {
			members[i].LastRead, members[i].Observation = r.at, r.obs
			continue
		}
		rec, ok := c.freshness.get(key, name)
		if !ok {
			continue
		}
		// Read successfully in an earlier pass, not in this one: the entry's fields are what
		// that read found (the Collector wrote them), and the memory says whether it was ready.
		e := &placed[i]
		o := &Observation{
			Replicas: e.Replicas, ReadyReplicas: e.ReadyReplicas, AvailableReplicas: e.AvailableReplicas,
			UpdatedReplicas: e.UpdatedReplicas, ObservedGeneration: e.ObservedGeneration,
			Ready: rec.ready, Message: rec.message, Revision: e.ObservedRevision,
		}
		if e.RemoteStatus != nil {
			o.Remote = e.RemoteStatus.Object
		}
		members[i].LastRead, members[i].Observation = rec.at, o
	}
	return members
}

// readMember reads key's member object in cluster and extracts its status, and returns when
// what it read was true: now for a live read, and for a cached one the last time the cache
// was in contact with the member (federation.MemberCacheHealth), as a cache cut off from its
// cluster keeps serving its last state. It reports false when the read failed (the reason is
// logged and counted): the cluster's data then ages.
func (c *Collector) readMember(ctx context.Context, key federation.Key, cluster string, log logr.Logger) (*Observation, time.Time, bool) {
	ns, name := "", key.Name
	if c.typ.Namespaced {
		ns = key.Namespace
	}
	gvr := c.typ.TargetGVR()
	var r federation.Reader
	if mc, ok := c.clusters.(federation.MemberCache); ok {
		// A cache that cannot be had (the set is not running) falls back to a live read.
		r, _ = mc.CachedReader(cluster, gvr)
	}
	at := c.opts.Clock.Now()
	if r != nil {
		if h, ok := c.clusters.(federation.MemberCacheHealth); ok {
			if since, err := h.CacheHealth(cluster, gvr); err != nil {
				log.V(1).Info("The member cache is out of contact; its data ages", "cluster", cluster, "since", since, "error", err.Error())
				if since.Before(at) {
					at = since
				}
			}
		}
	}
	if r == nil {
		client, err := c.clusters.Client(cluster)
		if err != nil {
			c.readFailed(log, cluster, err)
			return nil, time.Time{}, false
		}
		r = c.metrics.members.Client(cluster, client) // a live read is a member request
	}
	rctx, cancel := loop.WithTimeout(ctx, c.opts.Clock, c.opts.ReadTimeout, errReadTimeout)
	// Read only (extractors never change the object): a member cache's object, no copy.
	obj, err := loop.View(rctx, r, gvr, ns, name)
	if err != nil && context.Cause(rctx) == errReadTimeout {
		err = fmt.Errorf("%w after %s: %w", errReadTimeout, c.opts.ReadTimeout, err)
	}
	cancel()
	switch {
	case apierrors.IsNotFound(err) || (err == nil && !c.managed(obj)):
		return &Observation{Message: "the member object does not exist"}, at, true
	case err != nil:
		c.readFailed(log, cluster, err)
		return nil, time.Time{}, false
	}
	o, err := c.extract(obj)
	c.rules.observed(key, cluster, err)
	if err != nil {
		log.Info("Member object has an invalid status", "cluster", cluster, "error", err.Error())
		return &Observation{Message: strings.TrimPrefix(err.Error(), "status: ")}, at, true
	}
	if o.Remote != nil {
		// obj may be the member cache's own object: what an Extractor (perhaps the user's)
		// kept of it must not be shared with the status the Collector writes.
		o.Remote = copyMap(o.Remote)
	}
	o.Remote = capRemote(o.Remote, c.opts.MaxRemoteStatusBytes)
	o.Revision = revisionOf(obj)
	return &o, at, true
}

func (c *Collector) readFailed(log logr.Logger, cluster string, err error) {
	log.V(1).Info("Reading the member object failed; its data ages", "cluster", cluster, "error", err.Error())
}

// managed reports whether a member object carries federation.ManagedByLabel with this
// federation's identity.
func (c *Collector) managed(obj *unstructured.Unstructured) bool {
	return obj.GetLabels()[federation.ManagedByLabel] == c.opts.Identity
}

// revisionOf reads the member object's federation.RevisionAnnotation, 0 when absent or not a
// positive number.
func revisionOf(obj *unstructured.Unstructured) int64 {
	v, _, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", federation.RevisionAnnotation)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
