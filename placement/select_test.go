package placement_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// clusterOpt shapes a test cluster.
type clusterOpt func(*federation.Cluster)

func labels(kv ...string) clusterOpt {
	return func(c *federation.Cluster) {
		c.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
}

func region(r string, zones ...string) clusterOpt {
	return func(c *federation.Cluster) { c.Spec.Region, c.Spec.Zones = r, zones }
}

func provider(p string) clusterOpt { return func(c *federation.Cluster) { c.Spec.Provider = p } }

func taint(key, value string, effect corev1.TaintEffect) clusterOpt {
	return func(c *federation.Cluster) {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func ready(status metav1.ConditionStatus, reason string) clusterOpt {
	return func(c *federation.Cluster) {
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: status, Reason: reason}}
	}
}

func noConditions() clusterOpt { return func(c *federation.Cluster) { c.Status.Conditions = nil } }

// cluster returns a Ready cluster.
func cluster(name string, opts ...clusterOpt) federation.Cluster {
	c := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func refs(names ...string) []federation.ClusterReference {
	out := []federation.ClusterReference{}
	for _, n := range names {
		out = append(out, federation.ClusterReference{Name: n})
	}
	return out
}

func int32p(v int32) *int32 { return &v }

func TestEvaluate(t *testing.T) {
	fleet := []federation.Cluster{
		cluster("us-1", labels("env", "prod"), region("us-east-1", "us-east-1a"), provider("aws")),
		cluster("us-2", labels("env", "prod"), region("us-east-1", "us-east-1b"), provider("aws")),
		cluster("eu-1", labels("env", "prod"), region("eu-west-1", "eu-west-1a"), provider("gcp")),
		cluster("ap-1", labels("env", "dev"), region("ap-south-1", "ap-south-1a"), provider("azure")),
	}
	tests := []struct {
		name    string
		p       federation.Placement
		fleet   []federation.Cluster
		want    []string
		why     map[string]placement.Rule
		unknown []string
		err     error
	}{
		{
			name: "absent clusters and nil selector select nothing",
			p:    federation.Placement{},
			want: []string{},
			why:  map[string]placement.Rule{"us-1": placement.ClusterSelector, "ap-1": placement.ClusterSelector},
		},
		{
			name: "empty selector selects all, ranked by name",
			p:    federation.Placement{ClusterSelector: &metav1.LabelSelector{}},
			want: []string{"ap-1", "eu-1", "us-1", "us-2"},
		},
		{
			name: "selector matches labels",
			p:    federation.Placement{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			want: []string{"eu-1", "us-1", "us-2"},
			why:  map[string]placement.Rule{"ap-1": placement.ClusterSelector},
		},
		{
			name:    "present clusters win over the selector and unknown names are dropped",
			p:       federation.Placement{Clusters: refs("ap-1", "nope"), ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			want:    []string{"ap-1"},
			why:     map[string]placement.Rule{"us-1": placement.NotListed},
			unknown: []string{"nope"},
		},
		{
			name: "present and empty clusters select nothing",
			p:    federation.Placement{Clusters: refs(), ClusterSelector: &metav1.LabelSelector{}},
			want: []string{},
			why:  map[string]placement.Rule{"us-1": placement.NotListed},
		},
		{
			name: "exclude list",
			p:    federation.Placement{ClusterSelector: &metav1.LabelSelector{}, ExcludeClusters: []string{"us-2", "zz"}},
			want: []string{"ap-1", "eu-1", "us-1"},
			why:  map[string]placement.Rule{"us-2": placement.ExcludeClusters},
		},
		{
			name: "required region and zone affinity",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, ClusterAffinity: &federation.ClusterAffinity{
				Required: &federation.AffinityTerm{Regions: []string{"us-east-1", "eu-west-1"}, Zones: []string{"us-east-1b", "eu-west-1a"}},
			}},
			want: []string{"eu-1", "us-2"},
			why:  map[string]placement.Rule{"us-1": placement.RequiredAffinity, "ap-1": placement.RequiredAffinity},
		},
		{
			name: "preferred affinity orders",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, ClusterAffinity: &federation.ClusterAffinity{
				Preferred: []federation.WeightedAffinityTerm{
					{Weight: 10, Term: federation.AffinityTerm{Regions: []string{"us-east-1"}}},
					{Weight: 50, Term: federation.AffinityTerm{Zones: []string{"eu-west-1a"}}},
					{Weight: 5, Term: federation.AffinityTerm{Zones: []string{"us-east-1b"}}},
				},
			}},
			want: []string{"eu-1", "us-2", "us-1", "ap-1"},
		},
		{
			name: "taints: NoSchedule and NoExecute exclude unless tolerated, PreferNoSchedule ranks last",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, Tolerations: []corev1.Toleration{
				{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule},
			}},
			fleet: []federation.Cluster{
				cluster("a", taint("gpu", "true", corev1.TaintEffectNoSchedule)),
				cluster("b", taint("gpu", "false", corev1.TaintEffectNoSchedule)),
				cluster("c", taint("drain", "", corev1.TaintEffectNoExecute)),
				cluster("d", taint("spot", "", corev1.TaintEffectPreferNoSchedule)),
				cluster("e"),
			},
			want: []string{"a", "e", "d"},
			why:  map[string]placement.Rule{"b": placement.Taint, "c": placement.Taint},
		},
		{
			name: "not ready is left out: condition False, Unknown or missing, or the monitor's taint",
			p:    federation.Placement{ClusterSelector: &metav1.LabelSelector{}},
			fleet: []federation.Cluster{
				cluster("ok"),
				cluster("false", ready(metav1.ConditionFalse, "Offline")),
				cluster("unknown", ready(metav1.ConditionUnknown, "")),
				cluster("fresh", noConditions()),
				cluster("tainted", taint(federation.TaintClusterUnreachable, "", corev1.TaintEffectNoExecute)),
			},
			want: []string{"ok"},
			why: map[string]placement.Rule{
				"false": placement.NotReady, "unknown": placement.NotReady, "fresh": placement.NotReady, "tainted": placement.NotReady,
			},
		},
		{
			name: "a toleration for the not-ready taint keeps not-ready clusters",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, Tolerations: []corev1.Toleration{
				{Key: federation.TaintClusterNotReady, Operator: corev1.TolerationOpExists},
			}},
			fleet: []federation.Cluster{
				cluster("ok"),
				cluster("false", ready(metav1.ConditionFalse, "Offline")),
				cluster("monitor", ready(metav1.ConditionFalse, ""), taint(federation.TaintClusterNotReady, "", corev1.TaintEffectNoSchedule)),
			},
			want: []string{"false", "monitor", "ok"},
		},
		{
			name: "a NoSchedule toleration does not tolerate the implied NoExecute not-ready taint",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, Tolerations: []corev1.Toleration{
				{Key: federation.TaintClusterNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			}},
			fleet: []federation.Cluster{cluster("false", ready(metav1.ConditionFalse, ""))},
			want:  []string{},
			why:   map[string]placement.Rule{"false": placement.NotReady},
		},
		{
			name: "maxClusters keeps the best ranked",
			p:    federation.Placement{ClusterSelector: &metav1.LabelSelector{}, MaxClusters: int32p(2)},
			want: []string{"ap-1", "eu-1"},
			why:  map[string]placement.Rule{"us-1": placement.MaxClusters, "us-2": placement.MaxClusters},
		},
		{
			name: "maxClusters 0 selects nothing",
			p:    federation.Placement{ClusterSelector: &metav1.LabelSelector{}, MaxClusters: int32p(0)},
			want: []string{},
			why:  map[string]placement.Rule{"us-1": placement.MaxClusters},
		},
		{
			name: "spread maxGroups keeps the groups of the best ranked clusters",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MaxGroups: 2},
			}},
			want: []string{"ap-1", "eu-1"},
			why:  map[string]placement.Rule{"us-1": placement.Spread, "us-2": placement.Spread},
		},
		{
			name: "spread minGroups with maxClusters picks one per group first",
			p: federation.Placement{
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
				ClusterAffinity: &federation.ClusterAffinity{Preferred: []federation.WeightedAffinityTerm{
					{Weight: 10, Term: federation.AffinityTerm{Regions: []string{"us-east-1"}}},
				}},
				MaxClusters:       int32p(2),
				SpreadConstraints: []federation.SpreadConstraint{{TopologyKey: "provider", MinGroups: 2}},
			},
			want: []string{"us-1", "eu-1"},
			why:  map[string]placement.Rule{"us-2": placement.MaxClusters},
		},
		{
			name: "spread over a label leaves out clusters without it",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "env", MinGroups: 2},
			}},
			fleet: []federation.Cluster{cluster("a", labels("env", "x")), cluster("b", labels("env", "y")), cluster("c")},
			want:  []string{"a", "b"},
			why:   map[string]placement.Rule{"c": placement.Spread},
		},
		{
			name: "minGroups unsatisfiable",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "region", MinGroups: 4},
			}},
			err: placement.ErrUnsatisfiable,
		},
		{
			name: "maxClusters below minGroups is unsatisfiable",
			p: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, MaxClusters: int32p(1), SpreadConstraints: []federation.SpreadConstraint{
				{TopologyKey: "zone", MinGroups: 2},
			}},
			err: placement.ErrUnsatisfiable,
		},
		{
			name: "invalid placement",
			p:    federation.Placement{Clusters: refs("a", "a")},
			err:  placement.ErrInvalidPlacement,
		},
		{
			name:  "duplicate clusters",
			p:     federation.Placement{ClusterSelector: &metav1.LabelSelector{}},
			fleet: []federation.Cluster{cluster("a"), cluster("a")},
			err:   placement.ErrDuplicateCluster,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fleet
			if tc.fleet != nil {
				f = tc.fleet
			}
			d, err := placement.Evaluate(tc.p, f)
			if tc.err != nil {
				require.True(t, errors.Is(err, tc.err), "Evaluate() error = %v; want %v", err, tc.err)
				got, err := placement.Select(tc.p, f)
				require.ErrorIs(t, err, tc.err)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, d.Names()); diff != "" {
				t.Errorf("Evaluate().Names() (-want +got):\n%s", diff)
			}
			got, err := placement.Select(tc.p, f)
			require.NoError(t, err)
			require.Equal(t, d.Names(), got, "Select and Evaluate agree")
			for name, rule := range tc.why {
				diag, ok := d.Why(name)
				require.True(t, ok, "Why(%q) found nothing; decision %+v", name, d)
				require.Equal(t, rule, diag.Rule, "Why(%q) = %v", name, diag)
				require.NotEmpty(t, diag.Detail)
			}
			require.Equal(t, len(f), len(d.Selected)+len(d.Excluded), "every cluster is selected or diagnosed")
			require.Equal(t, tc.unknown, d.Unknown)
		})
	}
}

