package placement

import (
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/labelselector"
)

// Select returns the names of the clusters p places an object on, in rank order (see
// [Decision.Selected]). It is [Evaluate] without the diagnoses; on error it returns nil.
func Select(p federation.Placement, clusters []federation.Cluster) ([]string, error) {
	d, err := Evaluate(p, clusters)
	if err != nil {
		return nil, err
	}
	return d.Names(), nil
}

// Input is what [Place] decides from: the placement, the clusters, where the object runs now
// and the time.
type Input struct {
	// Placement is the object's spec.placement.
	Placement federation.Placement
	// Clusters are the federation's Cluster objects, with their taints and Ready condition.
	Clusters []federation.Cluster
	// Running names the clusters the object runs in now (its previous schedule, its
	// status.clusters). An untolerated NoSchedule taint keeps them; it refuses only new
	// placements.
	Running []string
	// Now is the time of the decision, for tolerationSeconds. Zero: tolerationSeconds is not
	// counted, and a toleration that has it holds.
	Now time.Time
	// Disruption is the fleet's state ([FleetDisruption] of the same Clusters). While the
	// fleet is disrupted, the not-ready taint a lost cluster implies (when the cluster
	// monitor has set none) is NoSchedule, not NoExecute: the control plane's own outage
	// takes no replicas away. The zero value: not disrupted.
	Disruption Disruption
}

// Evaluate decides where p places an object among clusters, and why every other cluster is
// left out. It is [Place] without Running and Now: it knows nothing of what runs where, so a
// NoSchedule taint leaves a cluster out like NoExecute, and tolerationSeconds is not counted.
func Evaluate(p federation.Placement, clusters []federation.Cluster) (Decision, error) {
	return Place(Input{Placement: p, Clusters: clusters})
}

// Place decides where in.Placement places an object among in.Clusters, and why every other
// cluster is left out. It is pure: no I/O, no clock; the same input gives the same Decision.
// The scheduler, sync and preview all call it.
//
// The rules, in the order a cluster meets them (the first it fails is its Diagnosis):
//
//  1. Membership, as in KubeFed: when spec.placement.clusters is present (even empty) only
//     the clusters it names are candidates and the selector is ignored; names that match no
//     Cluster go to Decision.Unknown. When it is absent the cluster selector decides: nil
//     selects nothing, {} selects every cluster.
//  2. excludeClusters.
//  3. clusterAffinity.required: the region must be one of its regions, and at least one zone
//     one of its zones (each when set).
//  4. Readiness: a cluster whose Ready condition is not True carries the taint
//     federation.k8s.io/not-ready:NoExecute even when the cluster monitor has not set it yet,
//     so a toleration for it (any effect, or NoExecute) keeps the cluster. While the fleet is
//     disrupted (in.Disruption) that implied taint is NoSchedule for its lost clusters.
//  5. Taints: a NoExecute taint without a matching toleration leaves the cluster out. A
//     NoSchedule taint without one leaves it out unless the object runs there (in.Running):
//     it refuses new placements only, and [Decision.Kept] says why the cluster stayed. A
//     toleration with tolerationSeconds tolerates a NoExecute taint until the taint's
//     timeAdded plus those seconds, as for Pods (the first matching toleration decides;
//     the implied not-ready taint counts from the Ready condition's last transition): the
//     cluster is in Kept until then, [Decision.Recheck] is the earliest such end, and after
//     it the cluster is left out with a detail naming the end. PreferNoSchedule taints only
//     rank the cluster lower.
//  6. Ranking: fewer untolerated PreferNoSchedule taints first, then a higher sum of matching
//     clusterAffinity.preferred weights, then name ascending. The output is in this order.
//  7. Spread constraints: a cluster with no value for a constraint's topology key is left
//     out.
//  8. Selection: first the clusters that meet every constraint's minGroups together, within
//     maxClusters and without exceeding any maxGroups: the greedy choice (the best-ranked
//     cluster of each missing group) when it works, else the best-ranked selection a bounded
//     search finds (see choose.go for the search and its bound). Then the best-ranked of
//     the rest, in rank order, as long as they stay within every maxGroups (so with
//     maxGroups alone, the groups of the best-ranked clusters are kept), up to maxClusters.
//  9. minGroups: when no selection covers as many groups as every constraint asks for, the
//     result wraps [ErrUnsatisfiable] and the Decision is the greedy best effort.
//
// The one constraint that sets maxSkew (federation validation allows at most one) spreads
// replicas too: Decision.ReplicaSpread names it, and each selected Candidate carries its
// group in Domain, for the scheduler to divide replicas over.
//
// An invalid placement returns an error wrapping [ErrInvalidPlacement]; two Clusters with one
// name return [ErrDuplicateCluster].
func Place(in Input) (Decision, error) {
	p, clusters := in.Placement, in.Clusters
	if errs := federation.ValidatePlacement(p, field.NewPath("spec", "placement")); len(errs) > 0 {
		return Decision{}, fmt.Errorf("%w: %s", ErrInvalidPlacement, errs.ToAggregate().Error())
	}
	var selector labels.Selector
	if p.ClusterSelector != nil {
		// The meaning every fedkit package gives a selector (the API machinery's); an
		// invalid one was reported by ValidatePlacement above.
		s, err := labelselector.Parse(p.ClusterSelector, field.NewPath("spec", "placement", "clusterSelector"))
		if err != nil {
			return Decision{}, fmt.Errorf("%w: %v", ErrInvalidPlacement, err)
		}
		selector = s
	}

	byName := make(map[string]*federation.Cluster, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		if _, dup := byName[c.Name]; dup {
			return Decision{}, fmt.Errorf("%w: %q", ErrDuplicateCluster, c.Name)
		}
		byName[c.Name] = c
	}
	var d Decision
	var listed map[string]bool
	if p.Clusters != nil {
		listed = make(map[string]bool, len(p.Clusters))
		for _, ref := range p.Clusters {
			listed[ref.Name] = true
			if byName[ref.Name] == nil {
				d.Unknown = append(d.Unknown, ref.Name)
			}
		}
	}
	f := filterer{p: &p, listed: listed, sel: selector, excluded: nameSet(p.ExcludeClusters), running: nameSet(in.Running), now: in.Now, disruption: in.Disruption}
	var eligible []ranked
	kept := map[string]keep{}
	for i := range clusters {
		c := &clusters[i]
		rule, detail, k := f.filter(c)
		if rule != 0 {
			d.Excluded = append(d.Excluded, Diagnosis{Cluster: c.Name, Rule: rule, Detail: detail})
			continue
		}
		if k.why != "" {
			kept[c.Name] = k
		}
		eligible = append(eligible, score(&p, c))
	}
	sort.Slice(eligible, func(i, j int) bool { return eligible[i].before(&eligible[j]) })

	eligible, domains, err := spread(&p, eligible, &d)
	d.Selected = make([]Candidate, len(eligible))
	for i := range eligible {
		r := &eligible[i]
		d.Selected[i] = Candidate{Name: r.Name, Score: r.Score, Avoid: r.Avoid}
		if domains != nil {
			d.Selected[i].Domain = domains[i]
		}
	}
	for _, c := range d.Selected {
		d.keep(c.Name, kept[c.Name])
	}
	sort.Slice(d.Excluded, func(i, j int) bool { return d.Excluded[i].Cluster < d.Excluded[j].Cluster })
	return d, err
}

