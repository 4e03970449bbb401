package plan_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/sync/plan"
)

func readyCluster(name string, ready bool, labels map[string]string) federation.Cluster {
	status := metav1.ConditionTrue
	if !ready {
		status = metav1.ConditionFalse
	}
	return federation.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status:     federation.ClusterStatus{Conditions: []metav1.Condition{{Type: federation.ConditionReady, Status: status}}},
	}
}

// TestTargetsFor: where an object goes, and which clusters sync reports ClusterNotReady.
func TestTargetsFor(t *testing.T) {
	notAzure := federation.Placement{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: federation.ProviderLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"azure"}},
	}}}
	scheduled := func(fed *federation.FederatedObject, replicas map[string]int64) {
		fed.Generation = 1
		fed.Status.Conditions = []metav1.Condition{{Type: federation.ConditionScheduled, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
		fed.Status.Schedule = &federation.Schedule{}
		for _, name := range []string{"aws", "azure", "gcp"} {
			if n, ok := replicas[name]; ok {
				fed.Status.Schedule.Clusters = append(fed.Status.Schedule.Clusters, federation.ScheduledCluster{Name: name, Replicas: n})
			}
		}
	}
	tests := []struct {
		name         string
		placement    federation.Placement
		schedule     map[string]int64
		previous     []string // status.clusters
		evictions    []string // clusters the schedule's evictions take every replica from
		azureReady   bool
		wantOrder    []string
		wantNotReady []string
		// wantRollout is RolloutClusters: Order and NotReady unless set.
		wantRollout []string
	}{
		{name: "every cluster ready", azureReady: true, wantOrder: []string{"aws", "azure", "gcp"}},
		{name: "a placed cluster not ready", wantOrder: []string{"aws", "gcp"}, wantNotReady: []string{"azure"}, wantRollout: []string{"aws", "gcp", "azure"}},
		{name: "a scheduled cluster not ready", schedule: map[string]int64{"aws": 2, "azure": 1}, wantOrder: []string{"aws"}, wantNotReady: []string{"azure"}},
		{
			// A preference set the placement aside and placed replicas in azure; azure was
			// then cut off and the scheduler dropped it. Its object still runs there: sync
			// reports it instead of forgetting it.
			name: "previously propagated, no longer placed, not ready", placement: notAzure,
			schedule: map[string]int64{"aws": 5, "gcp": 4}, previous: []string{"aws", "azure", "gcp"},
			wantOrder: []string{"aws", "gcp"}, wantNotReady: []string{"azure"},
			wantRollout: []string{"aws", "gcp"}, // it left the placement: it left the rollout
		},
		{
			// The scheduler's eviction of azure's replicas is held while azure is out of
			// reach: the schedule keeps its copy, but placement no longer has it.
			name: "evicted to 0 and held while not ready, no longer placed: it left the rollout", placement: notAzure,
			schedule: map[string]int64{"aws": 5, "azure": 2, "gcp": 4}, evictions: []string{"azure"}, previous: []string{"aws", "azure", "gcp"},
			wantOrder: []string{"aws", "gcp"}, wantNotReady: []string{"azure"}, wantRollout: []string{"aws", "gcp"},
		},
		{
			// Placement still has it, but for its readiness: it stays in the rollout.
			name:     "evicted to 0 and held while not ready, placed but for readiness: still in the rollout",
			schedule: map[string]int64{"aws": 5, "azure": 2, "gcp": 4}, evictions: []string{"azure"}, previous: []string{"aws", "azure", "gcp"},
			wantOrder: []string{"aws", "gcp"}, wantNotReady: []string{"azure"},
		},
		{
			name: "previously propagated, no longer placed, ready: not reported (sync deletes there)", placement: notAzure,
			azureReady: true, previous: []string{"aws", "azure", "gcp"}, wantOrder: []string{"aws", "gcp"},
		},
		{
			name: "a status entry for a cluster that no longer exists is not reported", placement: notAzure,
			previous: []string{"aws", "gone"}, wantOrder: []string{"aws", "gcp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clusters := []federation.Cluster{
				readyCluster("aws", true, map[string]string{federation.ProviderLabel: "aws"}),
				readyCluster("azure", tt.azureReady, map[string]string{federation.ProviderLabel: "azure"}),
				readyCluster("gcp", true, map[string]string{federation.ProviderLabel: "gcp"}),
			}
			fed := &federation.FederatedObject{Spec: federation.FederatedSpec{Placement: tt.placement}}
			if fed.Spec.Placement.ClusterSelector == nil && fed.Spec.Placement.Clusters == nil {
				fed.Spec.Placement.ClusterSelector = &metav1.LabelSelector{}
			}
			if tt.schedule != nil {
				scheduled(fed, tt.schedule)
			}
			for _, name := range tt.evictions {
				fed.Status.Schedule.Evictions = append(fed.Status.Schedule.Evictions, federation.Eviction{Cluster: name, Reason: federation.EvictionPlacement, Keep: 2})
			}
			for _, name := range tt.previous {
				fed.Status.Clusters = append(fed.Status.Clusters, federation.MemberStatus{Name: name})
			}
			got, err := plan.TargetsFor(fed, federation.ConfigMapType, clusters, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOrder, got.Order, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotReady, got.NotReady, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("NotReady (-want +got):\n%s", diff)
			}
			wantRollout := tt.wantRollout
			if wantRollout == nil {
				wantRollout = append(slices.Clone(tt.wantOrder), tt.wantNotReady...)
			}
			if diff := cmp.Diff(wantRollout, got.RolloutClusters(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("RolloutClusters (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTargetsForNoSchedule: without a schedule, a cluster the object runs in (status.clusters)
// stays placed under an untolerated NoSchedule taint; it is not Ready, so sync reports it
// ClusterNotReady and neither writes nor deletes there. One it does not run in is not placed,
// and a NoExecute taint takes the cluster out of the placement.
func TestTargetsForNoSchedule(t *testing.T) {
	tainted := func(name string, effect corev1.TaintEffect) federation.Cluster {
		c := readyCluster(name, false, nil)
		c.Spec.Taints = []corev1.Taint{{Key: federation.TaintClusterNotReady, Effect: effect}}
		return c
	}
	taintedAt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	userTainted := func(name string, effect corev1.TaintEffect) federation.Cluster {
		c := readyCluster(name, true, nil)
		c.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: effect, TimeAdded: &metav1.Time{Time: taintedAt}}}
		return c
	}
	tests := []struct {
		name         string
		b            federation.Cluster
		previous     []string
		wantOrder    []string
		wantNotReady []string
		wantRollout  []string
		tolerate     *int64    // tolerationSeconds of a toleration of the maintenance taint
		now          time.Time // when TargetsFor decides (zero: tolerationSeconds not counted)
	}{
		{name: "NoSchedule, runs there: still placed, not ready", b: tainted("b", corev1.TaintEffectNoSchedule), previous: []string{"a", "b"},
			wantOrder: []string{"a"}, wantNotReady: []string{"b"}, wantRollout: []string{"a", "b"}},
		{name: "NoSchedule, new: not placed", b: tainted("b", corev1.TaintEffectNoSchedule),
			wantOrder: []string{"a"}, wantNotReady: []string{"b"}, wantRollout: []string{"a", "b"}},
		{name: "NoExecute, runs there: not ready, so nothing is removed yet", b: tainted("b", corev1.TaintEffectNoExecute), previous: []string{"a", "b"},
			wantOrder: []string{"a"}, wantNotReady: []string{"b"}, wantRollout: []string{"a", "b"}},
		{name: "a user's NoSchedule on a Ready cluster it runs in: still placed", b: userTainted("b", corev1.TaintEffectNoSchedule), previous: []string{"a", "b"},
			wantOrder: []string{"a", "b"}, wantRollout: []string{"a", "b"}},
		{name: "a user's NoSchedule on a Ready cluster, new: not placed", b: userTainted("b", corev1.TaintEffectNoSchedule),
			wantOrder: []string{"a"}, wantRollout: []string{"a"}},
		{name: "a user's NoExecute on a Ready cluster it runs in: no longer placed", b: userTainted("b", corev1.TaintEffectNoExecute), previous: []string{"a", "b"},
			wantOrder: []string{"a"}, wantRollout: []string{"a"}},
		{name: "a NoExecute tolerated for 60s, 30s after it came: still placed", b: userTainted("b", corev1.TaintEffectNoExecute), previous: []string{"a", "b"},
			tolerate: ptr[int64](60), now: taintedAt.Add(30 * time.Second), wantOrder: []string{"a", "b"}, wantRollout: []string{"a", "b"}},
		{name: "a NoExecute tolerated for 60s, 90s after it came: no longer placed", b: userTainted("b", corev1.TaintEffectNoExecute), previous: []string{"a", "b"},
			tolerate: ptr[int64](60), now: taintedAt.Add(90 * time.Second), wantOrder: []string{"a"}, wantRollout: []string{"a"}},
		{name: "a NoExecute tolerated for 60s, no clock: tolerationSeconds not counted", b: userTainted("b", corev1.TaintEffectNoExecute), previous: []string{"a", "b"},
			tolerate: ptr[int64](60), wantOrder: []string{"a", "b"}, wantRollout: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fed := &federation.FederatedObject{Spec: federation.FederatedSpec{Placement: federation.Placement{ClusterSelector: &metav1.LabelSelector{}}}}
			if tt.tolerate != nil {
				fed.Spec.Placement.Tolerations = []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: tt.tolerate}}
			}
			for _, name := range tt.previous {
				fed.Status.Clusters = append(fed.Status.Clusters, federation.MemberStatus{Name: name})
			}
			got, err := plan.TargetsFor(fed, federation.ConfigMapType, []federation.Cluster{readyCluster("a", true, nil), tt.b}, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOrder, got.Order, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotReady, got.NotReady, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("NotReady (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRollout, got.RolloutClusters(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("RolloutClusters (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTargetsRequiredClusters: a hand-federated ConfigMap keeps its own clusters and gains
// those its dependent workloads run in (federation.RequiredByClustersAnnotation), and the
// scheduler and sync agree, as both go through placement's Decision.Require.
func TestTargetsRequiredClusters(t *testing.T) {
	clusters := []federation.Cluster{
		readyCluster("aws", true, nil), readyCluster("azure", false, nil), readyCluster("gcp", true, nil),
	}
	for _, tc := range []struct {
		name     string
		required string
		want     []string
	}{
		{"no annotation: its own clusters", "", []string{"aws"}},
		{"the union is added", "gcp", []string{"aws", "gcp"}},
		{"never removed, a not-ready cluster not added", "aws,azure", []string{"aws"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fed := &federation.FederatedObject{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"},
				Spec:       federation.FederatedSpec{Placement: federation.Placement{Clusters: []federation.ClusterReference{{Name: "aws"}}}},
			}
			if tc.required != "" {
				fed.Annotations = map[string]string{federation.RequiredByClustersAnnotation: tc.required}
			}
			targets, err := plan.TargetsFor(fed, federation.ConfigMapType, clusters, time.Time{})
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, targets.Order); diff != "" {
				t.Errorf("sync targets (-want +got):\n%s", diff)
			}
			d, err := scheduler.Decide(scheduler.Input{Type: federation.ConfigMapType, Object: fed, Clusters: clusters, Now: time.Unix(0, 0)})
			require.NoError(t, err)
			var scheduled []string
			for _, c := range d.Schedule.Clusters {
				scheduled = append(scheduled, c.Name)
			}
			if diff := cmp.Diff(tc.want, scheduled); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}
