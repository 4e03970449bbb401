package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	gosync "sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
)

// SetOptions configure a ClusterSet. The zero value is the default.
type SetOptions struct {
	// Clusters reads Cluster objects, to tell pull clusters from push ones; nil: the host
	// client (a shared host cache's reader saves a read per call).
	Clusters federation.Reader
	// Clock judges the age of an agent's Lease; nil: the real clock.
	Clock clock.PassiveClock
}

func (o *SetOptions) complete(host federation.ClusterClient) {
	if o.Clusters == nil {
		o.Clusters = host
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// ClusterSet is a federation.ClusterSet for a federation that mixes push and pull clusters:
// a push cluster's client is the one push hands out; a pull cluster's reaches no member
// but the cluster's namespace on the host, where each member object is an Assignment (see
// the package documentation). Sync, the status collector and the cluster monitor use it as
// they use any ClusterSet, so every decision stays theirs.
type ClusterSet struct {
	host federation.ClusterClient
	push federation.ClusterSet
	opts SetOptions

	mu    gosync.Mutex
	modes map[string]mode
}

// NewClusterSet returns the ClusterSet of a federation whose host is host and whose push
// clusters push reaches (kube.ClusterSet, fake.Fleet). When push offers member caches
// (federation.MemberCache, MemberCacheHealth, ReadOnlyMemberChanges) and a Run, as both
// of those do, the set returned offers them too: push clusters' from push, a pull
// cluster's reads from its Assignments, its health from its agent's Lease.
func NewClusterSet(host federation.ClusterClient, push federation.ClusterSet, opts SetOptions) (federation.ClusterSet, error) {
	if host == nil || push == nil {
		return nil, fmt.Errorf("agent: NewClusterSet: %w: host and push are required", ErrInvalidOptions)
	}
	if _, ok := push.(*ClusterSet); ok {
		return nil, fmt.Errorf("agent: NewClusterSet: %w: push is already a ClusterSet of this package", ErrInvalidOptions)
	}
	if _, ok := push.(*cachedSet); ok {
		return nil, fmt.Errorf("agent: NewClusterSet: %w: push is already a ClusterSet of this package", ErrInvalidOptions)
	}
	opts.complete(host)
	s := &ClusterSet{host: host, push: push, opts: opts, modes: map[string]mode{}}
	if c, ok := push.(cachedPush); ok {
		return &cachedSet{ClusterSet: s, cached: c}, nil
	}
	return s, nil
}

// Client returns the client of the cluster named name: for a pull cluster a client of its
// Assignments on the host ([HubClient]), else push's.
func (s *ClusterSet) Client(name string) (federation.ClusterClient, error) {
	if h := s.hub(name); h != nil {
		return h, nil
	}
	return s.push.Client(name)
}

// modeTTL is how long the set trusts the mode it read of a Cluster: a cluster changes mode
// only by being registered again, and every member read asks.
const modeTTL = 10 * time.Second

// mode is what the set read of a Cluster's mode, and when.
type mode struct {
	hub *HubClient // nil: push (or no such Cluster)
	at  time.Time
}

// hub returns the HubClient of name when it is a pull cluster, else nil. The Cluster is read
// at most once per modeTTL.
func (s *ClusterSet) hub(name string) *HubClient {
	now := s.opts.Clock.Now()
	s.mu.Lock()
	m, ok := s.modes[name]
	s.mu.Unlock()
	if ok && now.Sub(m.at) < modeTTL {
		return m.hub
	}
	u, err := s.opts.Clusters.Get(context.Background(), federation.ClusterGVR, "", name)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && !pullMode(u)):
		m = mode{at: now}
	case err == nil:
		if m.hub == nil {
			m.hub = NewHubClient(s.host, name, s.opts.Clock)
		}
		m.at = now
	default:
		return m.hub // the host cannot say now: keep what it said last
	}
	s.mu.Lock()
	s.modes[name] = m
	s.mu.Unlock()
	return m.hub
}

// cachedPush is what a push ClusterSet offers for the set to offer it too.
type cachedPush interface {
	federation.ClusterSet
	federation.MemberCache
	federation.MemberCacheHealth
	federation.ReadOnlyMemberChanges
	Run(ctx context.Context) error
}

// cachedSet is a ClusterSet over a push set with member caches.
type cachedSet struct {
	*ClusterSet
	cached cachedPush
}

var _ cachedPush = (*cachedSet)(nil)