// ranked is an eligible cluster on its way through spread and maxClusters: a Candidate
// without its Domain (kept small, as sorting moves it around) and the Cluster.
type ranked struct {
	Name  string
	Score int64
	Avoid int
	c     *federation.Cluster
}

// before is the rank order.
func (r *ranked) before(o *ranked) bool {
	if r.Avoid != o.Avoid {
		return r.Avoid < o.Avoid
	}
	if r.Score != o.Score {
		return r.Score > o.Score
	}
	return r.Name < o.Name
}

// filterer holds what rules 1 to 5 need besides the cluster.
type filterer struct {
	p        *federation.Placement
	listed   map[string]bool
	sel      labels.Selector
	excluded map[string]bool
	running  map[string]bool
	now      time.Time
	// disruption softens the implied not-ready taint of its lost clusters (Input.Disruption).
	disruption Disruption
}

// keep is why a cluster stayed although a taint is not tolerated for good: the rule it would
// have failed, the detail, and when a tolerationSeconds ends (zero: never).
type keep struct {
	rule  Rule
	why   string
	until time.Time
}

// filter applies rules 1 to 5 and returns the first that fails, with its detail, or 0 and
// why the cluster was kept despite a taint.
func (f *filterer) filter(c *federation.Cluster) (Rule, string, keep) {
	p := f.p
	switch {
	case f.listed != nil && !f.listed[c.Name]:
		return NotListed, "not in spec.placement.clusters", keep{}
	case f.listed == nil && f.sel == nil:
		return ClusterSelector, "neither spec.placement.clusters nor spec.placement.clusterSelector is set, so nothing is selected", keep{}
	case f.listed == nil && !f.sel.Matches(labels.Set(c.Labels)):
		return ClusterSelector, fmt.Sprintf("labels do not match clusterSelector %q", f.sel.String()), keep{}
	case f.excluded[c.Name]:
		return ExcludeClusters, "listed in spec.placement.excludeClusters", keep{}
	}
	if a := p.ClusterAffinity; a != nil && a.Required != nil {
		if ok, detail := matchTerm(a.Required, c); !ok {
			return RequiredAffinity, detail, keep{}
		}
	}
	var k keep
	// note records a kept taint, the earliest end first.
	note := func(rule Rule, why string, until time.Time) {
		if k.why == "" || (!until.IsZero() && (k.until.IsZero() || until.Before(k.until))) {
			k = keep{rule: rule, why: why, until: until}
		}
	}
	if t, why, ok := notReadyTaint(c); ok {
		if f.disruption.Includes(c.Name) {
			// The control plane's own outage: no eviction, and still no new placements.
			t.Effect = corev1.TaintEffectNoSchedule
			why += "; the fleet is disrupted (" + f.disruption.Message + ")"
		}
		switch held, until, detail := f.tolerates(&t); {
		case held && t.Effect == corev1.TaintEffectNoSchedule:
		case t.Effect == corev1.TaintEffectNoSchedule && f.running[c.Name]:
			note(NotReady, fmt.Sprintf("%s; implied taint %s not tolerated, but the object runs there and NoSchedule refuses only new placements", why, taintString(&t)), time.Time{})
		case !held:
			return NotReady, fmt.Sprintf("%s; implied taint %s not tolerated%s", why, taintString(&t), detail), keep{}
		case !until.IsZero():
			note(NotReady, fmt.Sprintf("%s; implied taint %s%s", why, taintString(&t), detail), until)
		}
	}
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		rule := Taint
		if t.Key == federation.TaintClusterNotReady || t.Key == federation.TaintClusterUnreachable {
			rule = NotReady
		}
		held, until, detail := f.tolerates(t)
		switch {
		case held && !until.IsZero():
			note(rule, "taint "+taintString(t)+detail, until)
		case held:
		case t.Effect == corev1.TaintEffectNoSchedule && f.running[c.Name]:
			note(rule, fmt.Sprintf("taint %s not tolerated, but the object runs there and NoSchedule refuses only new placements", taintString(t)), time.Time{})
		case detail != "":
			return rule, "taint " + taintString(t) + detail, keep{}
		default:
			return rule, fmt.Sprintf("taint %s not tolerated", taintString(t)), keep{}
		}
	}
	return 0, "", k
}

