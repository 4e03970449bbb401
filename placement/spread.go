package placement

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
)

// spread applies rules 7 to 9 to the ranked eligible clusters: spread constraints, then
// maxClusters, then the minGroups check. Clusters it leaves out get a Diagnosis in d.
func spread(p *federation.Placement, eligible []ranked, d *Decision) ([]ranked, error) {
	drop := func(r *ranked, rule Rule, detail string) {
		d.Excluded = append(d.Excluded, Diagnosis{Cluster: r.Name, Rule: rule, Detail: detail})
	}
	// domains[i][j] is eligible cluster j's group for constraint i, kept aligned as
	// clusters drop out.
	domains := make([][]string, len(p.SpreadConstraints))
	for i, sc := range p.SpreadConstraints {
		kept := eligible[:0]
		var doms []string
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
		if sc.MaxGroups <= 0 {
			continue
		}
		// Keep the groups of the best-ranked clusters: eligible is in rank order, so a group's
		// rank is that of its first cluster.
		keep := map[string]bool{}
		for _, dom := range doms {
			if len(keep) == int(sc.MaxGroups) {
				break
			}
			keep[dom] = true
		}
		kept = eligible[:0]
		var keptDoms [][]string
		for k := range domains[:i+1] {
			keptDoms = append(keptDoms, domains[k][:0:0])
		}
		for j, r := range eligible {
			if !keep[doms[j]] {
				drop(&r, Spread, fmt.Sprintf("%s %q is beyond maxGroups %d (spreadConstraints[%d])", sc.TopologyKey, doms[j], sc.MaxGroups, i))
				continue
			}
			kept = append(kept, r)
			for k := range keptDoms {
				keptDoms[k] = append(keptDoms[k], domains[k][j])
			}
		}
		eligible = kept
		copy(domains, keptDoms)
	}

	if p.MaxClusters != nil && len(eligible) > int(*p.MaxClusters) {
		eligible, domains = pickMax(p, eligible, domains, int(*p.MaxClusters), drop)
	}

	for i, sc := range p.SpreadConstraints {
		groups := map[string]bool{}
		for _, dom := range domains[i] {
			groups[dom] = true
		}
		if len(groups) < int(sc.MinGroups) {
			return eligible, fmt.Errorf("%w: spreadConstraints[%d]: the selected clusters cover %d %s groups, minGroups is %d",
				ErrUnsatisfiable, i, len(groups), sc.TopologyKey, sc.MinGroups)
		}
	}
	return eligible, nil
}

// pickMax keeps max clusters: first, in rank order, each cluster that brings a new group to a
// constraint whose minGroups is not covered yet; then the best-ranked of the rest. The kept
// clusters stay in rank order.
func pickMax(p *federation.Placement, eligible []ranked, domains [][]string, limit int, drop func(*ranked, Rule, string)) ([]ranked, [][]string) {
	picked := make([]bool, len(eligible))
	n := 0
	covered := make([]map[string]bool, len(p.SpreadConstraints))
	for i := range covered {
		covered[i] = map[string]bool{}
	}
	for j := range eligible {
		if n == limit {
			break
		}
		useful := false
		for i, sc := range p.SpreadConstraints {
			if len(covered[i]) < int(sc.MinGroups) && !covered[i][domains[i][j]] {
				useful = true
			}
		}
		if !useful {
			continue
		}
		picked[j] = true
		n++
		for i := range p.SpreadConstraints {
			covered[i][domains[i][j]] = true
		}
	}
	for j := range eligible {
		if n == limit {
			break
		}
		if !picked[j] {
			picked[j] = true
			n++
		}
	}
	var kept []ranked
	keptDoms := make([][]string, len(domains))
	for j := range eligible {
		if !picked[j] {
			drop(&eligible[j], MaxClusters, fmt.Sprintf("ranked %d of %d eligible clusters, maxClusters is %d", j+1, len(eligible), limit))
			continue
		}
		kept = append(kept, eligible[j])
		for i := range domains {
			keptDoms[i] = append(keptDoms[i], domains[i][j])
		}
	}
	return kept, keptDoms
}

// removeAt returns s without its element j.
func removeAt(s []string, j int) []string {
	return append(s[:j], s[j+1:]...)
}