// TestEvaluateDeterministic checks that the input order of clusters does not matter.
func TestEvaluateDeterministic(t *testing.T) {
	p := federation.Placement{ClusterSelector: &metav1.LabelSelector{}, MaxClusters: int32p(3),
		SpreadConstraints: []federation.SpreadConstraint{{TopologyKey: "region", MinGroups: 2}}}
	fleet := []federation.Cluster{
		cluster("a", region("r1")), cluster("b", region("r1")), cluster("c", region("r2")),
		cluster("d", region("r3")), cluster("e", region("r2")),
	}
	want, err := placement.Evaluate(p, fleet)
	require.NoError(t, err)
	reversed := make([]federation.Cluster, len(fleet))
	for i := range fleet {
		reversed[len(fleet)-1-i] = fleet[i]
	}
	got, err := placement.Evaluate(p, reversed)
	require.NoError(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate() depends on input order (-want +got):\n%s", diff)
	}
}

func TestDomain(t *testing.T) {
	c := cluster("x", labels("team", "blue", federation.RegionLabel, "label-region"), region("", "z2", "z1", "z2"), provider("aws"))
	tests := []struct{ key, want string }{
		{"region", "label-region"},
		{"zone", "z1,z2"},
		{"provider", "aws"},
		{"team", "blue"},
		{"missing", ""},
		{federation.ZoneLabel, "z1,z2"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			if got := placement.Domain(&c, tc.key); got != tc.want {
				t.Errorf("Domain(x, %q) = %q; want %q", tc.key, got, tc.want)
			}
		})
	}
	c.Status.Region = "status-region"
	require.Equal(t, "status-region", placement.Domain(&c, "region"))
	c.Spec.Region = "spec-region"
	require.Equal(t, "spec-region", placement.Domain(&c, "region"))
}

func TestSummary(t *testing.T) {
	fleet := []federation.Cluster{
		cluster("a"), cluster("b", taint("gpu", "", corev1.TaintEffectNoSchedule)), cluster("c", ready(metav1.ConditionFalse, "Offline")),
	}
	d, err := placement.Evaluate(federation.Placement{Clusters: refs("a", "b", "c", "z")}, fleet)
	require.NoError(t, err)
	want := "1 of 3 clusters selected (a); left out: b: Taint: taint gpu:NoSchedule not tolerated; " +
		"c: NotReady: Ready condition is False (Offline); implied taint federation.k8s.io/not-ready:NoExecute not tolerated; unknown: z"
	require.Equal(t, want, d.Summary())
}
