package preview_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/preview"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fleet is three Clusters in three regions; eu is not ready, ap is tainted.
const fleet = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: us, labels: {tier: prod}}
spec: {apiEndpoint: "https://us.example.com", region: us-east-1, zones: [us-east-1a]}
status: {conditions: [{type: Ready, status: "True", reason: Ok, message: ok, lastTransitionTime: "2026-12-01T00:00:00Z"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu, labels: {tier: prod}}
spec: {apiEndpoint: "https://eu.example.com", region: europe-west1}
status: {conditions: [{type: Ready, status: "False", reason: Down, message: down, lastTransitionTime: "2026-12-01T00:00:00Z"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: ap, labels: {tier: prod}}
spec: {apiEndpoint: "https://ap.example.com", region: asia-east1, taints: [{key: gpu, value: "true", effect: NoSchedule}]}
status: {conditions: [{type: Ready, status: "True", reason: Ok, message: ok, lastTransitionTime: "2026-12-01T00:00:00Z"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: sa, labels: {tier: dev}}
spec: {apiEndpoint: "https://sa.example.com", region: southamerica-east1}
status: {conditions: [{type: Ready, status: "True", reason: Ok, message: ok, lastTransitionTime: "2026-12-01T00:00:00Z"}]}
`

// web is a FederatedDeployment on the clusters selected by placement (YAML), with overrides
// (a YAML list, or "").
func web(placement, overrides string) string {
	doc := `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:1"}]}
  placement: ` + placement + "\n"
	if overrides != "" {
		doc += "  overrides: " + overrides + "\n"
	}
	return doc
}

func webRSP(spec string) string {
	return `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec: ` + spec + "\n"
}

func run(t *testing.T, docs ...string) preview.Report {
	t.Helper()
	in, err := preview.Decode([]byte(strings.Join(docs, "\n---\n")))
	require.NoError(t, err)
	in.Now = now
	rep, err := preview.Run(in)
	require.NoError(t, err)
	return rep
}

// rows is an object's clusters as "name: selected replicas | rule: why".
func rows(o preview.Object) []string {
	var out []string
	for _, c := range o.Clusters {
		s := c.Name + ":"
		if c.Selected {
			s += " selected"
		}
		if c.Replicas != nil {
			s += fmt.Sprintf(" %d", *c.Replicas)
		}
		if c.Rule != "" {
			s += " | " + c.Rule + ": " + c.Why
		}
		out = append(out, s)
	}
	return out
}

func problems(ps []preview.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// TestRunPlacementAndSchedule: every cluster is accounted for, chosen with its replicas or
// left out with the placement rule that did it.
func TestRunPlacementAndSchedule(t *testing.T) {
	// us and sa with 3 replicas each, by a preference that keeps to the placement.
	evenRSP := webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}`)
	usAndSA := []string{
		"ap: | NotListed: not in spec.placement.clusters",
		"eu: | NotListed: not in spec.placement.clusters",
		"sa: selected 3",
		"us: selected 3",
	}
	for _, tc := range []struct {
		name         string
		docs         []string
		wantRows     []string
		wantProblems []string
		wantUnknown  []string
	}{
		{
			name: "without a preference every selected cluster gets the template's count",
			docs: []string{fleet, web(`{clusterSelector: {matchLabels: {tier: prod}}}`, "")},
			wantRows: []string{
				"ap: | Taint: taint gpu=true:NoSchedule not tolerated",
				"eu: | NotReady: Ready condition is False (Down); implied taint federation.k8s.io/not-ready:NoExecute not tolerated",
				`sa: | ClusterSelector: labels do not match clusterSelector "tier=prod"`,
				"us: selected 4",
			},
		},
		{
			name: "a preference ignores the placement unless it intersects",
			docs: []string{fleet, web(`{clusters: [{name: us}]}`, ""), webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {weight: 1}}}`)},
			wantRows: []string{
				"ap: | Taint: taint gpu=true:NoSchedule not tolerated",
				"eu: | NotReady: Ready condition is False (Down); implied taint federation.k8s.io/not-ready:NoExecute not tolerated",
				"sa: selected 3",
				"us: selected 3",
			},
			// The scheduler's warning, in the Scheduled message and here.
			wantProblems: []string{`Warning: FederatedDeployment shop/web: spec.placement.clusters: was ignored (it would leave out sa): a ReplicaSchedulingPreference chooses among every cluster unless its spec.intersectWithClusterSelector is true (KubeFed's rule)`},
		},
		{
			name: "an intersecting preference without an entry for a cluster",
			docs: []string{fleet, web(`{clusterSelector: {}}`, ""), webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {us: {weight: 1}}}`)},
			// The preference's entries are the first filter.
			wantRows: []string{
				`ap: | Preference: the ReplicaSchedulingPreference has no entry for it (neither "ap" nor "*" in spec.clusters)`,
				`eu: | Preference: the ReplicaSchedulingPreference has no entry for it (neither "eu" nor "*" in spec.clusters)`,
				`sa: | Preference: the ReplicaSchedulingPreference has no entry for it (neither "sa" nor "*" in spec.clusters)`,
				"us: selected 6",
			},
		},
		{
			name: "an unknown cluster name",
			docs: []string{fleet, web(`{clusters: [{name: us}, {name: uss}]}`, "")},
			wantRows: []string{
				"ap: | NotListed: not in spec.placement.clusters",
				"eu: | NotListed: not in spec.placement.clusters",
				"sa: | NotListed: not in spec.placement.clusters",
				"us: selected 4",
			},
			wantUnknown:  []string{"uss"},
			wantProblems: []string{`Warning: FederatedDeployment shop/web: spec.placement.clusters: names no Cluster "uss" (a typo, or a cluster not joined yet?): nothing is placed there`},
		},
		{
			// The scheduler's warning, in the Scheduled message and here.
			name: "a preference names an unknown cluster",
			docs: []string{fleet, web(`{clusterSelector: {}}`, ""), webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {us: {weight: 1}, uss: {weight: 1}}}`)},
			wantRows: []string{
				`ap: | Preference: the ReplicaSchedulingPreference has no entry for it (neither "ap" nor "*" in spec.clusters)`,
				`eu: | Preference: the ReplicaSchedulingPreference has no entry for it (neither "eu" nor "*" in spec.clusters)`,
				`sa: | Preference: the ReplicaSchedulingPreference has no entry for it (neither "sa" nor "*" in spec.clusters)`,
				"us: selected 6",
			},
			wantProblems: []string{`Warning: ReplicaSchedulingPreference shop/web: spec.clusters: names no Cluster "uss" (a typo, or a cluster not joined yet?): its preferences apply to no cluster`},
		},
		{
			name: "an override replaces the scheduled replicas",
			docs: []string{fleet, web(`{clusters: [{name: us}, {name: sa}]}`, `[{clusterName: sa, clusterOverrides: [{path: /spec/replicas, value: 5}]}]`),
				evenRSP},
			wantRows:     usAndSA,
			wantProblems: []string{`Warning: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0]: cluster "sa": the member runs 5 replicas, not the 3 the ReplicaSchedulingPreference scheduled: an override replaces /spec/replicas`},
		},
		{
			// The named entry applies after the selector's, wherever it stands in the list.
			name: "the override that sets the replicas last is named",
			docs: []string{fleet, web(`{clusters: [{name: us}, {name: sa}]}`, `[{clusterName: sa, clusterOverrides: [{path: /spec/replicas, value: 5}]}, `+
				`{clusterSelector: {matchLabels: {tier: dev}}, clusterOverrides: [{path: /spec/replicas, value: 7}]}]`),
				evenRSP},
			wantRows:     usAndSA,
			wantProblems: []string{`Warning: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0]: cluster "sa": the member runs 5 replicas, not the 3 the ReplicaSchedulingPreference scheduled: an override replaces /spec/replicas`},
		},
		{
			name: "a selector override's operation",
			docs: []string{fleet, web(`{clusters: [{name: us}, {name: sa}]}`, `[{clusterSelector: {matchLabels: {tier: dev}}, clusterOverrides: [{path: /spec/replicas, value: 7}]}]`),
				evenRSP},
			wantRows:     usAndSA,
			wantProblems: []string{`Warning: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0]: cluster "sa": the member runs 7 replicas, not the 3 the ReplicaSchedulingPreference scheduled: an override replaces /spec/replicas`},
		},
		{
			name: "a selector override's replicas overrider",
			docs: []string{fleet, web(`{clusters: [{name: us}, {name: sa}]}`, `[{clusterSelector: {matchLabels: {tier: dev}}, replicas: 5}]`),
				evenRSP},
			wantRows:     usAndSA,
			wantProblems: []string{`Warning: FederatedDeployment shop/web: spec.overrides[0].replicas: cluster "sa": the member runs 5 replicas, not the 3 the ReplicaSchedulingPreference scheduled: an override replaces /spec/replicas`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, tc.docs...)
			require.Len(t, rep.Objects, 1)
			o := rep.Objects[0]
			if diff := cmp.Diff(tc.wantRows, rows(o)); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantProblems, problems(o.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			require.Equal(t, tc.wantUnknown, o.Unknown)
			require.Empty(t, rep.Problems)
			for _, c := range o.Clusters {
				require.Equal(t, c.Selected, c.Manifest != nil, "cluster %s: a manifest exactly where the object goes", c.Name)
			}
		})
	}
}

// TestRunValidation: every validation error, with its field path; an override that cannot
// apply is found by rendering against every cluster, placed or not.
func TestRunValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []string
		want []string
		// manifests reports whether sync would still write the object.
		manifests bool
	}{
		{
			name:      "an override path that does not exist, on a cluster not placed",
			docs:      []string{fleet, web(`{clusters: [{name: us}]}`, `[{clusterName: sa, clusterOverrides: [{op: remove, path: /spec/paused}]}]`)},
			want:      []string{`Error: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0].path: cluster "sa": remove /spec/paused: override: path not found: no member "paused" to remove`},
			manifests: true,
		},
		{
			name:      "a selector override that does not apply to every cluster it selects",
			docs:      []string{fleet, web(`{clusters: [{name: us}]}`, `[{clusterSelector: {matchLabels: {tier: dev}}, clusterOverrides: [{path: /spec/template/spec/containers/1/image, value: "x:1"}]}]`)},
			want:      []string{`Error: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0].path: cluster "sa": replace /spec/template/spec/containers/1/image: at /spec/template/spec/containers/1: override: invalid array index: 1 is out of range (length 1)`},
			manifests: true,
		},
		{
			// Sync writes the scheduled count before the overrides, so the path exists.
			name:      "an override of the replicas of a template without replicas",
			docs:      []string{fleet, strings.Replace(web(`{clusters: [{name: us}]}`, `[{clusterName: us, clusterOverrides: [{path: /spec/replicas, value: 2}]}]`), "replicas: 4", "paused: false", 1)},
			manifests: true,
		},
		{
			name:      "an override for a cluster not in the fleet yet",
			docs:      []string{fleet, web(`{clusters: [{name: us}]}`, `[{clusterName: uk, clusterOverrides: [{op: remove, path: /spec/paused}]}]`)},
			want:      []string{`Error: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0].path: cluster "uk": remove /spec/paused: override: path not found: no member "paused" to remove`},
			manifests: true,
		},
		{
			name:      "a typed overrider naming a container the template lacks",
			docs:      []string{fleet, web(`{clusters: [{name: us}]}`, `[{clusterName: sa, containers: [{name: sidecar, args: ["-v"]}]}]`)},
			want:      []string{`Error: FederatedDeployment shop/web: spec.overrides[0].containers: cluster "sa": containers /spec/template/spec/containers: override: container not found: no container named "sidecar"`},
			manifests: true,
		},
		{
			// Every failing override is reported, not only the first that applies.
			name: "each entry that fails, when two remove the same path",
			docs: []string{fleet, web(`{clusters: [{name: us}]}`, `[{clusterSelector: {matchLabels: {tier: dev}}, clusterOverrides: [{op: remove, path: /spec/paused}]},`+
				`{clusterName: sa, clusterOverrides: [{op: remove, path: /spec/paused}]}]`)},
			want: []string{
				`Error: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0].path: cluster "sa": remove /spec/paused: override: path not found: no member "paused" to remove`,
				`Error: FederatedDeployment shop/web: spec.overrides[1].clusterOverrides[0].path: cluster "sa": remove /spec/paused: override: path not found: no member "paused" to remove`,
			},
			manifests: true,
		},
		{
			name: "an invalid object",
			docs: []string{fleet, web(`{clusters: [{name: us}, {name: us}]}`, `[{clusterName: us, clusterOverrides: [{op: move, path: /spec}]}]`)},
			want: []string{
				`Error: FederatedDeployment shop/web: spec.placement.clusters[1].name: Duplicate value: "us"`,
				`Error: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0].op: Unsupported value: "move": supported values: "add", "remove", "replace", "test"`,
				`Error: FederatedDeployment shop/web: spec.overrides[0].clusterOverrides[0].value: Required value: a value is required for op "move"`,
			},
		},
		{
			name: "an invalid preference",
			docs: []string{fleet, web(`{clusters: [{name: us}]}`, ""), webRSP(`{targetKind: FederatedDeployment, totalReplicas: 6, clusters: {us: {minReplicas: 3, maxReplicas: 1}}}`)},
			want: []string{`Error: ReplicaSchedulingPreference shop/web: spec.clusters[us].maxReplicas: Invalid value: 1: must not be less than minReplicas (3)`},
			// Sync waits for a schedule (the control plane runs it with WaitForScheduler):
			// nothing is written while the scheduler refuses the object.
			manifests: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, tc.docs...)
			o := rep.Objects[0]
			if diff := cmp.Diff(tc.want, problems(o.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			require.Equal(t, problems(o.Problems), problems(rep.Errors()), "every problem here is an error")
			has := false
			for _, c := range o.Clusters {
				has = has || c.Manifest != nil
			}
			require.Equal(t, tc.manifests, has)
		})
	}
}

