package controlplane

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// ControlPlane runs every fedkit loop over one host and one ClusterSet: the cluster monitor,
// the scheduler, sync and the status collector of each federated type, the DNS loop and the
// ClusterSet's own Run. It is the optional composition on top of the loops: each loop keeps
// working alone, and an embedder who wants one loop, or runs them in its own manager, uses the
// loop's package instead.
//
// Run keeps each loop apart from the others: a loop whose resources the host does not serve,
// or whose Run fails, is reported (Status, the log) and retried, while the rest keep running.
// A ControlPlane is safe for concurrent use; Run runs once at a time.
type ControlPlane struct {
	host   federation.ClusterClient
	opts   Options
	loops  []*part
	events *forwarder // nil when the embedder gave Options.Events or disabled events
	scheme *runtime.Scheme

	mu      sync.Mutex
	running bool
}

// part is one loop of the control plane, with what the host must serve for it to start.
type part struct {
	name  string
	needs []resource
	run   func(ctx context.Context) error

	// Guarded by ControlPlane.mu.
	status LoopStatus
}

// resource is something a loop lists on the host: the check before it starts lists it too.
type resource struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// runner is what a ClusterSet with a reconcile of its own offers: kube.ClusterSet (watching
// Clusters and Secrets, hosting member caches), fake.Fleet (its simulated controllers).
type runner interface {
	Run(ctx context.Context) error
}

// New returns a ControlPlane for the host and clusters, with every loop built by its package's
// constructor from opts (see [Options] for the defaults and how common fields spread). It
// starts nothing and contacts nothing: call [ControlPlane.Run]. It returns an error when host
// or clusters is nil, opts is invalid (wrapping [ErrInvalidOptions]), or a loop's constructor
// fails (the error names the loop).
func New(host federation.ClusterClient, clusters federation.ClusterSet, opts Options) (*ControlPlane, error) {
	switch {
	case host == nil:
		return nil, errors.New("controlplane: New: host client is nil")
	case clusters == nil:
		return nil, errors.New("controlplane: New: cluster set is nil")
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("controlplane: New: %w", err)
	}
	cp := &ControlPlane{host: host, opts: opts}
	if opts.Events == nil && !opts.Disable.Events {
		cp.events = &forwarder{}
		opts.Events = cp.events
		scheme, err := eventScheme()
		if err != nil {
			return nil, fmt.Errorf("controlplane: New: %w", err)
		}
		cp.scheme = scheme
	}
	// Events, like the other common fields, reach every loop that leaves its own recorder
	// unset.
	if opts.Events != nil {
		for _, r := range []*federation.EventRecorder{&opts.Scheduler.Events, &opts.Sync.Events, &opts.Status.Events, &opts.Monitor.Events, &opts.DNS.Events} {
			if *r == nil {
				*r = opts.Events
			}
		}
	}
	if err := cp.build(host, clusters, opts); err != nil {
		return nil, fmt.Errorf("controlplane: New: %w", err)
	}
	return cp, nil
}

// build constructs the loops, in the order Status lists them.
func (cp *ControlPlane) build(host federation.ClusterClient, clusters federation.ClusterSet, opts Options) error {
	add := func(name string, run func(context.Context) error, needs ...resource) {
		cp.loops = append(cp.loops, &part{name: name, run: run, needs: needs, status: LoopStatus{Name: name, State: StateStopped}})
	}
	clusterGVR := resource{gvr: federation.ClusterGVR}
	if r, ok := clusters.(runner); ok && !opts.Disable.ClusterSet {
		add(ClusterSetLoop, r.Run)
	}
	if !opts.Disable.Monitor {
		m, err := status.NewClusterMonitor(host, clusters, opts.Monitor)
		if err != nil {
			return err
		}
		add(MonitorLoop, m.Run, clusterGVR)
	}
	for _, t := range opts.Types {
		kind := t.Federated.Kind
		if !opts.Disable.Scheduler {
			s, err := scheduler.New(host, t, opts.Scheduler)
			if err != nil {
				return fmt.Errorf("scheduler for %s: %w", kind, err)
			}
			add("scheduler/"+kind, s.Run, federatedOf(t, opts.Scheduler.Namespace),
				resource{gvr: federation.ReplicaSchedulingPreferenceGVR, namespace: opts.Scheduler.Namespace}, clusterGVR)
		}
		if !opts.Disable.Sync {
			s, err := fedsync.New(host, clusters, t, opts.Sync)
			if err != nil {
				return fmt.Errorf("sync for %s: %w", kind, err)
			}
			add("sync/"+kind, s.Run, federatedOf(t, opts.Sync.Namespace), clusterGVR)
		}
		if !opts.Disable.Status {
			c, err := status.New(host, clusters, t, opts.Status)
			if err != nil {
				return fmt.Errorf("status collector for %s: %w", kind, err)
			}
			add("status/"+kind, c.Run, federatedOf(t, opts.Status.Namespace), clusterGVR)
		}
	}
	if !opts.Disable.DNS {
		d, err := dnsrecord.New(host, clusters, opts.DNS)
		if err != nil {
			return err
		}
		ns := opts.DNS.Namespace
		add(DNSLoop, d.Run,
			resource{gvr: dnsrecord.ServiceDNSRecordGVR, namespace: ns},
			resource{gvr: dnsrecord.IngressDNSRecordGVR, namespace: ns},
			resource{gvr: dnsrecord.DNSEndpointGVR, namespace: ns},
			resource{gvr: dnsrecord.DomainGVR, namespace: opts.DNS.DomainNamespace},
			federatedOf(federation.ServiceType, ns), federatedOf(federation.IngressType, ns), clusterGVR)
	}
	return nil
}

// federatedOf is t's federated resource, as a loop restricted to namespace lists it.
func federatedOf(t federation.TypeConfig, namespace string) resource {
	if !t.FederatedNamespaced() {
		namespace = ""
	}
	return resource{gvr: t.FederatedGVR(), namespace: namespace}
}

// Names of the loops that are not per type, as Status reports them. The per-type loops are
// "scheduler/<FederatedKind>", "sync/<FederatedKind>" and "status/<FederatedKind>".
const (
	ClusterSetLoop = "cluster-set"
	MonitorLoop    = "cluster-monitor"
	DNSLoop        = "dnsrecord"
)

// eventScheme is the event recorder's scheme, for the object references of events. The loops
// record events on objects that carry their apiVersion and kind (unstructured, or decoded from
// it), which need no scheme; it knows fedkit's typed objects for the others.
func eventScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := federation.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := dnsrecord.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
