package lease

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// staleAfter is how many LeaseDurations a peer's presence Lease may go unrenewed before a
// process deletes it: a process that crashed leaves it, and identities of pods are not
// reused.
const staleAfter = 3

// view is what one balance round saw of the group's Leases.
type view struct {
	// present are the processes whose Leases changed within LeaseDuration, this one
	// included, less those whose only Lease is a presence that is not ready: the shares are
	// computed over them.
	present []string
	// demand is how many shards the live peers say they would take (WantsAnnotation), and
	// wanting the peers that said so.
	demand  int
	wanting []string
	// free counts the shards whose Lease no present process holds; idle are those among
	// them free for LeaseDuration at least.
	free int
	idle map[int]bool
	// blockedBy names a present peer that holds a shard with another Count.
	blockedBy string
}

// balance is one round of Shards' spreading, every RetryPeriod: it looks at every Lease of
// the group, counts the present processes, sets this process's share, hands over the shards
// beyond it that a live peer is ready to take, and renews this process's presence, saying how
// many shards it would take.
func (s *sharder) balance(ctx context.Context) {
	list, err := s.host.List(ctx, LeaseGVR, s.opts.Namespace, metav1.ListOptions{LabelSelector: GroupLabel + "=" + s.opts.Name})
	wants := -1 // not ready: this process does not see the Leases
	if err != nil {
		if ctx.Err() == nil {
			s.log.V(1).Info("Listing the leases failed; keeping the last share, taking no shard beyond it", "error", err.Error())
		}
		s.mu.Lock()
		s.idle = nil
		s.mu.Unlock()
	} else {
		wants = s.setShare(s.look(ctx, list.Items))
	}
	if err := s.heartbeat(ctx, wants); err != nil && ctx.Err() == nil {
		s.log.V(1).Info("Renewing the presence lease failed", "lease", s.opts.Namespace+"/"+s.member, "error", err.Error())
	}
}

// look records when each Lease was seen to change and sums up what the Leases say now. It
// deletes the presence Leases of processes long gone.
func (s *sharder) look(ctx context.Context, items []unstructured.Unstructured) view {
	now := s.clock.Now()
	if s.firstLook.IsZero() {
		s.firstLook = now
	}
	present := map[string]bool{s.opts.Identity: true}
	var out view
	taken := map[int]bool{} // shards a present process holds (this one's own included)
	names := map[string]bool{}
	count := strconv.Itoa(s.opts.Count)
	for i := range items {
		u := &items[i]
		names[u.GetName()] = true
		obs, ok := s.seen[u.GetName()]
		switch {
		case !ok:
			obs = observation{rv: u.GetResourceVersion(), at: now}
		case obs.rv != u.GetResourceVersion():
			obs = observation{rv: u.GetResourceVersion(), at: now, renewed: true}
		}
		s.seen[u.GetName()] = obs
		holder := holderOf(u)
		role := u.GetLabels()[RoleLabel]
		shard, isShard := s.shardIndex(u)
		fresh := now.Sub(obs.at) < s.opts.LeaseDuration
		switch {
		case holder == "":
		case holder == s.opts.Identity:
			// This process's own: its candidate renews or takes it back.
			if isShard {
				taken[shard] = true
			}
		case fresh && role == "member" && !readyPresence(u, count):
			// A process that has not looked at the Leases (or runs another Count) takes no
			// shard: counted in the shares, it would lower every other process's share for
			// as long as it stays so, and a shard its holder dropped for a moment would go
			// to whoever took it beyond the share, not back below a share.
		case fresh:
			present[holder] = true
			if role == "shard" && u.GetAnnotations()[CountAnnotation] != count {
				out.blockedBy = holder + " (" + u.GetName() + ", Count " + u.GetAnnotations()[CountAnnotation] + ")"
			}
			if isShard {
				taken[shard] = true
			}
			// A live peer: seen renewing its presence (not only a Lease left behind), with
			// this Count, saying it would take shards.
			if role == "member" && obs.renewed && u.GetAnnotations()[CountAnnotation] == count {
				if w, err := strconv.Atoi(u.GetAnnotations()[WantsAnnotation]); err == nil && w > 0 {
					out.demand += w
					out.wanting = append(out.wanting, holder)
				}
			}
		case role == "member" && now.Sub(obs.at) >= staleAfter*s.opts.LeaseDuration:
			s.deleteStale(ctx, u)
		}
	}
	for name := range s.seen {
		if !names[name] {
			delete(s.seen, name)
		}
	}
	out.idle = map[int]bool{}
	for i := range s.opts.Count {
		if taken[i] {
			continue
		}
		out.free++
		// Free since: its release, its holder's last renewal and LeaseDuration, or (never
		// created) this process's first look.
		since := s.firstLook
		if obs, ok := s.seen[s.shardName(i)]; ok {
			since = obs.at
			if u := findLease(items, s.shardName(i)); u != nil && holderOf(u) != "" {
				since = since.Add(s.opts.LeaseDuration)
			}
		}
		if now.Sub(since) >= s.opts.LeaseDuration {
			out.idle[i] = true
		}
	}
	out.present = slices.Sorted(func(yield func(string) bool) {
		for id := range present {
			if !yield(id) {
				return
			}
		}
	})
	slices.Sort(out.wanting)
	return out
}

// readyPresence reports whether u, a presence Lease, says its process is ready to take
// shards of this Count: it carries the Count and how many shards the process would take.
func readyPresence(u *unstructured.Unstructured, count string) bool {
	ann := u.GetAnnotations()
	_, wants := ann[WantsAnnotation]
	return wants && ann[CountAnnotation] == count
}

