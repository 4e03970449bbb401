package placement_test

import (
	"errors"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// decode builds a placement and a fleet from fuzz bytes.
func decode(data []byte) (federation.Placement, []federation.Cluster) {
	i := 0
	next := func() byte {
		if i >= len(data) {
			return 0
		}
		i++
		return data[i-1]
	}
	names := []string{"a", "b", "c", "d", "e", "f", "a"} // the last duplicates
	regions := []string{"", "r1", "r2", "r3"}
	var fleet []federation.Cluster
	for n := int(next() % 8); len(fleet) < n; {
		f := next()
		c := cluster(names[len(fleet)], labels("env", []string{"prod", "dev"}[f&1]), region(regions[f>>1&3], regions[f>>3&3]))
		if f&0x20 != 0 {
			c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: "t", Effect: []corev1.TaintEffect{
				corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}[next()%3]})
		}
		if f&0x40 != 0 {
			c.Status.Conditions[0].Status = metav1.ConditionFalse
		}
		fleet = append(fleet, c)
	}
	f := next()
	var p federation.Placement
	switch f & 3 {
	case 1:
		p.ClusterSelector = &metav1.LabelSelector{}
	case 2:
		p.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	case 3:
		p.Clusters = refs(names[next()%7], names[next()%6])
	}
	if f&4 != 0 {
		p.ExcludeClusters = []string{names[next()%6]}
	}
	if f&8 != 0 {
		p.ClusterAffinity = &federation.ClusterAffinity{
			Required:  &federation.AffinityTerm{Regions: []string{regions[next()%4], regions[next()%4]}},
			Preferred: []federation.WeightedAffinityTerm{{Weight: int32(next()%100) + 1, Term: federation.AffinityTerm{Zones: []string{regions[next()%4]}}}},
		}
	}
	if f&16 != 0 {
		p.Tolerations = []corev1.Toleration{{Key: []string{"t", federation.TaintClusterNotReady, ""}[next()%3], Operator: corev1.TolerationOpExists}}
	}
	if f&32 != 0 {
		p.MaxClusters = int32p(int32(next() % 5))
	}
	if f&64 != 0 {
		p.SpreadConstraints = []federation.SpreadConstraint{{TopologyKey: []string{"region", "zone", "env"}[next()%3],
			MinGroups: int32(next() % 4), MaxGroups: int32(next() % 4)}}
	}
	return p, fleet
}

// FuzzEvaluate: Evaluate never panics, fails only with its sentinels, accounts for every
// cluster exactly once, keeps rank order and maxClusters, and ignores input order.
//
//	go test ./placement -run '^$' -fuzz FuzzEvaluate -fuzztime 60s
func FuzzEvaluate(f *testing.F) {
	f.Add([]byte{4, 1, 2, 3, 4, 1})
	f.Add([]byte{6, 0x21, 1, 0x42, 3, 5, 7, 9, 0x7f, 2, 1, 3, 2, 2, 1, 1, 2, 2})
	f.Add([]byte{3, 0, 1, 2, 0x63, 0, 1, 3, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, fleet := decode(data)
		d, err := placement.Evaluate(p, fleet)
		if err != nil {
			if !errors.Is(err, placement.ErrInvalidPlacement) && !errors.Is(err, placement.ErrDuplicateCluster) && !errors.Is(err, placement.ErrUnsatisfiable) {
				t.Fatalf("Evaluate() error %v wraps no sentinel", err)
			}
			if !errors.Is(err, placement.ErrUnsatisfiable) {
				return
			}
		}
		seen := map[string]int{}
		for _, c := range d.Selected {
			seen[c.Name]++
		}
		for _, x := range d.Excluded {
			seen[x.Cluster]++
			if x.Rule == 0 || x.Detail == "" {
				t.Fatalf("empty diagnosis %+v", x)
			}
		}
		for _, c := range fleet {
			if seen[c.Name] != 1 {
				t.Fatalf("cluster %s accounted %d times in %+v", c.Name, seen[c.Name], d)
			}
		}
		if !sort.SliceIsSorted(d.Selected, func(i, j int) bool {
			a, b := d.Selected[i], d.Selected[j]
			if a.Avoid != b.Avoid {
				return a.Avoid < b.Avoid
			}
			if a.Score != b.Score {
				return a.Score > b.Score
			}
			return a.Name < b.Name
		}) {
			t.Fatalf("selection not in rank order: %+v", d.Selected)
		}
		if p.MaxClusters != nil && len(d.Selected) > int(*p.MaxClusters) {
			t.Fatalf("%d selected, maxClusters %d", len(d.Selected), *p.MaxClusters)
		}
		reversed := make([]federation.Cluster, len(fleet))
		for i := range fleet {
			reversed[len(fleet)-1-i] = fleet[i]
		}
		again, err2 := placement.Evaluate(p, reversed)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("input order changed the error: %v vs %v", err, err2)
		}
		if diff := cmp.Diff(d.Selected, again.Selected); diff != "" {
			t.Fatalf("input order changed the selection (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(d.Excluded, again.Excluded); diff != "" {
			t.Fatalf("input order changed the diagnoses (-want +got):\n%s", diff)
		}
	})
}