// CachedReader returns push's cache of a push cluster; a pull cluster's reads are its
// HubClient's (the Assignments on the host).
func (s *cachedSet) CachedReader(cluster string, gvr schema.GroupVersionResource) (federation.Reader, error) {
	if h := s.hub(cluster); h != nil {
		return h, nil
	}
	return s.cached.CachedReader(cluster, gvr)
}

// OnMemberChange is push's: a pull cluster's changes reach the loops on their resyncs.
func (s *cachedSet) OnMemberChange(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) func() {
	return s.cached.OnMemberChange(gvr, fn)
}

// OnMemberChangeReadOnly is push's, as OnMemberChange.
func (s *cachedSet) OnMemberChangeReadOnly(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) func() {
	return s.cached.OnMemberChangeReadOnly(gvr, fn)
}

// CacheHealth is push's for a push cluster; for a pull cluster its agent's Lease: the
// renew time, and the reason when it is expired.
func (s *cachedSet) CacheHealth(cluster string, gvr schema.GroupVersionResource) (time.Time, error) {
	if h := s.hub(cluster); h != nil {
		return h.leaseHealth(context.Background())
	}
	return s.cached.CacheHealth(cluster, gvr)
}

// Run runs push's Run.
func (s *cachedSet) Run(ctx context.Context) error { return s.cached.Run(ctx) }

// pullMode reports whether the Cluster u is in pull mode.
func pullMode(u *unstructured.Unstructured) bool {
	mode, _, _ := unstructured.NestedString(u.Object, "spec", "mode")
	return mode == string(federation.ClusterModePull)
}

// HubClient is a pull cluster's federation.ClusterClient on the host. It never reaches the
// member: a write of a member object is a write of its Assignment's spec in the cluster's
// namespace, a read is the agent's report of it. See the package documentation for how
// each call maps.
type HubClient struct {
	host    federation.ClusterClient
	cluster string
	ns      string
	clock   clock.PassiveClock
}

// NewHubClient returns the client of the pull cluster named cluster, on host.
func NewHubClient(host federation.ClusterClient, cluster string, clk clock.PassiveClock) *HubClient {
	return &HubClient{host: host, cluster: cluster, ns: federation.PullNamespace(cluster), clock: clk}
}

var (
	_ federation.ClusterClient = (*HubClient)(nil)
	_ federation.HealthChecker = (*HubClient)(nil)
)

// Get returns the member object as its Assignment presents it (see present). While the
// agent's Lease is expired (Healthy fails), its reports are not current: Get fails as a
// read of an unreachable member does, so what the loops last read ages as it would.
func (c *HubClient) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if err := c.Healthy(ctx); err != nil {
		return nil, err
	}
	a, err := c.assignment(ctx, gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	return c.presentOrCollect(ctx, gvr, a)
}

// List returns the member objects of gvr in namespace ("": all) that opts select, as their
// Assignments present them. Label selectors and the metadata.name and metadata.namespace
// field selectors are applied. It fails as Get does while the agent's Lease is expired.
func (c *HubClient) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := c.Healthy(ctx); err != nil {
		return nil, err
	}
	sel, err := selectorOf(opts)
	if err != nil {
		return nil, err
	}
	lo := metav1.ListOptions{}
	if v, ok := federation.AssignedResourceValue(gvr); ok {
		lo.LabelSelector = federation.AssignedResourceLabel + "=" + v
	}
	list, err := c.host.List(ctx, federation.AssignmentGVR, c.ns, lo)
	if err != nil {
		return nil, c.hostError(err)
	}
	out := &unstructured.UnstructuredList{}
	out.SetResourceVersion(list.GetResourceVersion())
	for i := range list.Items {
		a, err := decodeAssignment(&list.Items[i])
		if err != nil || a.Spec.Resource.GVR() != gvr {
			continue
		}
		obj, err := c.presentOrCollect(ctx, gvr, a)
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		if sel.matches(obj, namespace) {
			out.Items = append(out.Items, *obj)
		}
	}
	return out, nil
}

// Watch is not served: a pull cluster's member objects change through the agent's reports,
// which loops read on their resyncs.
func (c *HubClient) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "watch (pull cluster "+c.cluster+")")
}

// Create assigns obj to the cluster: a new Assignment (Apply). An Assignment already there
// is AlreadyExists, as the member object would be.
func (c *HubClient) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	a := c.newAssignment(gvr, obj)
	u, err := federation.ToUnstructured(a)
	if err != nil {
		return nil, err
	}
	stored, err := c.host.Create(ctx, federation.AssignmentGVR, u)
	if apierrors.IsAlreadyExists(err) {
		return c.createAgain(ctx, gvr, obj)
	}
	if err != nil {
		return nil, c.hostError(err)
	}
	got, err := decodeAssignment(stored)
	if err != nil {
		return nil, err
	}
	return present(got), nil
}