// tolerates reports whether the placement's tolerations tolerate taint at f.now, until when
// (zero: for good), and, for a tolerationSeconds, a detail naming its end.
func (f *filterer) tolerates(taint *corev1.Taint) (bool, time.Time, string) {
	t := matching(f.p.Tolerations, taint)
	if t == nil {
		return false, time.Time{}, ""
	}
	if t.TolerationSeconds == nil || taint.Effect != corev1.TaintEffectNoExecute || f.now.IsZero() {
		return true, time.Time{}, ""
	}
	secs := max(*t.TolerationSeconds, 0)
	if taint.TimeAdded == nil {
		return true, time.Time{}, fmt.Sprintf(" tolerated for %ds, counted from its timeAdded, which is not set", secs)
	}
	until := taint.TimeAdded.Add(time.Duration(secs) * time.Second)
	detail := fmt.Sprintf(" tolerated for %ds, until %s", secs, until.UTC().Format(time.RFC3339))
	if !f.now.Before(until) {
		return false, time.Time{}, detail
	}
	return true, until, detail
}

// matchTerm reports whether c matches an affinity term, and if not, why.
func matchTerm(t *federation.AffinityTerm, c *federation.Cluster) (bool, string) {
	if len(t.Regions) > 0 {
		if r := c.Region(); !slices.Contains(t.Regions, r) {
			return false, fmt.Sprintf("region %q not in %v", r, t.Regions)
		}
	}
	if len(t.Zones) > 0 {
		zs := c.Zones()
		if !slices.ContainsFunc(zs, func(z string) bool { return slices.Contains(t.Zones, z) }) {
			return false, fmt.Sprintf("zones %v not in %v", zs, t.Zones)
		}
	}
	return true, ""
}

// score computes a cluster's rank inputs (rule 6).
func score(p *federation.Placement, c *federation.Cluster) ranked {
	r := ranked{Name: c.Name, c: c}
	if a := p.ClusterAffinity; a != nil {
		for i := range a.Preferred {
			if ok, _ := matchTerm(&a.Preferred[i].Term, c); ok {
				r.Score += int64(a.Preferred[i].Weight)
			}
		}
	}
	for i := range c.Spec.Taints {
		if t := &c.Spec.Taints[i]; t.Effect == corev1.TaintEffectPreferNoSchedule && !tolerated(p.Tolerations, t) {
			r.Avoid++
		}
	}
	return r
}
