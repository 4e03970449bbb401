package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
)

// LeaseGVR is the resource of the Leases Elect and Shards hold: coordination.k8s.io/v1, as
// client-go's own LeaseLock.
var LeaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// errNotAdmitted is returned by a lock's write when the process may not take another shard
// now (its fair share is reached, see Shards). The elector counts it as a failed try and
// tries again after RetryPeriod.
var errNotAdmitted = errors.New("lease: this process holds its share of the shards")

// Lock is a client-go resourcelock.Interface over a Lease reached through any
// federation.ClusterClient, so client-go's LeaderElector runs on a real host (federation/kube)
// and on the fake one alike. It reads and writes the Lease as unstructured JSON and converts
// its spec with client-go's own helpers, so the records are those client-go's LeaseLock
// writes: kubectl, client-go's LeaseLock and this Lock all read each other's Leases.
//
// Beyond client-go's LeaseLock it keeps labels and annotations of its own on the Lease, and
// it can refuse to acquire (admit), which Shards uses to keep a process to its share.
type Lock struct {
	host      federation.ClusterClient
	namespace string
	name      string
	identity  string
	clock     clock.PassiveClock

	// labels and annotations are set on the Lease by every write of this Lock.
	labels, annotations map[string]string
	// admit, when set, is asked before a write that would take the Lease from someone else
	// (or create it), and before the first write of a term that finds the Lease still held
	// by this identity; false refuses the write with errNotAdmitted. dropped undoes an admit
	// whose write failed.
	admit   func() bool
	dropped func()

	mu    sync.Mutex
	lease *unstructured.Unstructured // last read or written, for the resourceVersion
	// held is when the last write that holds the Lease for this identity started (zero:
	// none since the last release or loss). The Lease is ours until at least
	// held + LeaseDuration in any candidate's eyes, since candidates time the record from
	// when they saw it change, after the write landed.
	held time.Time
}

var _ rl.Interface = (*Lock)(nil)

// NewLock returns a Lock on the Lease namespace/name for identity. It does no I/O.
func NewLock(host federation.ClusterClient, namespace, name, identity string) *Lock {
	return &Lock{host: host, namespace: namespace, name: name, identity: identity, clock: clock.RealClock{}}
}

// Get returns the Lease's record, and bytes that change whenever the Lease does. A missing
// Lease is a NotFound error (the elector then creates it).
//
// The elector times a holder's Lease from when those bytes last changed. client-go's own
// LeaseLock returns the record's JSON there, whose times have whole seconds: renewals within
// one second look alike, so a peer may time the Lease from up to a second before its last
// renewal and take it over up to a second early (seen in tests: a crashed holder's 1s Lease
// taken 230ms after the crash). The bytes here add the Lease's resourceVersion, which every
// renewal changes.
func (l *Lock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	u, err := l.host.Get(ctx, LeaseGVR, l.namespace, l.name)
	if err != nil {
		return nil, nil, err
	}
	record, err := recordOf(u)
	if err != nil {
		return nil, nil, fmt.Errorf("lease: Lease %s: %w", l.Describe(), err)
	}
	raw, err := json.Marshal(struct {
		rl.LeaderElectionRecord
		ResourceVersion string `json:"resourceVersion"`
	}{*record, u.GetResourceVersion()})
	if err != nil {
		return nil, nil, err
	}
	l.mu.Lock()
	l.lease = u
	l.mu.Unlock()
	return record, raw, nil
}

// Create creates the Lease with the record.
func (l *Lock) Create(ctx context.Context, ler rl.LeaderElectionRecord) error {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("coordination.k8s.io/v1")
	u.SetKind("Lease")
	u.SetNamespace(l.namespace)
	u.SetName(l.name)
	return l.write(ctx, ler, u, true)
}

// Update writes the record into the Lease last read or written, locked on its
// resourceVersion: a write based on a stale read fails with a Conflict.
func (l *Lock) Update(ctx context.Context, ler rl.LeaderElectionRecord) error {
	l.mu.Lock()
	u := l.lease
	l.mu.Unlock()
	if u == nil {
		return errors.New("lease: Lease not read yet, call Get or Create first")
	}
	return l.write(ctx, ler, u.DeepCopy(), false)
}