// createAgain answers a Create whose Assignment exists. When the agent reported that it
// could not create the object (the member refused it), this is sync trying again: the same
// manifest gets the agent's failure as the answer, a new one replaces it. Otherwise the
// object exists: AlreadyExists.
func (c *HubClient) createAgain(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	a, err := c.assignment(ctx, gvr, obj.GetNamespace(), obj.GetName())
	if err != nil || a.Spec.Change != federation.AssignmentApply || a.Status.Object.Object != nil || failure(a) == nil {
		return nil, apierrors.NewAlreadyExists(gvr.GroupResource(), obj.GetName())
	}
	return c.change(ctx, gvr, obj.GetNamespace(), obj.GetName(), "", "", func(s *federation.AssignmentSpec) {
		s.Manifest = federation.RawObject{Object: manifestOf(obj)}
	})
}

// Update assigns obj in place of the Assignment's manifest: Apply when obj carries the
// federation's managed-by label, else Orphan (sync orphans by writing the object without
// its labels). obj's resourceVersion, when set, must be the Assignment's (Conflict).
func (c *HubClient) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	change := federation.AssignmentApply
	if _, ok := obj.GetLabels()[federation.ManagedByLabel]; !ok {
		change = federation.AssignmentOrphan
	}
	return c.change(ctx, gvr, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion(), "", func(s *federation.AssignmentSpec) {
		s.Change, s.Manifest, s.PropagationPolicy = change, federation.RawObject{Object: manifestOf(obj)}, nil
	})
}

// UpdateStatus is refused: a member object's status is its own cluster's.
func (c *HubClient) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "update status (pull cluster "+c.cluster+")")
}

// Patch is not served for a pull cluster's member objects.
func (c *HubClient) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "patch (pull cluster "+c.cluster+")")
}

// Delete turns the Assignment into a Delete, with opts' propagationPolicy. Preconditions
// are checked against the Assignment (its uid and resourceVersion are what Get presents).
// The Assignment goes once the agent has reported the member object gone.
func (c *HubClient) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	rv, uid := "", types.UID("")
	if p := opts.Preconditions; p != nil {
		if p.ResourceVersion != nil {
			rv = *p.ResourceVersion
		}
		if p.UID != nil {
			uid = *p.UID
		}
	}
	_, err := c.change(ctx, gvr, namespace, name, rv, uid, func(s *federation.AssignmentSpec) {
		s.Change, s.PropagationPolicy = federation.AssignmentDelete, opts.PropagationPolicy
	})
	return err
}

// Healthy reports whether the cluster's agent renewed its Lease within the Lease's
// duration: the cluster monitor's probe of a pull cluster. An expired or missing Lease is
// an error wrapping federation.ErrUnreachable, so the monitor applies the thresholds and
// taints of an unreachable push cluster.
func (c *HubClient) Healthy(ctx context.Context) error {
	_, err := c.leaseHealth(ctx)
	return err
}

// leaseHealth returns when the agent last renewed its Lease, and an error when that is
// longer ago than the Lease's duration, or there is no Lease.
func (c *HubClient) leaseHealth(ctx context.Context) (time.Time, error) {
	u, err := c.host.Get(ctx, leaseGVR, c.ns, federation.AgentLeaseName)
	if apierrors.IsNotFound(err) {
		return time.Time{}, fmt.Errorf("%w: the agent of pull cluster %q has no Lease %s/%s on the host: it never reported", federation.ErrUnreachable, c.cluster, c.ns, federation.AgentLeaseName)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("pull cluster %q: read the agent's Lease: %w", c.cluster, err)
	}
	renewed, duration := leaseTimes(u)
	if age := c.clock.Since(renewed); renewed.IsZero() || age > duration {
		return renewed, fmt.Errorf("%w: the agent of pull cluster %q last renewed its Lease at %s, %s ago, more than its duration %s",
			federation.ErrUnreachable, c.cluster, renewed.UTC().Format(time.RFC3339), age.Truncate(time.Second), duration)
	}
	return c.clock.Now(), nil
}

// assignment reads the Assignment of the member object (gvr, namespace, name); a missing
// one is the member object's NotFound.
func (c *HubClient) assignment(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*federation.Assignment, error) {
	u, err := c.host.Get(ctx, federation.AssignmentGVR, c.ns, federation.AssignmentName(gvr, namespace, name))
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	if err != nil {
		return nil, c.hostError(err)
	}
	return decodeAssignment(u)
}

