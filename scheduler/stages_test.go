package scheduler_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// decodeYAML decodes doc into a new T, failing the test on error.
func decodeYAML[T any](t *testing.T, doc string) *T {
	t.Helper()
	out := new(T)
	if err := yaml.Unmarshal([]byte(doc), out); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return out
}

// TestDecideFailoverStages: Decide leaves a not-ready cluster's replicas where they are while
// its taint is NoSchedule (no new placements), takes them away at NoExecute, and with a
// tolerationSeconds toleration keeps them until it ends and asks to look again then.
func TestDecideFailoverStages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	readyC := `{metadata: {name: a}, status: {conditions: [{type: Ready, status: "True"}]}}`
	notReady := func(effect string) string {
		return `{metadata: {name: b}, spec: {taints: [{key: federation.k8s.io/not-ready, effect: ` + effect + `, timeAdded: "2026-01-01T12:00:00Z"}]},
  status: {conditions: [{type: Ready, status: "False", reason: Offline, lastTransitionTime: "2026-01-01T12:00:00Z", message: ""}]}}`
	}
	obj := func(tolerations string) string {
		return `{metadata: {name: web, namespace: shop, generation: 1}, spec: {template: {spec: {replicas: 3}}, placement: {clusterSelector: {}, tolerations: ` + tolerations + `}}}`
	}
	both := `{clusters: [{name: a, replicas: 3}, {name: b, replicas: 3}]}`
	for _, tc := range []struct {
		name        string
		object      string
		b           string
		previous    string
		now         time.Time
		want        []string
		wantNR      []string
		wantRequeue time.Duration
	}{
		{name: "NoSchedule keeps what runs", object: obj("[]"), b: notReady("NoSchedule"), previous: both, now: t0.Add(time.Minute),
			want: []string{"a", "b"}},
		{name: "NoSchedule places nothing new", object: obj("[]"), b: notReady("NoSchedule"), now: t0.Add(time.Minute),
			want: []string{"a"}, wantNR: []string{"b"}},
		{name: "NoExecute evicts", object: obj("[]"), b: notReady("NoExecute"), previous: both, now: t0.Add(10 * time.Minute),
			want: []string{"a"}, wantNR: []string{"b"}},
		{name: "tolerationSeconds keeps until it ends", object: obj(`[{key: federation.k8s.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]`),
			b: notReady("NoExecute"), previous: both, now: t0.Add(100 * time.Second),
			want: []string{"a", "b"}, wantRequeue: 200 * time.Second},
		{name: "tolerationSeconds ended", object: obj(`[{key: federation.k8s.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]`),
			b: notReady("NoExecute"), previous: both, now: t0.Add(300 * time.Second),
			want: []string{"a"}, wantNR: []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := scheduler.Input{
				Type:     federation.DeploymentType,
				Object:   decodeYAML[federation.FederatedObject](t, tc.object),
				Clusters: []federation.Cluster{*decodeYAML[federation.Cluster](t, readyC), *decodeYAML[federation.Cluster](t, tc.b)},
				Now:      tc.now,
			}
			if tc.previous != "" {
				in.Previous = decodeYAML[federation.Schedule](t, tc.previous)
			}
			d, err := scheduler.Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range d.Schedule.Clusters {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scheduled clusters (-want +got):\n%s\n%s", diff, d.Message)
			}
			if diff := cmp.Diff(tc.wantNR, d.Schedule.NotReady); diff != "" {
				t.Errorf("schedule.notReady (-want +got):\n%s", diff)
			}
			if d.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", d.RequeueAfter, tc.wantRequeue)
			}
		})
	}
}
