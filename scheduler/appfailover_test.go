package scheduler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/scheduler"
)

// TestDecideApplicationFailover: a Ready cluster where the workload has been unhealthy (fresh
// data) for toleranceSeconds is left out and avoided for backoffSeconds; never on stale data,
// never when no other cluster could take the replicas.
func TestDecideApplicationFailover(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	readyC := func(name string) federation.Cluster {
		return *decodeYAML[federation.Cluster](t, `{metadata: {name: `+name+`}, status: {conditions: [{type: Ready, status: "True", reason: ClusterReady, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}]}}`)
	}
	obj := func(clusters string) *federation.FederatedObject {
		return decodeYAML[federation.FederatedObject](t, `{metadata: {name: web, namespace: shop, generation: 1},
  spec: {template: {spec: {replicas: 3}}, placement: {clusters: `+clusters+`, failover: {application: {toleranceSeconds: 300, backoffSeconds: 600}}}}}`)
	}
	unhealthy := func(fed *federation.FederatedObject, cluster string, since time.Time, stale bool) *federation.FederatedObject {
		s := metav1.NewTime(since)
		fed.Status.Clusters = append(fed.Status.Clusters, federation.MemberStatus{Name: cluster, Revision: 2, ObservedRevision: 2, UnhealthySince: &s, Stale: stale})
		return fed
	}
	until := metav1.NewTime(t0.Add(300*time.Second + 600*time.Second))
	for _, tc := range []struct {
		name        string
		fed         *federation.FederatedObject
		previous    *federation.Schedule
		now         time.Time
		want        []string
		wantAvoided []federation.AvoidedCluster
		wantRequeue time.Duration
		wantMessage string
	}{
		{name: "unhealthy, within toleranceSeconds: stays, look again when it ends",
			fed: unhealthy(obj("[{name: a}, {name: b}]"), "b", t0, false), now: t0.Add(299 * time.Second),
			want: []string{"a", "b"}, wantRequeue: time.Second},
		{name: "unhealthy for toleranceSeconds: left out, avoided for backoffSeconds",
			fed: unhealthy(obj("[{name: a}, {name: b}]"), "b", t0, false), now: t0.Add(300 * time.Second),
			want: []string{"a"}, wantAvoided: []federation.AvoidedCluster{{Cluster: "b", Reason: federation.EvictionApplication, Until: until}},
			wantRequeue: 600 * time.Second, wantMessage: "b: ApplicationFailure: the workload is unhealthy there since 2026-01-01T12:00:00Z"},
		{name: "stale data never triggers it",
			fed: unhealthy(obj("[{name: a}, {name: b}]"), "b", t0, true), now: t0.Add(time.Hour),
			want: []string{"a", "b"}},
		{name: "no other cluster: stays, and the message says so",
			fed: unhealthy(obj("[{name: b}]"), "b", t0, false), now: t0.Add(time.Hour),
			want: []string{"b"}, wantMessage: "no other cluster could take its replicas"},
		{name: "within the back-off: still left out",
			fed: obj("[{name: a}, {name: b}]"), now: t0.Add(600 * time.Second),
			previous: &federation.Schedule{Clusters: []federation.ScheduledCluster{{Name: "a", Replicas: 3}},
				Avoided: []federation.AvoidedCluster{{Cluster: "b", Reason: federation.EvictionApplication, Until: until}}},
			want: []string{"a"}, wantAvoided: []federation.AvoidedCluster{{Cluster: "b", Reason: federation.EvictionApplication, Until: until}},
			wantRequeue: 300 * time.Second, wantMessage: "b: ApplicationFailure: avoided after an application failover until 2026-01-01T12:15:00Z"},
		{name: "after the back-off: may be chosen again",
			fed: obj("[{name: a}, {name: b}]"), now: until.Time,
			previous: &federation.Schedule{Clusters: []federation.ScheduledCluster{{Name: "a", Replicas: 3}},
				Avoided: []federation.AvoidedCluster{{Cluster: "b", Reason: federation.EvictionApplication, Until: until}}},
			want: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := scheduler.Decide(scheduler.Input{Type: federation.DeploymentType, Object: tc.fed, Previous: tc.previous,
				Clusters: []federation.Cluster{readyC("a"), readyC("b")}, Now: tc.now})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range d.Schedule.Clusters {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scheduled (-want +got):\n%s\n%s", diff, d.Message)
			}
			if diff := cmp.Diff(tc.wantAvoided, d.Schedule.Avoided); diff != "" {
				t.Errorf("avoided (-want +got):\n%s", diff)
			}
			if d.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", d.RequeueAfter, tc.wantRequeue)
			}
			if !strings.Contains(d.Condition.Message, tc.wantMessage) {
				t.Errorf("message %q does not contain %q", d.Condition.Message, tc.wantMessage)
			}
			if len(tc.wantAvoided) > 0 {
				if x, ok := d.Placement.Why("b"); !ok || x.Rule != placement.ApplicationFailure {
					t.Errorf("Why(b) = %v, %v; want ApplicationFailure", x, ok)
				}
			}
		})
	}
}

