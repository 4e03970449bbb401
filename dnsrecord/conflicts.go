package dnsrecord

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// ReasonNameConflict: some of the record's names are claimed by an older record in another
// namespace; they (and the CNAMEs that point at them) are not published, the others are.
const ReasonNameConflict = "NameConflict"

// claimant is a record that claims DNS names.
type claimant struct {
	kind, namespace, name string
	uid                   types.UID
	created               time.Time
}

func (c claimant) id() string { return c.kind + "/" + c.namespace + "/" + c.name }

func (c claimant) String() string { return c.kind + " " + c.namespace + "/" + c.name }

// before reports whether c keeps a name that it and d claim: the older record, ties broken by
// namespace, name and kind so that every process agrees.
func (c claimant) before(d claimant) bool {
	if !c.created.Equal(d.created) {
		return c.created.Before(d.created)
	}
	return cmp.Or(cmp.Compare(c.namespace, d.namespace), cmp.Compare(c.name, d.name), cmp.Compare(c.kind, d.kind)) < 0
}

// claimsOf returns the record u of kind and the names it claims: what its spec and its last
// status would publish (a ServiceDNSRecord's [ServiceNames], an IngressDNSRecord's hosts once
// a pass has filled its status), lower-cased. A record being deleted, or one that does not
// decode, claims nothing.
func claimsOf(kind string, u *unstructured.Unstructured) (claimant, []string) {
	who := claimant{kind: kind, namespace: u.GetNamespace(), name: u.GetName(), uid: u.GetUID(), created: u.GetCreationTimestamp().Time}
	if u.GetDeletionTimestamp() != nil {
		return who, nil
	}
	var names []string
	switch kind {
	case kindService:
		rec := &ServiceDNSRecord{}
		if federation.FromUnstructured(u, rec) != nil {
			return who, nil
		}
		names, _ = ServiceNames(rec)
	case kindIngress:
		rec := &IngressDNSRecord{}
		if federation.FromUnstructured(u, rec) != nil || len(rec.Status.DNS) == 0 {
			return who, nil
		}
		for _, h := range rec.Spec.Hosts {
			if h = strings.ToLower(strings.TrimSuffix(h, ".")); h != "" {
				names = append(names, h)
			}
		}
	}
	return who, names
}

// claimIndex knows which records claim which names. Run keeps one current from the records'
// events; a direct Reconcile builds one from a List of the records.
type claimIndex struct {
	mu       sync.Mutex
	ready    bool                           // filled from a List (Run: once, then events)
	byName   map[string]map[string]claimant // name -> claimant id -> claimant
	byRecord map[string][]string            // claimant id -> its names
	gone     map[types.UID][]federation.Key // what a deletion affects, for the Keys call after it
}

func newClaimIndex() *claimIndex {
	return &claimIndex{byName: map[string]map[string]claimant{}, byRecord: map[string][]string{}, gone: map[types.UID][]federation.Key{}}
}

// setLocked makes who claim names and returns the other records that claim any of its old or
// new names, which must look again.
func (x *claimIndex) setLocked(who claimant, names []string) []federation.Key {
	id := who.id()
	affected := x.othersLocked(who, x.byRecord[id])
	for _, n := range x.byRecord[id] {
		delete(x.byName[n], id)
		if len(x.byName[n]) == 0 {
			delete(x.byName, n)
		}
	}
	delete(x.byRecord, id)
	if len(names) == 0 {
		return affected
	}
	x.byRecord[id] = names
	for _, n := range names {
		if x.byName[n] == nil {
			x.byName[n] = map[string]claimant{}
		}
		x.byName[n][id] = who
	}
	return append(affected, x.othersLocked(who, names)...)
}

func (x *claimIndex) othersLocked(who claimant, names []string) []federation.Key {
	var out []federation.Key
	for _, n := range names {
		for _, o := range x.byName[n] {
			if o.id() != who.id() {
				out = append(out, federation.Key{Namespace: o.namespace, Name: o.name})
			}
		}
	}
	return out
}

