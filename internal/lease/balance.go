package lease

import (
	"context"
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

// balance is one round of Shards' spreading, every RetryPeriod: it renews this process's
// presence, looks at every Lease of the group, counts the live processes, sets this
// process's share, and hands over the shards beyond it.
func (s *sharder) balance(ctx context.Context) {
	if err := s.heartbeat(ctx); err != nil && ctx.Err() == nil {
		s.log.V(1).Info("Renewing the presence lease failed", "lease", s.opts.Namespace+"/"+s.member, "error", err.Error())
	}
	list, err := s.host.List(ctx, LeaseGVR, s.opts.Namespace, metav1.ListOptions{LabelSelector: GroupLabel + "=" + s.opts.Name})
	if err != nil {
		if ctx.Err() == nil {
			s.log.V(1).Info("Listing the leases failed; keeping the last share", "error", err.Error())
		}
		return
	}
	now := s.clock.Now()
	live := map[string]bool{s.opts.Identity: true}
	blockedBy := ""
	names := map[string]bool{}
	for i := range list.Items {
		u := &list.Items[i]
		names[u.GetName()] = true
		obs, ok := s.seen[u.GetName()]
		if !ok || obs.rv != u.GetResourceVersion() {
			obs = observation{rv: u.GetResourceVersion(), at: now}
			s.seen[u.GetName()] = obs
		}
		holder := holderOf(u)
		fresh := now.Sub(obs.at) < s.opts.LeaseDuration
		switch {
		case holder == "" || holder == s.opts.Identity:
		case fresh:
			live[holder] = true
			if u.GetLabels()[RoleLabel] == "shard" && u.GetAnnotations()[CountAnnotation] != strconv.Itoa(s.opts.Count) {
				blockedBy = holder + " (" + u.GetName() + ", Count " + u.GetAnnotations()[CountAnnotation] + ")"
			}
		case u.GetLabels()[RoleLabel] == "member" && now.Sub(obs.at) >= staleAfter*s.opts.LeaseDuration:
			s.deleteStale(ctx, u)
		}
	}
	for name := range s.seen {
		if !names[name] {
			delete(s.seen, name)
		}
	}
	peers := slices.Sorted(func(yield func(string) bool) {
		for id := range live {
			if !yield(id) {
				return
			}
		}
	})
	rank := slices.Index(peers, s.opts.Identity)
	share := s.opts.Count / len(peers)
	if rank < s.opts.Count%len(peers) {
		share++
	}
	s.setShare(share, blockedBy, len(peers))
}

// setShare records this process's share and hands over the shards beyond it: the highest
// indexes it holds, whose work is stopped and whose Leases are then released.
func (s *sharder) setShare(share int, blockedBy string, processes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if share != s.share || (blockedBy != "") != s.blocked {
		s.log.Info("Share of shards changed", "share", share, "was", s.share, "processes", processes, "count", s.opts.Count, "blockedBy", blockedBy)
	}
	s.share, s.blocked = share, blockedBy != ""
	var held []int
	for i, t := range s.terms {
		if (t.reserved || t.leading) && !t.resigning {
			held = append(held, i)
		}
	}
	if len(held) <= share {
		return
	}
	slices.Sort(held)
	for _, i := range held[share:] {
		t := s.terms[i]
		t.resigning = true
		close(t.resign)
		s.log.Info("Handing a shard over", "shard", strconv.Itoa(i)+"/"+strconv.Itoa(s.opts.Count), "share", share)
	}
}

// heartbeat creates or renews this process's presence Lease.
func (s *sharder) heartbeat(ctx context.Context) error {
	now := metav1.NewMicroTime(s.clock.Now())
	seconds := int64(s.opts.LeaseDuration / time.Second)
	u, err := s.host.Get(ctx, LeaseGVR, s.opts.Namespace, s.member)
	if apierrors.IsNotFound(err) {
		u = &unstructured.Unstructured{}
		u.SetAPIVersion("coordination.k8s.io/v1")
		u.SetKind("Lease")
		u.SetNamespace(s.opts.Namespace)
		u.SetName(s.member)
		u.SetLabels(map[string]string{GroupLabel: s.opts.Name, RoleLabel: "member"})
		u.Object["spec"] = map[string]any{
			"holderIdentity":       s.opts.Identity,
			"leaseDurationSeconds": seconds,
			"acquireTime":          now.UTC().Format(metav1.RFC3339Micro),
			"renewTime":            now.UTC().Format(metav1.RFC3339Micro),
		}
		_, err = s.host.Create(ctx, LeaseGVR, u)
		return err
	}
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedField(u.Object, now.UTC().Format(metav1.RFC3339Micro), "spec", "renewTime"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(u.Object, s.opts.Identity, "spec", "holderIdentity"); err != nil {
		return err
	}
	_, err = s.host.Update(ctx, LeaseGVR, u)
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