// TestSchedulerApplicationFailover: the Scheduler loop on a fake host. The Collector reports
// the workload unhealthy in gcp; after toleranceSeconds its replicas leave gcp, the Scheduled
// condition's message and a Warning say why, status.schedule.avoided lists gcp until the
// back-off ends, and then gcp may be chosen again. The move is graceful: gcp keeps its copy
// until aws and azure report theirs available.
func TestSchedulerApplicationFailover(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	rec := &fake.Recorder{}
	s, err := scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Clock: e.clock, Events: rec})
	require.NoError(t, err)
	e.apply(t, federation.DeploymentType.FederatedGVR(), strings.Replace(frontend, "    clusters: [{name: aws}, {name: gcp}, {name: azure}]",
		"    clusters: [{name: aws}, {name: gcp}, {name: azure}]\n    failover: {application: {toleranceSeconds: 60, backoffSeconds: 600}}", 1))
	res, err := s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	scheduled := func() []string {
		var out []string
		for _, c := range e.federated(t, federation.DeploymentType).Status.Schedule.Clusters {
			out = append(out, c.Name)
		}
		return out
	}
	require.Equal(t, []string{"aws", "azure", "gcp"}, scheduled())

	// The Collector's entry: gcp runs its revision, not ready, since now.
	u, err := e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"name": "gcp", "revision": int64(1), "observedRevision": int64(1), "ready": false, "unhealthySince": now.Format(time.RFC3339), "lastObserved": now.Format(time.RFC3339)},
	}, "status", "clusters"))
	_, err = e.host.UpdateStatus(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)
	rec.Reset()

	res, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, time.Minute, res.RequeueAfter, "look again when toleranceSeconds ends")
	require.Equal(t, []string{"aws", "azure", "gcp"}, scheduled())
	require.Empty(t, rec.Events())

	e.clock.Step(time.Minute)
	res, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, res.RequeueAfter, "look again when the back-off ends")
	fed := e.federated(t, federation.DeploymentType)
	// Gracefully: gcp keeps its copy until aws and azure report theirs available.
	require.Equal(t, []string{"aws", "azure", "gcp"}, scheduled())
	require.Len(t, fed.Status.Schedule.Evictions, 1)
	require.Equal(t, "gcp", fed.Status.Schedule.Evictions[0].Cluster)
	require.Equal(t, federation.EvictionApplication, fed.Status.Schedule.Evictions[0].Reason)
	until := metav1.NewTime(now.Add(11 * time.Minute))
	require.Len(t, fed.Status.Schedule.Avoided, 1)
	a := fed.Status.Schedule.Avoided[0]
	require.Equal(t, "gcp", a.Cluster)
	require.Equal(t, federation.EvictionApplication, a.Reason)
	require.True(t, until.Equal(&a.Until), "until %v", a.Until)
	cond := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionScheduled)
	require.Contains(t, cond.Message, "gcp: ApplicationFailure: the workload is unhealthy there since 2026-11-29T12:00:00Z, longer than toleranceSeconds (60s); avoided until 2026-11-29T12:11:00Z")
	var got []string
	for _, ev := range rec.Events() {
		got = append(got, ev.String())
	}
	require.Contains(t, got, "Warning FederatedDeployment production/app-frontend ApplicationFailover: the workload was unhealthy in gcp for longer than its application failover tolerates: its replicas leave, and gcp is avoided until 2026-11-29T12:11:00Z")

	// aws and azure report their copies available: gcp's goes.
	e.clock.Step(time.Minute)
	u, err = e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	at := e.clock.Now().Format(time.RFC3339)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"name": "aws", "revision": int64(1), "observedRevision": int64(1), "replicas": int64(6), "availableReplicas": int64(6), "lastObserved": at},
		map[string]any{"name": "azure", "revision": int64(1), "observedRevision": int64(1), "replicas": int64(6), "availableReplicas": int64(6), "lastObserved": at},
		map[string]any{"name": "gcp", "revision": int64(1), "observedRevision": int64(1), "ready": false, "unhealthySince": now.Format(time.RFC3339), "lastObserved": at},
	}, "status", "clusters"))
	_, err = e.host.UpdateStatus(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []string{"aws", "azure"}, scheduled(), "%s", meta.FindStatusCondition(e.federated(t, federation.DeploymentType).Status.Conditions, federation.ConditionScheduled).Message)
	require.Empty(t, e.federated(t, federation.DeploymentType).Status.Schedule.Evictions)

	// Sync removes the workload from gcp, and with it its status.clusters entry.
	u, err = e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"name": "aws", "revision": int64(1), "observedRevision": int64(1), "replicas": int64(6), "availableReplicas": int64(6), "lastObserved": at},
		map[string]any{"name": "azure", "revision": int64(1), "observedRevision": int64(1), "replicas": int64(6), "availableReplicas": int64(6), "lastObserved": at},
	}, "status", "clusters"))
	_, err = e.host.UpdateStatus(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)
	e.clock.Step(8 * time.Minute)
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []string{"aws", "azure"}, scheduled(), "still within the back-off: %s", meta.FindStatusCondition(e.federated(t, federation.DeploymentType).Status.Conditions, federation.ConditionScheduled).Message)
	e.clock.Step(time.Minute)
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []string{"aws", "azure", "gcp"}, scheduled(), "the back-off ended")
	require.Empty(t, e.federated(t, federation.DeploymentType).Status.Schedule.Avoided)
}
