package lease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
)

// Labels and annotations on the Leases of Shards.
const (
	// GroupLabel is set on every Lease of one Shards deployment, to Options.Name, so one List
	// finds them all.
	GroupLabel = "federation.k8s.io/lease-group"
	// RoleLabel says what a Lease of the group is: "shard" or "member" (a process's presence).
	RoleLabel = "federation.k8s.io/lease-role"
	// CountAnnotation on a shard Lease is its holder's Options.Count; on a presence Lease,
	// the process's.
	CountAnnotation = "federation.k8s.io/shard-count"
	// WantsAnnotation on a presence Lease is how many more shards the process would take
	// now, by its own view: a process hands a shard over only to a live peer that says so.
	// Absent: the process takes none (it has not seen the Leases yet, or another Count runs).
	WantsAnnotation = "federation.k8s.io/shard-wants"
)

// Shards claims shards of the keys for this process and runs run once per shard it holds,
// each with its own context, so that N processes calling Shards with the same Options.Name
// and Count split the shards 0 to Count-1 between them, with no shard running in two
// processes at once. Every fedkit loop takes the shard as Options.Shard.
//
// Each shard has its Lease, Name-<index>, held and given up as Elect holds its one (see the
// package documentation for the order of things when a shard is lost or handed over). The
// shards are spread evenly: with n live processes each holds Count/n of them, give or take
// one, by a rule every process computes alike from the Leases it sees; a process that joins
// gets its share as the others hand the excess over, once they saw it renew its presence
// and say it wants shards (see "Hand-over" in the package documentation), and the shards of
// a process that dies are taken over once their Leases expire, LeaseDuration after they were
// last seen renewed (plus up to two RetryPeriods).
//
// run must return promptly once its context is done, as with Elect. Shards returns nil when
// ctx is done, after every run has returned; with Options.ReleaseOnCancel it releases the
// shard Leases and deletes its presence Lease, so peers take its shards over at once. If a
// run returns by itself, Shards stops every shard and returns that run's error (nil
// included). It returns an error wrapping ErrInvalidOptions for Options it cannot use.
//
// The host must let the process get, list, create, update and delete Leases in
// Options.Namespace. Time runs on the real clock, as for Elect.
func Shards(ctx context.Context, host federation.ClusterClient, opts Options, run func(ctx context.Context, shard federation.Shard) error) error {
	if host == nil {
		return fmt.Errorf("%w: nil host", ErrInvalidOptions)
	}
	if err := opts.complete(true); err != nil {
		return err
	}
	return newSharder(host, opts, clock.RealClock{}).run(ctx, run)
}

// newSharder returns the sharder of Shards for completed opts, timing the Leases it sees on
// clk (the real clock in Shards, a fake one in tests of the balance).
func newSharder(host federation.ClusterClient, opts Options, clk clock.WithTicker) *sharder {
	sum := sha256.Sum256([]byte(opts.Identity))
	return &sharder{
		host:   host,
		opts:   opts,
		clock:  clk,
		log:    opts.Logger.WithValues("identity", opts.Identity),
		member: opts.Name + "-member-" + hex.EncodeToString(sum[:5]),
		seen:   map[string]observation{},
		terms:  map[int]*shardTerm{},
	}
}

// sharder is one process's side of Shards.
type sharder struct {
	host   federation.ClusterClient
	opts   Options
	clock  clock.WithTicker
	log    logr.Logger
	member string // the presence Lease's name

	// seen is, per Lease of the group, its last resourceVersion and when it changed: a
	// Lease is live while it changed within LeaseDuration, timed on this process's clock as
	// client-go's elector times it, so clocks need not agree.
	seen map[string]observation
	// firstLook is when this process first listed the Leases.
	firstLook time.Time

	mu sync.Mutex
	// share is how many shards this process may hold (0 until the first look at the
	// Leases); blocked says a live peer runs another Count.
	share   int
	blocked bool
	// idle are the shards free for LeaseDuration that no live peer wants: up to spare of
	// them may be taken beyond the share.
	idle  map[int]bool
	spare int
	terms map[int]*shardTerm
}

// observation is when a Lease was seen to change.
type observation struct {
	rv string
	at time.Time
	// renewed says the Lease changed since this process first saw it: its holder renews it,
	// it is not only a Lease left behind.
	renewed bool
}

