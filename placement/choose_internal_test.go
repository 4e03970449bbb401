package placement

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
)

// TestChooseBudget: past its bound the search gives up and says so, with the greedy best
// effort.
func TestChooseBudget(t *testing.T) {
	p := &federation.Placement{SpreadConstraints: []federation.SpreadConstraint{
		{TopologyKey: "region", MinGroups: 2}, {TopologyKey: "provider", MinGroups: 2},
	}}
	// c1 us/aws, c2 eu/aws, c3 us/gcp, c4 eu/gcp: greedy takes c1 c2, the search c1 c4.
	domains := [][]string{{"us", "eu", "us", "eu"}, {"aws", "aws", "gcp", "gcp"}}

	g := newGroups(p, domains, 4)
	picks, cut := g.choose(2)
	require.False(t, cut)
	require.Equal(t, []int{0, 3}, picks)

	g = newGroups(p, domains, 4)
	g.budget = 2
	picks, cut = g.choose(2)
	require.True(t, cut, "two steps are not enough")
	require.Equal(t, []int{0, 1}, picks, "the greedy best effort")

	// Infeasible on its face (three regions wanted, two exist): no search at all.
	p.SpreadConstraints[0].MinGroups = 3
	g = newGroups(p, domains, 4)
	g.budget = 0
	_, cut = g.choose(4)
	require.False(t, cut)
}
