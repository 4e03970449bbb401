package placement_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// timedTaint adds a taint with its timeAdded.
func timedTaint(key string, effect corev1.TaintEffect, added time.Time) clusterOpt {
	return func(c *federation.Cluster) {
		at := metav1.NewTime(added)
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Effect: effect, TimeAdded: &at})
	}
}

func notReadySince(t time.Time) clusterOpt {
	return func(c *federation.Cluster) {
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionFalse, Reason: "Offline", LastTransitionTime: metav1.NewTime(t)}}
	}
}

func seconds(n int64) *int64 { return &n }

// TestPlaceStages: the failover stages as placement sees them. NoSchedule refuses new
// placements but keeps a cluster the object runs in; NoExecute takes the work away unless
// tolerated, and a tolerationSeconds toleration holds until the taint's timeAdded plus its
// seconds.
func TestPlaceStages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	all := federation.Placement{ClusterSelector: &metav1.LabelSelector{}}
	tolerate := func(key string, secs *int64) federation.Placement {
		p := all
		p.Tolerations = []corev1.Toleration{{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}}
		return p
	}
	tests := []struct {
		name     string
		p        federation.Placement
		clusters []federation.Cluster
		running  []string
		now      time.Time
		want     []string
		why      map[string]placement.Rule
		kept     []string
		recheck  time.Time
	}{{
		name: "NoSchedule keeps the cluster the object runs in",
		p:    all,
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0),
			timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule, t0))},
		running: []string{"a", "b"},
		now:     t0.Add(time.Minute),
		want:    []string{"a", "b"},
		kept:    []string{"b"},
	}, {
		name: "NoSchedule refuses a new placement",
		p:    all,
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0),
			timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule, t0))},
		running: []string{"a"},
		now:     t0.Add(time.Minute),
		want:    []string{"a"},
		why:     map[string]placement.Rule{"b": placement.NotReady},
	}, {
		name:     "a user's NoSchedule taint keeps a running cluster too",
		p:        all,
		clusters: []federation.Cluster{cluster("a", taint("gpu", "", corev1.TaintEffectNoSchedule)), cluster("b", taint("gpu", "", corev1.TaintEffectNoSchedule))},
		running:  []string{"a"},
		want:     []string{"a"},
		why:      map[string]placement.Rule{"b": placement.Taint},
		kept:     []string{"a"},
	}, {
		name: "NoExecute evicts a running cluster",
		p:    all,
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0),
			timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute, t0))},
		running: []string{"a", "b"},
		now:     t0.Add(10 * time.Minute),
		want:    []string{"a"},
		why:     map[string]placement.Rule{"b": placement.NotReady},
	}, {
		name:     "the implied not-ready taint is NoExecute: a running cluster is left out",
		p:        all,
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0))},
		running:  []string{"a", "b"},
		now:      t0.Add(time.Minute),
		want:     []string{"a"},
		why:      map[string]placement.Rule{"b": placement.NotReady},
	}, {
		name: "tolerationSeconds before the end keeps the cluster and asks to look again",
		p:    tolerate(federation.TaintClusterNotReady, seconds(300)),
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0),
			timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute, t0))},
		running: []string{"a", "b"},
		now:     t0.Add(299 * time.Second),
		want:    []string{"a", "b"},
		kept:    []string{"b"},
		recheck: t0.Add(300 * time.Second),
	}, {
		name: "tolerationSeconds after the end leaves the cluster out",
		p:    tolerate(federation.TaintClusterNotReady, seconds(300)),
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0),
			timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute, t0))},
		running: []string{"a", "b"},
		now:     t0.Add(300 * time.Second),
		want:    []string{"a"},
		why:     map[string]placement.Rule{"b": placement.NotReady},
	}, {
		name:     "tolerationSeconds of the implied taint counts from the Ready condition's transition",
		p:        tolerate(federation.TaintClusterNotReady, seconds(60)),
		clusters: []federation.Cluster{cluster("a"), cluster("b", notReadySince(t0))},
		running:  []string{"a", "b"},
		now:      t0.Add(61 * time.Second),
		want:     []string{"a"},
		why:      map[string]placement.Rule{"b": placement.NotReady},
	}, {
		name: "tolerationSeconds on a user's NoExecute taint",
		p:    tolerate("maintenance", seconds(120)),
		clusters: []federation.Cluster{cluster("a", timedTaint("maintenance", corev1.TaintEffectNoExecute, t0)),
			cluster("b", timedTaint("maintenance", corev1.TaintEffectNoExecute, t0.Add(time.Minute)))},
		running: []string{"a", "b"},
		now:     t0.Add(150 * time.Second),
		want:    []string{"b"},
		why:     map[string]placement.Rule{"a": placement.Taint},
		kept:    []string{"b"},
		recheck: t0.Add(180 * time.Second),
	}, {
		name: "a toleration without seconds holds for ever",
		p:    tolerate(federation.TaintClusterNotReady, nil),
		clusters: []federation.Cluster{cluster("b", notReadySince(t0),
			timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute, t0))},
		now:  t0.Add(24 * time.Hour),
		want: []string{"b"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := placement.Place(placement.Input{Placement: tt.p, Clusters: tt.clusters, Running: tt.running, Now: tt.now})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Names()); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			why := map[string]placement.Rule{}
			for _, x := range d.Excluded {
				why[x.Cluster] = x.Rule
			}
			if tt.why == nil {
				tt.why = map[string]placement.Rule{}
			}
			if diff := cmp.Diff(tt.why, why); diff != "" {
				t.Errorf("excluded (-want +got):\n%s", diff)
			}
			var kept []string
			for _, k := range d.Kept {
				kept = append(kept, k.Cluster)
			}
			if diff := cmp.Diff(tt.kept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if !d.Recheck.Equal(tt.recheck) {
				t.Errorf("recheck = %v, want %v", d.Recheck, tt.recheck)
			}
		})
	}
}

// TestPlaceDiagnosesExpiredToleration: the diagnosis of a cluster whose tolerationSeconds ran
// out says so, with the time it ended.
func TestPlaceDiagnosesExpiredToleration(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := federation.Placement{ClusterSelector: &metav1.LabelSelector{}, Tolerations: []corev1.Toleration{{
		Key: federation.TaintClusterNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(300)}}}
	clusters := []federation.Cluster{cluster("b", notReadySince(t0), timedTaint(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute, t0))}
	d, err := placement.Place(placement.Input{Placement: p, Clusters: clusters, Running: []string{"b"}, Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	want := []placement.Diagnosis{{Cluster: "b", Rule: placement.NotReady,
		Detail: "taint federation.k8s.io/not-ready:NoExecute tolerated for 300s, until 2026-01-01T12:05:00Z"}}
	if diff := cmp.Diff(want, d.Excluded); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
}

// TestSelectIsTimeless: Select and Evaluate know neither where the object runs nor the time,
// so NoSchedule leaves every cluster out and tolerationSeconds is not counted.
func TestSelectIsTimeless(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := federation.Placement{ClusterSelector: &metav1.LabelSelector{}, Tolerations: []corev1.Toleration{{
		Key: "maintenance", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(1)}}}
	got, err := placement.Select(p, []federation.Cluster{
		cluster("a", timedTaint("maintenance", corev1.TaintEffectNoExecute, t0)),
		cluster("b", taint("gpu", "", corev1.TaintEffectNoSchedule)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a"}, got); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
}
