package federation

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
)

// Reader reads objects of any resource from one Kubernetes API.
//
// +kubebuilder:object:generate=false
type Reader interface {
	// Get returns the object. A missing object is an error satisfying apierrors.IsNotFound.
	// Network failures wrap ErrUnreachable.
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)

	// List returns the objects in namespace ("" = all namespaces, or a cluster-scoped resource)
	// matching opts.LabelSelector and opts.FieldSelector (metadata.name and metadata.namespace
	// at least). The list's resourceVersion can start a Watch.
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// Writer changes objects in one Kubernetes API. Every write returns the object as stored, with
// its new resourceVersion.
//
// +kubebuilder:object:generate=false
type Writer interface {
	// Create stores a new object. An existing one is an error satisfying
	// apierrors.IsAlreadyExists.
	Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)

	// Update replaces the object's metadata and spec; changes to status are ignored for
	// resources with a status subresource. A resourceVersion that is set and stale is an error
	// satisfying apierrors.IsConflict; a missing object satisfies apierrors.IsNotFound.
	Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)

	// UpdateStatus replaces only the status subresource, with the same Conflict and NotFound
	// rules as Update.
	UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)

	// Patch applies a JSON patch, merge patch or strategic merge patch (built-in types only).
	// A missing object satisfies apierrors.IsNotFound.
	Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error)

	// Delete deletes the object, honouring opts.Preconditions (Conflict when they fail) and
	// finalizers: an object with finalizers gets a deletionTimestamp and stays until they are
	// removed. A missing object satisfies apierrors.IsNotFound.
	Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error
}