// write creates or updates u with the record ler.
func (l *Lock) write(ctx context.Context, ler rl.LeaderElectionRecord, u *unstructured.Unstructured, create bool) error {
	// Taking the Lease, or the first write of a term that finds it held by this identity
	// still (a release that failed, a renewal that landed late): both must be admitted, or
	// a process takes back at once a shard it handed over.
	l.mu.Lock()
	newTerm := l.held.IsZero()
	l.mu.Unlock()
	acquiring := ler.HolderIdentity == l.identity && (create || holderOf(u) != l.identity || newTerm)
	if acquiring && l.admit != nil {
		if !l.admit() {
			return errNotAdmitted
		}
	}
	spec, err := specOf(ler)
	if err != nil {
		return err
	}
	u.Object["spec"] = spec
	if len(l.labels) > 0 {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, l.labels)
		u.SetLabels(labels)
	}
	if len(l.annotations) > 0 {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		maps.Copy(ann, l.annotations)
		u.SetAnnotations(ann)
	}
	started := l.clock.Now()
	var out *unstructured.Unstructured
	if create {
		out, err = l.host.Create(ctx, LeaseGVR, u)
	} else {
		out, err = l.host.Update(ctx, LeaseGVR, u)
	}
	if err != nil {
		if acquiring && l.dropped != nil {
			l.dropped()
		}
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lease = out
	if ler.HolderIdentity == l.identity {
		l.held = started
	} else {
		l.held = time.Time{}
	}
	return nil
}

// heldSince returns when the last write that holds the Lease started; zero when none did
// since the last release.
func (l *Lock) heldSince() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// forget clears the time of the last holding write, once the term that made it is over.
func (l *Lock) forget() {
	l.mu.Lock()
	l.held = time.Time{}
	l.mu.Unlock()
}

// release gives the Lease up if this identity still holds it, as client-go's release does:
// an empty holder, which every candidate may take at once, and a lease of one second. It
// reads the Lease first and retries on a Conflict, so it never clears a peer's hold.
func (l *Lock) release(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		record, _, err := l.Get(ctx)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if record.HolderIdentity != l.identity {
			return nil
		}
		now := metav1.NewTime(l.clock.Now())
		err = l.Update(ctx, rl.LeaderElectionRecord{
			LeaseDurationSeconds: 1,
			LeaderTransitions:    record.LeaderTransitions,
			AcquireTime:          now,
			RenewTime:            now,
		})
		if apierrors.IsConflict(err) && attempt < 3 {
			continue
		}
		return err
	}
}

// Identity returns the identity the Lock writes as holder.
func (l *Lock) Identity() string { return l.identity }

// Describe returns "namespace/name".
func (l *Lock) Describe() string { return l.namespace + "/" + l.name }

// RecordEvent does nothing: the elector's transitions reach the logs through Elect and
// Shards, and Events on the host are left to the embedder.
func (l *Lock) RecordEvent(string) {}

// recordOf converts a Lease to client-go's record.
func recordOf(u *unstructured.Unstructured) (*rl.LeaderElectionRecord, error) {
	var spec coordinationv1.LeaseSpec
	if m, ok := u.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
	}
	return rl.LeaseSpecToLeaderElectionRecord(&spec), nil
}

// specOf converts a record to a Lease's spec, as client-go's LeaseLock writes it.
func specOf(ler rl.LeaderElectionRecord) (map[string]any, error) {
	spec := rl.LeaderElectionRecordToLeaseSpec(&ler)
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds < 1 {
		// The API server refuses 0; Options keep LeaseDuration whole seconds, so only a
		// record of client-go's making could carry it.
		one := int32(1)
		spec.LeaseDurationSeconds = &one
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
}

// holderOf returns a Lease's holder identity ("" when none).
func holderOf(u *unstructured.Unstructured) string {
	h, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	return h
}