// TestRunInputProblems: what belongs to no object, and input no preview can be made of.
func TestRunInputProblems(t *testing.T) {
	rep := run(t, fleet, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: bad}
spec: {apiEndpoint: "https://bad.example.com", taints: [{key: "", effect: Sometimes}]}
`, webRSP(`{targetKind: FederatedDeployment, totalReplicas: 1}`), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedWidget
metadata: {name: w, namespace: shop}
spec: {template: {}}
`)
	require.Equal(t, []string{
		`Error: Cluster bad: spec.taints[0].key: Required value: a taint key is required`,
		`Error: Cluster bad: spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
		`Warning: ReplicaSchedulingPreference shop/web: spec.targetKind: no FederatedDeployment shop/web in the input: it schedules nothing`,
	}, problems(rep.Problems))
	require.Equal(t, []string{`Error: FederatedWidget shop/w: kind: no TypeConfig has the federated kind "FederatedWidget" (add it to Input.Types)`}, problems(rep.Objects[0].Problems))

	_, err := preview.Decode([]byte(fleet + "\n---\napiVersion: core.federation.k8s.io/v1alpha1\nkind: Clutser\nmetadata: {name: web}\n"))
	require.EqualError(t, err, `preview: document 5 (Clutser web): Clutser "web" (apiVersion "core.federation.k8s.io/v1alpha1") is not a federation object a preview reads`)
	plain, err := preview.Decode([]byte(fleet + "\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"))
	require.NoError(t, err)
	require.Len(t, plain.Other, 1, "a plain object is kept, not previewed")

	in, err := preview.Decode([]byte(fleet + "\n---\n" + fleet))
	require.NoError(t, err)
	_, err = preview.Run(in)
	require.ErrorIs(t, err, preview.ErrInvalidInput)
}

// TestDecodeList: a List (kubectl get -o yaml) holds objects like separate documents.
func TestDecodeList(t *testing.T) {
	in, err := preview.Decode([]byte(`
apiVersion: v1
kind: List
items:
- {apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: a}, spec: {apiEndpoint: "https://a"}}
- {apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: c, namespace: d}, spec: {template: {data: {k: v}}}}
---
# an empty document
`))
	require.NoError(t, err)
	require.Len(t, in.Clusters, 1)
	require.Len(t, in.Objects, 1)
	require.Equal(t, "FederatedConfigMap", in.Objects[0].Kind)
}

// update is -update, which dependencies_test.go registers: a second flag.Bool("update") panics
// when the test binary starts.

// TestFailoverPlanGolden: with eu-2 down, the preview shows where each object's replicas
// go (the moves against status.schedule), the evictions that keep copies meanwhile, and
// the Scheduled message that says why eu-2 is left out.
func TestFailoverPlanGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/failover.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, err := preview.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	in.AssumeReady = true
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	in.Down = []string{"eu-2"}
	rep, err := preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	type cluster struct {
		Name     string `json:"name"`
		Selected bool   `json:"selected"`
		Rule     string `json:"rule,omitempty"`
		Why      string `json:"why,omitempty"`
		Replicas *int64 `json:"replicas,omitempty"`
	}
	type object struct {
		Name      string            `json:"name"`
		Scheduled string            `json:"scheduled"`
		Clusters  []cluster         `json:"clusters"`
		Failover  *preview.Failover `json:"failover"`
	}
	var got []object
	for _, o := range rep.Objects {
		g := object{Name: o.Name, Scheduled: o.Scheduled.Message, Failover: o.Failover}
		for _, c := range o.Clusters {
			g.Clusters = append(g.Clusters, cluster{Name: c.Name, Selected: c.Selected, Rule: c.Rule, Why: c.Why, Replicas: c.Replicas})
		}
		got = append(got, g)
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	const golden = "testdata/failover.golden.json"
	if *updateGolden {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(out)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}

	// Without Down there is no failover plan.
	in.Down = nil
	rep, err = preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Objects[0].Failover != nil {
		t.Errorf("Failover without Down: %+v", rep.Objects[0].Failover)
	}
	in.Down = []string{"mars"}
	if _, err := preview.Run(in); err == nil {
		t.Error("a Down cluster no Cluster has: no error")
	}

	// Every cluster down is a fleet disruption, the control plane's own outage: the monitor
	// would leave the taints NoSchedule, and nothing moves.
	in.Down = []string{"eu-1", "eu-2", "us-1"}
	rep, err = preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Objects {
		f := o.Failover
		if f == nil || f.Disrupted != "every cluster (3) lost" || len(f.Moves) > 0 || len(f.Evictions) > 0 {
			t.Errorf("%s: every cluster down: Failover %+v; want Disrupted and no move", o.Name, f)
		}
		if o.Scheduled.Status != "True" || !strings.Contains(o.Scheduled.Message, "NoSchedule refuses only new placements") {
			t.Errorf("%s: every cluster down: Scheduled %+v; want True, each cluster kept under NoSchedule", o.Name, o.Scheduled)
		}
	}
}
