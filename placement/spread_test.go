package placement_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/placement"
)

// grid is the fleet of the hardening issue: two regions by two providers, ranked c1..c4.
func grid() []federation.Cluster {
	return []federation.Cluster{
		cluster("c1", region("us"), provider("aws")),
		cluster("c2", region("eu"), provider("aws")),
		cluster("c3", region("us"), provider("gcp")),
		cluster("c4", region("eu"), provider("gcp")),
	}
}

func TestEvaluateSpreadSearch(t *testing.T) {
	all := &metav1.LabelSelector{}
	tests := []struct {
		name  string
		p     federation.Placement
		fleet []federation.Cluster
		want  []string
		why   map[string]placement.Rule
		err   string
	}{
		{
			name: "two keys: greedy c1 c2 misses gcp, c1 c4 covers both",
			p: federation.Placement{ClusterSelector: all, MaxClusters: int32p(2), SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MinGroups: 2}, {TopologyKey: "provider", MinGroups: 2},
			}},
			fleet: grid(),
			want:  []string{"c1", "c4"},
			why:   map[string]placement.Rule{"c2": placement.MaxClusters, "c3": placement.MaxClusters},
		},
		{
			name: "greedy works: the greedy choice is kept",
			p: federation.Placement{ClusterSelector: all, MaxClusters: int32p(3), SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MinGroups: 2}, {TopologyKey: "provider", MinGroups: 2},
			}},
			fleet: grid(),
			want:  []string{"c1", "c2", "c3"},
		},
		{
			name: "maxGroups of one key leaves room for the other's minGroups",
			p: federation.Placement{ClusterSelector: all, SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MaxGroups: 1}, {TopologyKey: "provider", MinGroups: 2},
			}},
			fleet: []federation.Cluster{
				cluster("a", region("us"), provider("aws")),
				cluster("b", region("us"), provider("aws")),
				cluster("c", region("eu"), provider("aws")),
				cluster("d", region("eu"), provider("gcp")),
			},
			want: []string{"c", "d"},
			why:  map[string]placement.Rule{"a": placement.Spread, "b": placement.Spread},
		},
		{
			name: "three keys within maxClusters 2",
			p: federation.Placement{ClusterSelector: all, MaxClusters: int32p(2), SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MinGroups: 2}, {TopologyKey: "provider", MinGroups: 2}, {TopologyKey: "tier", MinGroups: 2},
			}},
			fleet: []federation.Cluster{
				cluster("a", region("us"), provider("aws"), labels("tier", "gold")),
				cluster("b", region("eu"), provider("gcp"), labels("tier", "gold")),
				cluster("c", region("eu"), provider("aws"), labels("tier", "silver")),
				cluster("d", region("us"), provider("gcp"), labels("tier", "silver")),
				cluster("e", region("eu"), provider("gcp"), labels("tier", "silver")),
			},
			want: []string{"a", "e"},
		},
		{
			name: "no selection exists: unsatisfiable, with the greedy best effort",
			p: federation.Placement{ClusterSelector: all, MaxClusters: int32p(2), SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MinGroups: 2}, {TopologyKey: "provider", MinGroups: 2}, {TopologyKey: "tier", MinGroups: 2},
			}},
			fleet: []federation.Cluster{ // every pair shares a group
				cluster("c1", region("us"), provider("aws"), labels("tier", "gold")),
				cluster("c2", region("eu"), provider("gcp"), labels("tier", "gold")),
				cluster("c3", region("eu"), provider("aws"), labels("tier", "silver")),
			},
			want: []string{"c1", "c2"},
			err:  "spreadConstraints[2]: the selected clusters cover 1 tier groups, minGroups is 2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := placement.Evaluate(tc.p, tc.fleet)
			if tc.err != "" {
				require.ErrorIs(t, err, placement.ErrUnsatisfiable)
				require.ErrorContains(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
			if diff := cmp.Diff(tc.want, d.Names()); diff != "" {
				t.Errorf("Evaluate().Names() (-want +got):\n%s", diff)
			}
			for name, rule := range tc.why {
				diag, ok := d.Why(name)
				require.True(t, ok, "Why(%q) found nothing", name)
				require.Equal(t, rule, diag.Rule, "Why(%q) = %v", name, diag)
			}
			require.Equal(t, len(tc.fleet), len(d.Selected)+len(d.Excluded), "every cluster is selected or diagnosed")
		})
	}
}