// shardTerm is the state of one shard's current term in this process.
type shardTerm struct {
	resign    chan struct{}
	reserved  bool // admitted to acquire, or acquired
	leading   bool // its work runs
	resigning bool // resign was closed
}

func (s *sharder) run(ctx context.Context, run func(context.Context, federation.Shard) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		returned bool
		result   error
	)
	finish := func(err error) {
		if errors.Is(err, errWorkReturned) {
			err = nil
		}
		mu.Lock()
		if !returned {
			returned, result = true, err
		}
		mu.Unlock()
		cancel()
	}
	s.balance(ctx) // the first look at the Leases decides this process's share
	for i := range s.opts.Count {
		wg.Go(func() {
			if err := s.campaign(ctx, i, run); err != nil || ctx.Err() == nil {
				finish(err) // a run returned by itself, or the elector could not start
			}
		})
	}
	wg.Go(func() {
		t := s.clock.NewTicker(s.opts.RetryPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				s.balance(ctx)
			}
		}
	})
	wg.Wait()
	if s.opts.ReleaseOnCancel {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RenewDeadline)
		defer dcancel()
		if err := s.host.Delete(dctx, LeaseGVR, s.opts.Namespace, s.member, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			s.log.Error(err, "Deleting the presence lease failed; it expires on its own", "lease", s.opts.Namespace+"/"+s.member)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return result
}

// campaign runs the terms of shard i until ctx is done (nil) or its work returns by itself
// (its error, or errWorkReturned for nil).
func (s *sharder) campaign(ctx context.Context, i int, run func(context.Context, federation.Shard) error) error {
	shard := federation.Shard{Index: i, Count: s.opts.Count}
	lock := NewLock(s.host, s.opts.Namespace, fmt.Sprintf("%s-%d", s.opts.Name, i), s.opts.Identity)
	lock.labels = map[string]string{GroupLabel: s.opts.Name, RoleLabel: "shard"}
	lock.annotations = maps.Clone(s.opts.Annotations)
	if lock.annotations == nil {
		lock.annotations = map[string]string{}
	}
	lock.annotations[CountAnnotation] = strconv.Itoa(s.opts.Count)
	lock.admit = func() bool { return s.admit(i) }
	lock.dropped = func() { s.drop(i) }
	c := &candidate{lock: lock, opts: s.opts, clock: s.clock, log: s.log.WithValues("shard", shard.String())}
	work := func(ctx context.Context) error {
		s.mu.Lock()
		s.terms[i].leading = true
		s.mu.Unlock()
		return run(ctx, shard)
	}
	for ctx.Err() == nil {
		resign := make(chan struct{})
		s.mu.Lock()
		s.terms[i] = &shardTerm{resign: resign}
		s.mu.Unlock()
		res, err := c.term(ctx, resign, work)
		s.mu.Lock()
		delete(s.terms, i)
		s.mu.Unlock()
		switch {
		case err != nil:
			return err
		case res.returned:
			if res.err == nil {
				return errWorkReturned
			}
			return res.err
		}
	}
	return nil
}

// errWorkReturned stands for a run that returned nil by itself; Shards returns nil for it.
var errWorkReturned = fmt.Errorf("lease: the work of a shard returned")

// admit is the Lock's admission check for shard i: it reserves a place for the shard if
// the process holds fewer shards than its share, or if the shard has been free for
// LeaseDuration and no live peer wants it (the last balance's spare).
func (s *sharder) admit(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.terms[i]
	if t == nil || t.resigning {
		return false
	}
	if t.reserved {
		return true
	}
	switch {
	case s.blocked:
		return false
	case s.heldLocked() < s.share:
	case s.idle[i] && s.spare > 0:
		s.spare--
		delete(s.idle, i)
		s.log.Info("Taking a shard beyond the share: it has been free for LeaseDuration and no live peer wants it",
			"shard", strconv.Itoa(i)+"/"+strconv.Itoa(s.opts.Count), "share", s.share)
	default:
		return false
	}
	t.reserved = true
	return true
}

// drop undoes the reservation of shard i after a failed acquisition.
func (s *sharder) drop(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.terms[i]; t != nil && !t.leading {
		t.reserved = false
	}
}

// heldLocked counts the shards this process holds or is acquiring, those it is handing
// over included until they are released.
func (s *sharder) heldLocked() int {
	n := 0
	for _, t := range s.terms {
		if t.reserved || t.leading {
			n++
		}
	}
	return n
}
