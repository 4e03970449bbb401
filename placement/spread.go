package placement

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
)

// spread applies rules 7 to 9 to the ranked eligible clusters: it drops the clusters without a
// value for a topology key, chooses the clusters that meet every constraint's minGroups and
// maxGroups within maxClusters (see choose), and fills the rest of maxClusters in rank order.
// Clusters it leaves out get a Diagnosis in d. For the constraint that sets maxSkew, it sets
// d.ReplicaSpread and returns the selected clusters' groups (nil without one).
func spread(p *federation.Placement, eligible []ranked, d *Decision) ([]ranked, []string, error) {
	drop := func(r *ranked, rule Rule, detail string) {
		d.Excluded = append(d.Excluded, Diagnosis{Cluster: r.Name, Rule: rule, Detail: detail})
	}
	// Rule 7: a cluster needs a value for every topology key. domains[i][j] is eligible
	// cluster j's group for constraint i, kept aligned as clusters drop out.
	domains := make([][]string, len(p.SpreadConstraints))
	for i, sc := range p.SpreadConstraints {
		kept := eligible[:0]
		doms := make([]string, 0, len(eligible))
		for _, r := range eligible {
			dom := Domain(r.c, sc.TopologyKey)
			if dom == "" {
				drop(&r, Spread, fmt.Sprintf("no value for topology key %q (spreadConstraints[%d])", sc.TopologyKey, i))
				for k := range i { // forget this cluster's groups for the earlier constraints
					domains[k] = removeAt(domains[k], len(kept))
				}
				continue
			}
			kept = append(kept, r)
			doms = append(doms, dom)
		}
		eligible, domains[i] = kept, doms
	}

	limit := len(eligible)
	if p.MaxClusters != nil {
		limit = min(limit, int(*p.MaxClusters))
	}
	g := newGroups(p, domains, len(eligible))
	st := g.state()
	var selected []ranked
	if len(g.cons) == 0 {
		// No minGroups or maxGroups: the best-ranked clusters, up to maxClusters.
		for j := limit; j < len(eligible); j++ {
			drop(&eligible[j], MaxClusters, fmt.Sprintf("ranked %d of %d eligible clusters, maxClusters is %d", j+1, len(eligible), limit))
		}
		selected = eligible[:limit]
	} else {
		selected = fill(p, g, st, eligible, domains, limit, drop)
	}
	skew := -1
	var groups []string
	for i := range p.SpreadConstraints {
		if p.SpreadConstraints[i].MaxSkew > 0 {
			skew = i // federation validation allows one
			break
		}
	}
	if skew >= 0 {
		sc := &p.SpreadConstraints[skew]
		d.ReplicaSpread = &ReplicaSpread{Constraint: skew, TopologyKey: sc.TopologyKey, MinGroups: sc.MinGroups, MaxSkew: sc.MaxSkew}
		groups = make([]string, len(selected))
		for j := range selected {
			groups[j] = Domain(selected[j].c, sc.TopologyKey)
		}
	}

	// Rule 9: minGroups.
	for k, i := range g.cons {
		sc := &p.SpreadConstraints[i]
		if st.covered[k] < int(sc.MinGroups) {
			err := fmt.Errorf("%w: spreadConstraints[%d]: the selected clusters cover %d %s groups, minGroups is %d",
				ErrUnsatisfiable, i, st.covered[k], sc.TopologyKey, sc.MinGroups)
			if g.cut {
				err = fmt.Errorf("%w (no selection found within %d search steps, the bound of Evaluate's search)", err, searchBudget)
			}
			return selected, groups, err
		}
	}
	return selected, groups, nil
}

// fill is rule 8 with constraints: the clusters choose picks, then the best-ranked of the
// others while they keep every constraint within its maxGroups, up to limit. It records the
// selection in st and returns it in rank order.
func fill(p *federation.Placement, g *groups, st *selection, eligible []ranked, domains [][]string, limit int, drop func(*ranked, Rule, string)) []ranked {
	picks, cut := g.choose(limit)
	g.cut = cut
	chosen := make([]bool, len(eligible))
	for _, j := range picks {
		st.add(j)
		chosen[j] = true
	}
	n := len(picks)
	for j := range eligible {
		if chosen[j] {
			continue
		}
		if k := st.capped(j); k >= 0 {
			i := g.cons[k]
			sc := &p.SpreadConstraints[i]
			drop(&eligible[j], Spread, fmt.Sprintf("%s %q is beyond maxGroups %d (spreadConstraints[%d])", sc.TopologyKey, domains[i][j], sc.MaxGroups, i))
			continue
		}
		if n == limit {
			drop(&eligible[j], MaxClusters, fmt.Sprintf("ranked %d of %d eligible clusters, maxClusters is %d", j+1, len(eligible), limit))
			continue
		}
		st.add(j)
		chosen[j] = true
		n++
	}
	kept := make([]ranked, 0, n)
	for j := range eligible {
		if chosen[j] {
			kept = append(kept, eligible[j])
		}
	}
	return kept
}

// removeAt returns s without its element j.
func removeAt(s []string, j int) []string {
	return append(s[:j], s[j+1:]...)
}