func TestEvaluateReplicaSpread(t *testing.T) {
	p := federation.Placement{ClusterSelector: &metav1.LabelSelector{}, SpreadConstraints: []federation.SpreadConstraint{
		{TopologyKey: "provider", MinGroups: 2},
		{TopologyKey: "region", MinGroups: 2, MaxSkew: 1},
	}}
	d, err := placement.Evaluate(p, grid())
	require.NoError(t, err)
	require.Equal(t, &placement.ReplicaSpread{Constraint: 1, TopologyKey: "region", MinGroups: 2, MaxSkew: 1}, d.ReplicaSpread)
	got := map[string]string{}
	for _, c := range d.Selected {
		got[c.Name] = c.Domain
	}
	require.Equal(t, map[string]string{"c1": "us", "c2": "eu", "c3": "us", "c4": "eu"}, got)

	p.SpreadConstraints[1].MaxSkew = 0
	d, err = placement.Evaluate(p, grid())
	require.NoError(t, err)
	require.Nil(t, d.ReplicaSpread, "no constraint bounds replicas")
	require.Empty(t, d.Selected[0].Domain)
}

// TestEvaluateSpreadFindsASelection compares Evaluate with an exhaustive search on random small
// fleets: it succeeds exactly when some selection of at most maxClusters eligible clusters
// meets every minGroups and maxGroups, and what it selects does.
func TestEvaluateSpreadFindsASelection(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := []string{"region", "provider", "tier"}
	for i := range fedtest.Iterations(3000) {
		n := 1 + r.IntN(9)
		fleet := make([]federation.Cluster, n)
		for j := range fleet {
			fleet[j] = cluster(fmt.Sprintf("c%d", j), region(fmt.Sprintf("r%d", r.IntN(4))), provider(fmt.Sprintf("p%d", r.IntN(3))),
				labels("tier", fmt.Sprintf("t%d", r.IntN(3))))
		}
		p := federation.Placement{ClusterSelector: &metav1.LabelSelector{}}
		if r.IntN(4) > 0 {
			p.MaxClusters = int32p(int32(r.IntN(5)))
		}
		for _, k := range keys[:1+r.IntN(len(keys))] {
			sc := federation.SpreadConstraint{TopologyKey: k, MinGroups: int32(r.IntN(4))}
			if r.IntN(3) == 0 {
				sc.MaxGroups = max(sc.MinGroups, int32(1+r.IntN(3)))
			}
			p.SpreadConstraints = append(p.SpreadConstraints, sc)
		}
		limit := "none"
		if p.MaxClusters != nil {
			limit = fmt.Sprint(*p.MaxClusters)
		}
		name := fmt.Sprintf("case %d: maxClusters %s, %+v", i, limit, p.SpreadConstraints)

		d, err := placement.Evaluate(p, fleet)
		if err != nil && !errors.Is(err, placement.ErrUnsatisfiable) {
			t.Fatalf("%s: %v", name, err)
		}
		exists := exhaustive(p, fleet)
		if exists != (err == nil) {
			t.Fatalf("%s: Evaluate error %v, but a selection exists: %t", name, err, exists)
		}
		if err == nil {
			require.True(t, satisfies(p, fleet, d.Names()), "%s: selection %v does not satisfy the constraints", name, d.Names())
		}
	}
}

// exhaustive reports whether some subset of fleet satisfies p's spread constraints.
func exhaustive(p federation.Placement, fleet []federation.Cluster) bool {
	names := make([]string, len(fleet))
	for i := range fleet {
		names[i] = fleet[i].Name
	}
	for mask := range 1 << len(fleet) {
		var pick []string
		for i := range fleet {
			if mask&(1<<i) != 0 {
				pick = append(pick, names[i])
			}
		}
		if satisfies(p, fleet, pick) {
			return true
		}
	}
	return false
}

// satisfies reports whether the named clusters meet maxClusters, every minGroups and every
// maxGroups.
func satisfies(p federation.Placement, fleet []federation.Cluster, pick []string) bool {
	if p.MaxClusters != nil && len(pick) > int(*p.MaxClusters) {
		return false
	}
	byName := map[string]*federation.Cluster{}
	for i := range fleet {
		byName[fleet[i].Name] = &fleet[i]
	}
	for _, sc := range p.SpreadConstraints {
		groups := map[string]bool{}
		for _, name := range pick {
			groups[placement.Domain(byName[name], sc.TopologyKey)] = true
		}
		if len(groups) < int(sc.MinGroups) || (sc.MaxGroups > 0 && len(groups) > int(sc.MaxGroups)) {
			return false
		}
	}
	return true
}

func TestEvaluateExclude(t *testing.T) {
	d, err := placement.Evaluate(federation.Placement{Clusters: refs("a", "gone", "b")}, []federation.Cluster{cluster("a"), cluster("c")})
	require.NoError(t, err)
	require.Equal(t, []string{"gone", "b"}, d.Unknown)
	d.Exclude(placement.Diagnosis{Cluster: "b", Rule: placement.Preference, Detail: "no preference"})
	require.Equal(t, []string{"gone"}, d.Unknown)
	var got []string
	for _, x := range d.Excluded {
		got = append(got, x.String())
	}
	require.Equal(t, "b: Preference: no preference|c: NotListed: not in spec.placement.clusters", strings.Join(got, "|"))
	why, ok := d.Why("b")
	require.True(t, ok)
	require.Equal(t, placement.Preference, why.Rule)
}
