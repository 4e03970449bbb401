package fedkit_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// The contract names of ARCHITECTURE.md, spelled out with their exact signatures. Embedders
// and acceptance tests call them, so a rename or a changed signature must fail to compile
// here rather than in a user's build.
var (
	_ func(federation.ClusterClient, federation.TypeConfig, scheduler.Options) (*scheduler.Scheduler, error)                         = scheduler.New
	_ func(federation.ClusterClient, federation.ClusterSet, federation.TypeConfig, fedsync.Options) (*fedsync.Syncer, error)         = fedsync.New
	_ func(context.Context, federation.ClusterClient, federation.TypeConfig, federation.Key, int64, ...fedsync.RollbackOption) error = fedsync.Rollback
	_ func(federation.ClusterClient, federation.ClusterSet, federation.TypeConfig, status.Options) (*status.Collector, error)        = status.New
	_ func(federation.ClusterClient, federation.ClusterSet, status.MonitorOptions) (*status.ClusterMonitor, error)                   = status.NewClusterMonitor
	_ func(federation.ClusterClient, federation.ClusterSet, dnsrecord.Options) (*dnsrecord.Controller, error)                        = dnsrecord.New
	_ func(federation.Placement, []federation.Cluster) ([]string, error)                                                             = placement.Select
	_ func(scheduler.Request) (scheduler.Plan, error)                                                                                = scheduler.Divide
	_ func(*unstructured.Unstructured, []federation.OverrideOp) error                                                                = override.Apply
	_ func(context.Context, *dnsrecord.ServiceDNSRecord, dnsrecord.Resolver) ([]dnsrecord.Endpoint, error)                           = dnsrecord.ServiceEndpoints
	_ func(context.Context, *dnsrecord.IngressDNSRecord, dnsrecord.Resolver) ([]dnsrecord.Endpoint, error)                           = dnsrecord.IngressEndpoints
	_ func() *fake.Fleet                                                                                                             = fake.NewFleet
	_ func(*fake.Fleet, string, map[string]string) *fake.Cluster                                                                     = (*fake.Fleet).Add
	_ func(string) *fake.Cluster                                                                                                     = fake.NewCluster
	_ func(error) error                                                                                                              = federation.Terminal
	_ federation.ClusterClient                                                                                                       = (*fake.Cluster)(nil)
	_ federation.ClusterSet                                                                                                          = (*fake.Fleet)(nil)
	_ federation.Result                                                                                                              = federation.Result{RequeueAfter: 0}
	_ error                                                                                                                          = federation.ErrClusterNotFound
	_ dnsrecord.Resolver                                                                                                             = contractResolver{}
)

// loop is what every loop type offers: one pass for one key, and an optional Run.
type loop interface {
	Reconcile(ctx context.Context, key federation.Key) (federation.Result, error)
	Run(ctx context.Context) error
}

var (
	_ loop = (*scheduler.Scheduler)(nil)
	_ loop = (*fedsync.Syncer)(nil)
	_ loop = (*status.Collector)(nil)
	_ loop = (*status.ClusterMonitor)(nil)
	_ loop = (*dnsrecord.Controller)(nil)
)

// contractRollback is the contract's call of Rollback: its five arguments, no option. The
// options Rollback takes since are variadic, so every call written to the contract compiles.
func contractRollback(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key, revision int64) error {
	return fedsync.Rollback(ctx, host, typ, key, revision)
}

var _ func(context.Context, federation.ClusterClient, federation.TypeConfig, federation.Key, int64) error = contractRollback

type contractResolver struct{}

func (contractResolver) LookupHost(context.Context, string) ([]string, error) { return nil, nil }

// TestContractNames checks what the compiler cannot: the values and fields the contract fixes.
func TestContractNames(t *testing.T) {
	key := federation.Key{Namespace: "production", Name: "app-frontend"}
	if got := key.String(); got != "production/app-frontend" {
		t.Errorf("Key.String() = %q, want production/app-frontend", got)
	}
	if scheduler.Webster != federation.AlgorithmWebster || scheduler.KubeFed != federation.AlgorithmKubeFed {
		t.Errorf("scheduler.Webster/KubeFed = %q/%q, want the federation algorithms", scheduler.Webster, scheduler.KubeFed)
	}
	req := scheduler.Request{
		Key:           key.String(),
		TotalReplicas: 3,
		Clusters:      []scheduler.ClusterState{{Name: "a", Current: nil, Capacity: nil, Cost: nil, Domain: ""}},
		Preferences:   map[string]federation.ClusterPreferences{"*": {Weight: 1}},
		Rebalance:     false,
		Algorithm:     scheduler.Webster,
	}
	plan, err := scheduler.Divide(req)
	if err != nil {
		t.Fatalf("Divide: %v", err)
	}
	if got := plan.Replicas["a"]; got != 3 {
		t.Errorf("Divide gave a %d replicas, want 3", got)
	}
}
