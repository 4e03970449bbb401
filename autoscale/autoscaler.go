package autoscale

import (
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Autoscaler is the autoscaling loop. For each ReplicaSchedulingPreference with
// spec.autoscale it reads the members the workload is scheduled in through a
// [MetricsSource], calls [Decide] and writes the fleet's total to status.autoscale (Central
// mode); in Distributed mode it gives each member a HorizontalPodAutoscaler bounded by its
// share ([SplitBounds]) and shows the sum. [Autoscaler.Reconcile] is one pass over one
// preference; [Autoscaler.Run] watches the host and calls it. It is safe for concurrent use
// over different preferences; passes over one preference must not overlap (Run's queue
// never lets them).
//
// It remembers, per preference, the recommendations and changes of recent passes (History)
// and each member's last good sample; a restart forgets them (see [History].Since).
type Autoscaler struct {
	host       federation.ClusterClient
	clusters   federation.ClusterSet
	opts       Options
	reconciles *fedmetrics.Reconciles
	cl         loop.Clusters

	mu     sync.Mutex
	memory map[federation.Key]*memory
}

// memory is what the Autoscaler keeps of one preference between passes.
type memory struct {
	history History
	// samples are the members' last good samples.
	samples map[string]Sample
	// warned is the reason of the last Warning recorded, so a persistent failure is
	// reported once.
	warned string
	// hpas are the clusters where Distributed mode wrote a HorizontalPodAutoscaler, for
	// owner (the preference's uid).
	hpas  map[string]bool
	owner types.UID
}

// New returns an Autoscaler that reads preferences, federated objects and Clusters through
// host, the members through clusters (Options.Source), and writes the preferences' status
// through host. It starts nothing. It returns an error when host or clusters is nil, an
// option is invalid (wrapping [ErrInvalidOptions]) or the metrics cannot be registered.
func New(host federation.ClusterClient, clusters federation.ClusterSet, opts Options) (*Autoscaler, error) {
	if host == nil {
		return nil, errors.New("autoscale: New: host client is nil")
	}
	if clusters == nil {
		return nil, errors.New("autoscale: New: cluster set is nil")
	}
	if err := loop.ValidateShard(ErrInvalidOptions, opts.Shard); err != nil {
		return nil, fmt.Errorf("autoscale: New: %w", err)
	}
	opts.complete(host, clusters)
	for _, t := range opts.Types {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("autoscale: New: %w: type %s: %w", ErrInvalidOptions, t, err)
		}
	}
	r, err := fedmetrics.NewReconciles(opts.Registerer, fedmetrics.LoopAutoscale, kindRSP)
	if err != nil {
		return nil, fmt.Errorf("autoscale: New: %w", err)
	}
	return &Autoscaler{host: host, clusters: clusters, opts: opts, reconciles: r, memory: map[federation.Key]*memory{}}, nil
}

const kindRSP = "ReplicaSchedulingPreference"

// memoryOf returns key's memory, made on first use. The caller holds no lock; the memory
// of one key is used by one pass at a time (the loop's queue hands a key to one worker).
func (a *Autoscaler) memoryOf(key federation.Key) *memory {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.memory[key]
	if m == nil {
		m = &memory{samples: map[string]Sample{}, hpas: map[string]bool{}}
		a.memory[key] = m
	}
	return m
}

// forget drops key's memory (the preference is gone or no longer autoscaled).
func (a *Autoscaler) forget(key federation.Key) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.memory, key)
}