// change applies edit to the Assignment's spec, if rv and uid (when set) are the
// Assignment's, and writes it when that changed something.
func (c *HubClient) change(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, rv string, uid types.UID, edit func(*federation.AssignmentSpec)) (*unstructured.Unstructured, error) {
	a, err := c.assignment(ctx, gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	if (rv != "" && rv != a.ResourceVersion) || (uid != "" && uid != a.UID) {
		return nil, apierrors.NewConflict(gvr.GroupResource(), name, errors.New("the object has been modified; read it again (its Assignment changed)"))
	}
	spec := *a.Spec.DeepCopy()
	edit(&spec)
	if reflect.DeepEqual(spec, a.Spec) {
		if err := failure(a); err != nil && spec.Change == federation.AssignmentApply {
			return nil, err // the same write the agent could not carry out
		}
		return present(a), nil
	}
	a.Spec = spec
	u, err := federation.ToUnstructured(a)
	if err != nil {
		return nil, err
	}
	stored, err := c.host.Update(ctx, federation.AssignmentGVR, u)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, apierrors.NewConflict(gvr.GroupResource(), name, errors.New("its Assignment changed; read it again"))
	}
	if err != nil {
		return nil, c.hostError(err)
	}
	if a, err = decodeAssignment(stored); err != nil {
		return nil, err
	}
	return present(a), nil
}

// presentOrCollect presents a (NotFound when the agent could not create the object), or, for a Delete or Orphan the agent has carried out,
// removes the Assignment and answers NotFound: the member object is gone, or no longer the
// federation's.
func (c *HubClient) presentOrCollect(ctx context.Context, gvr schema.GroupVersionResource, a *federation.Assignment) (*unstructured.Unstructured, error) {
	if absent(a) {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), a.Name)
	}
	if !done(a) {
		return present(a), nil
	}
	uid, rv := a.UID, a.ResourceVersion
	err := c.host.Delete(ctx, federation.AssignmentGVR, a.Namespace, a.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return nil, c.hostError(err)
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), a.Name)
}

// hostError turns the host's failure into the answer a member would give: the cluster's
// namespace missing on the host means the cluster is not ready (not joined, or leaving).
func (c *HubClient) hostError(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: pull cluster %q: its namespace %s on the host: %v", federation.ErrClusterNotReady, c.cluster, c.ns, err)
	}
	return fmt.Errorf("pull cluster %q: host: %w", c.cluster, err)
}

// newAssignment is the Assignment of a new member object obj of gvr: Apply.
func (c *HubClient) newAssignment(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *federation.Assignment {
	a := &federation.Assignment{Spec: federation.AssignmentSpec{
		Resource: federation.AssignedResourceOf(gvr),
		Change:   federation.AssignmentApply,
		Manifest: federation.RawObject{Object: manifestOf(obj)},
	}}
	a.APIVersion, a.Kind = federation.AssignmentGVK.ToAPIVersionAndKind()
	a.Namespace, a.Name = c.ns, federation.AssignmentName(gvr, obj.GetNamespace(), obj.GetName())
	if v, ok := federation.AssignedResourceValue(gvr); ok {
		a.Labels = map[string]string{federation.AssignedResourceLabel: v}
	}
	for _, k := range []string{federation.ManagedByLabel, federation.FederatedNameLabel, federation.FederatedNamespaceLabel} {
		if v, ok := obj.GetLabels()[k]; ok {
			if a.Labels == nil {
				a.Labels = map[string]string{}
			}
			a.Labels[k] = v
		}
	}
	return a
}

// selector is a List's label and field selection.
type selector struct {
	labels   labels.Selector
	name, ns string
	byName   bool
	byNS     bool
}

func selectorOf(opts metav1.ListOptions) (selector, error) {
	s := selector{labels: labels.Everything()}
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return s, apierrors.NewBadRequest(err.Error())
		}
		s.labels = sel
	}
	if opts.FieldSelector != "" {
		fs, err := parseFields(opts.FieldSelector)
		if err != nil {
			return s, apierrors.NewBadRequest(err.Error())
		}
		s.name, s.byName = fs["metadata.name"]
		s.ns, s.byNS = fs["metadata.namespace"]
	}
	return s, nil
}

func (s selector) matches(obj *unstructured.Unstructured, namespace string) bool {
	switch {
	case namespace != "" && obj.GetNamespace() != namespace,
		s.byName && obj.GetName() != s.name,
		s.byNS && obj.GetNamespace() != s.ns:
		return false
	}
	return s.labels.Matches(labels.Set(obj.GetLabels()))
}