// fill indexes every record r lists, once.
func (x *claimIndex) fill(ctx context.Context, r federation.Reader, namespace string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ready {
		return nil
	}
	for _, k := range []struct {
		kind string
		gvr  schema.GroupVersionResource
	}{{kindService, ServiceDNSRecordGVR}, {kindIngress, IngressDNSRecordGVR}} {
		list, err := r.List(ctx, k.gvr, namespace, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("dnsrecord: list %ss: %w", k.kind, err)
		}
		for i := range list.Items {
			x.setLocked(claimsOf(k.kind, &list.Items[i]))
		}
	}
	x.ready = true
	return nil
}

// owners returns, for each of names, the claimant in another namespace than who's that keeps
// it before who, when there is one.
func (x *claimIndex) owners(who claimant, names []string) map[string]claimant {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string]claimant{}
	for _, n := range names {
		for _, o := range x.byName[n] {
			if o.namespace == who.namespace || !o.before(who) {
				continue
			}
			if best, ok := out[n]; !ok || o.before(best) {
				out[n] = o
			}
		}
	}
	return out
}

// recordKeys is the Keys of Run's record sources: it indexes the changed record and returns
// its key with the keys of the records that claim the same names (before or after the
// change), so that a name freed or taken is decided again at once.
func (x *claimIndex) recordKeys(kind string) func(*unstructured.Unstructured) []federation.Key {
	return func(u *unstructured.Unstructured) []federation.Key {
		own := federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
		x.mu.Lock()
		defer x.mu.Unlock()
		if affected, ok := x.gone[u.GetUID()]; ok { // the deletion Deleted indexed just before
			delete(x.gone, u.GetUID())
			return append(affected, own)
		}
		return append(x.setLocked(claimsOf(kind, u)), own)
	}
}

// recordDeleted is the Deleted of Run's record sources.
func (x *claimIndex) recordDeleted(kind string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		who, _ := claimsOf(kind, u)
		x.mu.Lock()
		defer x.mu.Unlock()
		x.gone[u.GetUID()] = x.setLocked(who, nil)
	}
}

// setIndex makes Run's index the one passes use; nil makes them list the records.
func (c *Controller) setIndex(x *claimIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.index = x
}

// claims returns the index a pass decides conflicts with: Run's, filled on first use from
// its caches, or one built from r for this pass.
func (c *Controller) claims(ctx context.Context, r federation.Reader) (*claimIndex, error) {
	c.mu.Lock()
	x := c.index
	c.mu.Unlock()
	if x == nil {
		x = newClaimIndex()
	}
	if err := x.fill(ctx, r, c.opts.Namespace); err != nil {
		return nil, err
	}
	return x, nil
}

// withoutConflicts takes out of p the names that an older record of another namespace
// claims, with the CNAMEs that lead to them, and says so in p's condition.
func (c *Controller) withoutConflicts(ctx context.Context, r federation.Reader, who claimant, p *pass) error {
	if !p.write || len(p.eps) == 0 {
		return nil
	}
	x, err := c.claims(ctx, r)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(p.eps))
	for _, e := range p.eps {
		names = append(names, e.DNSName)
	}
	owners := x.owners(who, names)
	if len(owners) == 0 {
		return nil
	}
	dropped := map[string]bool{}
	for n := range owners {
		dropped[n] = true
	}
	for changed := true; changed; { // a CNAME to a dropped name would send clients to its owner
		changed = false
		for _, e := range p.eps {
			if e.RecordType == RecordTypeCNAME && !dropped[e.DNSName] && slices.ContainsFunc(e.Targets, func(t string) bool { return dropped[t] }) {
				dropped[e.DNSName], changed = true, true
			}
		}
	}
	p.eps = slices.DeleteFunc(p.eps, func(e Endpoint) bool { return dropped[e.DNSName] })

	byOwner := map[claimant][]string{}
	for _, n := range slices.Sorted(maps.Keys(owners)) {
		byOwner[owners[n]] = append(byOwner[owners[n]], n)
	}
	var parts []string
	for o, ns := range byOwner {
		parts = append(parts, fmt.Sprintf("%s: published by %s, which is older", strings.Join(ns, ", "), o))
	}
	slices.Sort(parts)
	p.refuse(ReasonNameConflict, strings.Join(parts, "; ")+", so not published here")
	return nil
}