// Watcher streams changes.
//
// +kubebuilder:object:generate=false
type Watcher interface {
	// Watch streams Added, Modified and Deleted events in resourceVersion order, starting after
	// opts.ResourceVersion. With "" (or "0") it first sends a synthetic Added event for every
	// current object, as a real API server does; start from a List's resourceVersion to get
	// changes only. An object that starts or stops matching opts.LabelSelector arrives as Added
	// or Deleted. The caller must Stop the watch.
	Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

// ClusterClient reaches one Kubernetes API: a member cluster or the host where federated
// objects, Clusters and ReplicaSchedulingPreferences live. Objects are unstructured and addressed
// by GroupVersionResource, so every type (CRDs included) goes through one interface.
//
// Errors are k8s.io/apimachinery/pkg/api/errors values, so apierrors.IsNotFound, IsConflict and
// IsAlreadyExists work on them (also through wrapping). Implementations must be safe for
// concurrent use. They hand the warnings of every answer (HTTP Warning headers) to
// [HandleWarning] with the request's context, so a caller that set [WithWarningHandler]
// gets them.
//
// fedkit ships two implementations: federation/kube (client-go) and fake (in memory). More
// capabilities are optional interfaces detected by type assertion ([HealthChecker],
// [VersionGetter], [ResourceDiscoverer], [CredentialsExpiryGetter]), so this interface does
// not have to grow.
//
// +kubebuilder:object:generate=false
type ClusterClient interface {
	Reader
	Writer
	Watcher
}

// HealthChecker is implemented by clients that can probe their API server's health
// (GET /readyz). The cluster monitor uses it when present and falls back to a cheap List
// otherwise.
//
// +kubebuilder:object:generate=false
type HealthChecker interface {
	// Healthy returns nil when the API server answers ready; otherwise an error that wraps
	// ErrUnreachable for network failures.
	Healthy(ctx context.Context) error
}

// VersionGetter is implemented by clients that can report their API server's version.
//
// +kubebuilder:object:generate=false
type VersionGetter interface {
	ServerVersion(ctx context.Context) (*version.Info, error)
}

// CredentialsExpiryGetter is implemented by clients that know when their credentials expire:
// a bound ServiceAccount token's exp claim (the TokenRequest API's tokens, `kubectl create
// token`), a client certificate's NotAfter. The cluster monitor warns before that time (the
// Cluster's condition CredentialsExpiring, and an event).
//
// +kubebuilder:object:generate=false
type CredentialsExpiryGetter interface {
	// CredentialsExpiry returns when the credentials stop being accepted; ok is false when the
	// client cannot tell, or they do not expire.
	CredentialsExpiry() (at time.Time, ok bool)
}

// ResourceDiscoverer is implemented by clients that can list the resources their API server
// serves (its discovery): built-in resources, those of CRDs and of aggregated API servers.
// Sync uses it to tell whether anything lives in a member namespace before it deletes one.
//
// +kubebuilder:object:generate=false
type ResourceDiscoverer interface {
	// ServedResources returns every served resource, with Group and Version set, in the
	// group's preferred version at least, subresources left out. An error means the answer
	// may be incomplete (a group's discovery failed); network failures wrap ErrUnreachable.
	ServedResources(ctx context.Context) ([]metav1.APIResource, error)
}

// ClusterSet hands out the client of a member cluster by its Cluster name. It returns an error
// satisfying errors.Is(err, ErrClusterNotFound) for an unknown name and
// errors.Is(err, ErrClusterNotReady) for a known cluster whose client cannot be used yet.
// Implementations must be safe for concurrent use.
//
// +kubebuilder:object:generate=false
type ClusterSet interface {
	Client(name string) (ClusterClient, error)
}

// MemberCache is an optional capability of a [ClusterSet]: shared, label-selected informer
// caches of the member objects a federation manages (those carrying [ManagedByLabel], whatever
// its value), one per cluster and resource, read by every loop instead of the member's API
// server. With it a resync pass costs no API calls, and a change in a member (drift, a
// deletion, a status update) reaches the loops at once, so they can requeue the federated
// object named by the member object's [FederatedNameLabel] and [FederatedNamespaceLabel].
//
// kube.ClusterSet and fake.Fleet implement it. Loops detect it with a type assertion and fall
// back to the members' Get and List when a ClusterSet does not offer it.
//
// +kubebuilder:object:generate=false
type MemberCache interface {
	// CachedReader returns a Reader serving Get and List of gvr's managed objects in cluster
	// from memory. An object without ManagedByLabel is invisible to it (NotFound to Get,
	// absent from List) even when the member has it: code that must know about such an object
	// (sync refusing to overwrite it) asks the member's client. The cache of a (cluster, gvr)
	// starts with the first CachedReader call for it; reads wait until it has synced or ctx
	// is done. Objects returned are the caller's own. It returns an error satisfying
	// errors.Is(err, ErrClusterNotFound) or ErrClusterNotReady like ClusterSet.Client, and may
	// return others (kube.ErrNotRunning when the set's Run is not running).
	CachedReader(cluster string, gvr schema.GroupVersionResource) (Reader, error)

	// OnMemberChange calls fn with the cluster's name and the object each time a managed
	// object of gvr is added, changed or deleted in a cluster whose cache for gvr runs
	// (deleted objects are passed in their last known state). fn runs on the cache's own
	// goroutine, or on the writer's in fake.Fleet: it must be quick and must not block (add
	// to a queue). The returned func removes fn; after it returns fn is not called again.
	OnMemberChange(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func())
}

// MemberCacheHealth is an optional capability of a [MemberCache], offered by kube.ClusterSet
// and fake.Fleet: whether a member cache is still in contact with its cluster. A cache keeps
// serving its last state when the cluster is cut off, so a loop judging how fresh a cached
// read is (the status collector) asks this instead of trusting that the read succeeded.
//
// +kubebuilder:object:generate=false
type MemberCacheHealth interface {
	// CacheHealth returns nil and the current time when the cache of gvr in cluster is in
	// contact with the member's API server; otherwise why not (its lists or watches fail; an
	// error wrapping ErrUnreachable when the member cannot be reached) and the last time it
	// is known to have been in contact: its data is at least as old as that.
	CacheHealth(cluster string, gvr schema.GroupVersionResource) (since time.Time, err error)
}

// ReadOnlyMemberChanges is an optional capability of a [MemberCache], offered by
// kube.ClusterSet and fake.Fleet: OnMemberChange without the copy. A loop that only looks at
// a changed object (its labels, name and resourceVersion, to requeue its owner) gets the
// cache's own object instead of a deep copy made for each notification, which at scale is
// most of what a notification costs.
//
// +kubebuilder:object:generate=false
type ReadOnlyMemberChanges interface {
	// OnMemberChangeReadOnly is OnMemberChange, except that fn gets the object the cache
	// holds, shared with the cache and with the other handlers: fn must not modify it, nor
	// keep it beyond the call (copy what it keeps). Everything else (which changes are
	// notified, on which goroutine, removal) is as OnMemberChange's.
	OnMemberChangeReadOnly(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func())
}

// VersionReader is an optional capability of a Reader, offered by the member caches of
// kube.ClusterSet and fake.Fleet: an object's resourceVersion, without copying the object. A
// loop that remembers the version it last wrote or checked learns from it, at almost no cost,
// that nothing changed, which is what most resync passes find.
//
// +kubebuilder:object:generate=false
type VersionReader interface {
	// ResourceVersion returns the object's resourceVersion, or an error satisfying
	// apierrors.IsNotFound when it is absent, as Get would.
	ResourceVersion(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (string, error)
}

// CustomMetricsGetter is implemented by clients that can read a cluster's custom metrics API
// (custom.metrics.k8s.io/v1beta2, served by an adapter such as Prometheus Adapter or KEDA),
// whose paths the Get and List of a [ClusterClient] cannot address. Package autoscale reads
// Pods and Object metrics through it; metrics.k8s.io and external.metrics.k8s.io are read
// with List.
//
// +kubebuilder:object:generate=false
type CustomMetricsGetter interface {
	// GetCustomMetric returns the MetricValueList of metric for the object of resource (a
	// group-qualified resource: "pods", "ingresses.networking.k8s.io") named name in
	// namespace, or, with name "*", for every object of resource that selector (a label
	// selector, "" for all) selects. metricSelector ("" for none) selects among the metric's
	// series. A cluster that serves no custom metrics API, or not that metric, answers an
	// error satisfying apierrors.IsNotFound; network failures wrap ErrUnreachable.
	GetCustomMetric(ctx context.Context, namespace, resource, name, metric, selector, metricSelector string) (*unstructured.UnstructuredList, error)
}