// setShare records this process's share from l and hands over the shards beyond it, as
// many as the live peers that want shards can take beyond the free ones: the highest
// indexes it holds, whose work is stopped and whose Leases are then released. A shard is
// never handed over to a peer that has not shown it is live and ready to take it, so it keeps
// running here meanwhile. It returns how many shards this process would take now (-1: none,
// it is blocked by a peer with another Count).
func (s *sharder) setShare(l view) (wants int) {
	processes := len(l.present)
	rank := slices.Index(l.present, s.opts.Identity)
	share := s.opts.Count / processes
	if rank < s.opts.Count%processes {
		share++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if share != s.share || (l.blockedBy != "") != s.blocked {
		s.log.Info("Share of shards changed", "share", share, "was", s.share, "processes", processes, "count", s.opts.Count, "blockedBy", l.blockedBy)
	}
	s.share, s.blocked = share, l.blockedBy != ""
	// Free shards that stayed free for LeaseDuration while no live peer wants them are taken
	// beyond the share: the views of the processes disagree, and nobody else will.
	s.idle, s.spare = nil, 0
	if !s.blocked && len(l.idle) > l.demand {
		s.idle, s.spare = l.idle, len(l.idle)-l.demand
	}
	var held []int
	for i, t := range s.terms {
		if (t.reserved || t.leading) && !t.resigning {
			held = append(held, i)
		}
	}
	give := min(len(held)-share, l.demand-l.free)
	if give > 0 {
		slices.Sort(held)
		for _, i := range held[len(held)-give:] {
			t := s.terms[i]
			t.resigning = true
			close(t.resign)
			s.log.Info("Handing a shard over", "shard", strconv.Itoa(i)+"/"+strconv.Itoa(s.opts.Count), "share", share, "wantedBy", l.wanting)
		}
	}
	if s.blocked {
		return -1
	}
	return max(0, share-s.heldLocked())
}

// shardIndex returns the index of u when it is a shard Lease of the group.
func (s *sharder) shardIndex(u *unstructured.Unstructured) (int, bool) {
	if u.GetLabels()[RoleLabel] != "shard" {
		return 0, false
	}
	suffix, ok := strings.CutPrefix(u.GetName(), s.opts.Name+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(suffix)
	if err != nil || i < 0 || i >= s.opts.Count || s.shardName(i) != u.GetName() {
		return 0, false
	}
	return i, true
}

// shardName is the name of shard i's Lease.
func (s *sharder) shardName(i int) string { return s.opts.Name + "-" + strconv.Itoa(i) }

func findLease(items []unstructured.Unstructured, name string) *unstructured.Unstructured {
	for i := range items {
		if items[i].GetName() == name {
			return &items[i]
		}
	}
	return nil
}

// heartbeat creates or renews this process's presence Lease, with its Count and, when wants
// is not negative, how many shards it would take (WantsAnnotation; absent: it takes none, it
// is not ready).
func (s *sharder) heartbeat(ctx context.Context, wants int) error {
	now := metav1.NewMicroTime(s.clock.Now())
	seconds := int64(s.opts.LeaseDuration / time.Second)
	u, err := s.host.Get(ctx, LeaseGVR, s.opts.Namespace, s.member)
	create := apierrors.IsNotFound(err)
	switch {
	case create:
		u = &unstructured.Unstructured{}
		u.SetAPIVersion("coordination.k8s.io/v1")
		u.SetKind("Lease")
		u.SetNamespace(s.opts.Namespace)
		u.SetName(s.member)
		u.SetLabels(map[string]string{GroupLabel: s.opts.Name, RoleLabel: "member"})
		u.Object["spec"] = map[string]any{
			"leaseDurationSeconds": seconds,
			"acquireTime":          now.UTC().Format(metav1.RFC3339Micro),
		}
	case err != nil:
		return err
	}
	if err := unstructured.SetNestedField(u.Object, now.UTC().Format(metav1.RFC3339Micro), "spec", "renewTime"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(u.Object, s.opts.Identity, "spec", "holderIdentity"); err != nil {
		return err
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	maps.Copy(ann, s.opts.Annotations)
	ann[CountAnnotation] = strconv.Itoa(s.opts.Count)
	if wants >= 0 {
		ann[WantsAnnotation] = strconv.Itoa(wants)
	} else {
		delete(ann, WantsAnnotation)
	}
	u.SetAnnotations(ann)
	if create {
		_, err = s.host.Create(ctx, LeaseGVR, u)
	} else {
		_, err = s.host.Update(ctx, LeaseGVR, u)
	}
	return err
}

// deleteStale deletes a peer's presence Lease that has not been renewed for staleAfter
// LeaseDurations, unless it changed since it was read.
func (s *sharder) deleteStale(ctx context.Context, u *unstructured.Unstructured) {
	rv := u.GetResourceVersion()
	err := s.host.Delete(ctx, LeaseGVR, u.GetNamespace(), u.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
	switch {
	case err == nil:
		s.log.Info("Deleted the presence lease of a process gone", "lease", u.GetNamespace()+"/"+u.GetName(), "holder", strings.TrimSpace(holderOf(u)))
		delete(s.seen, u.GetName())
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
	default:
		s.log.V(1).Info("Deleting a stale presence lease failed", "lease", u.GetNamespace()+"/"+u.GetName(), "error", err.Error())
	}
}
