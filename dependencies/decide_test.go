package dependencies_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
)

var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// workload is a FederatedDeployment of namespace ns with spec.propagateDependencies, its
// pod spec podSpec (flow YAML), and more YAML for the rest (spec fields, metadata, status).
func workload(t *testing.T, ns, name, podSpec string, more ...string) dependencies.WorkloadObject {
	t.Helper()
	obj := &federation.FederatedObject{}
	doc := `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment, metadata: {name: ` + name + `, namespace: ` + ns + `},
  spec: {propagateDependencies: true, template: {spec: {template: {spec: ` + podSpec + `}}}}}`
	if err := yaml.Unmarshal([]byte(doc), obj); err != nil {
		t.Fatal(err)
	}
	for _, doc := range more {
		if err := yaml.Unmarshal([]byte(doc), obj); err != nil {
			t.Fatal(err)
		}
	}
	return dependencies.WorkloadObject{Type: federation.DeploymentType, Extract: dependencies.Builtin()[federation.DeploymentType.Target], Object: obj}
}

// scheduledTo is a status.schedule in clusters.
func scheduledTo(clusters ...string) string {
	var cs []string
	for _, c := range clusters {
		cs = append(cs, "{name: "+c+", replicas: 1}")
	}
	return `{status: {schedule: {clusters: [` + strings.Join(cs, ", ") + `]}}}`
}

// held is the loop's finalizer.
const held = `{metadata: {finalizers: [` + federation.DependenciesFinalizer + `]}}`

// object decodes a YAML object.
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func hostObject(t *testing.T, kind, name, more string) dependencies.HostObject {
	return dependencies.HostObject{Object: object(t, `{apiVersion: v1, kind: `+kind+`, metadata: {name: `+name+`, namespace: ns`+more+`}}`)}
}

// generatedCM is a FederatedConfigMap the loop generated, placed in clusters, that
// FederatedDeployments required (unless annotations, more YAML for metadata, says otherwise).
func generatedCM(t *testing.T, name, annotations string, clusters ...string) *unstructured.Unstructured {
	if !strings.Contains(annotations, "annotations:") {
		annotations += `, annotations: {` + federation.RequiredByKindsAnnotation + `: FederatedDeployment}`
	}
	var cs []string
	for _, c := range clusters {
		cs = append(cs, "{name: "+c+"}")
	}
	return object(t, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: `+name+`, namespace: ns,
  labels: {`+federation.GeneratedByLabel+`: `+federation.GeneratedByDependencies+`}`+annotations+`},
  spec: {template: {}, placement: {clusters: [`+strings.Join(cs, ", ")+`], tolerations: [{operator: Exists}]}}}`)
}

// decisionSummary is one line per decision: reads asked for, finalizers held and let go,
// each write (where a generated object is placed, a user's annotations), each condition
// change with its event, the errors and the requeue.
func decisionSummary(in dependencies.Input, d dependencies.Decision) []string {
	var out []string
	if d.Reads.Fleet {
		out = append(out, "read the Clusters")
	}
	for _, r := range d.Reads.Objects {
		out = append(out, "read "+r.String())
	}
	name := func(i int) string { return in.Workloads[i].Object.Name }
	for _, i := range d.Hold {
		out = append(out, "hold "+name(i))
	}
	for _, w := range d.Writes {
		s := fmt.Sprintf("%s %s %s", w.Verb, w.Type.Federated.Kind, w.Object.GetName())
		if w.Verb != dependencies.Delete {
			obj, _ := federation.FederatedObjectFromUnstructured(w.Object)
			var placed []string
			for _, c := range obj.Spec.Placement.Clusters {
				placed = append(placed, c.Name)
			}
			if w.Object.GetLabels()[federation.GeneratedByLabel] != "" {
				s += " in [" + strings.Join(placed, ",") + "]"
			}
			for _, k := range []string{federation.RequiredByClustersAnnotation, federation.ReleaseClustersAnnotation, federation.RequiredByKindsAnnotation} {
				if v := w.Object.GetAnnotations()[k]; v != "" {
					s += " " + strings.TrimPrefix(k, "federation.k8s.io/") + "=" + v
				}
			}
		}
		out = append(out, s)
	}
	for _, g := range d.LetGo {
		s := "let go " + name(g.Workload)
		if g.Orphaning {
			s += " (orphaning)"
		}
		out = append(out, s)
	}
	for _, c := range d.Conditions {
		s := "condition " + name(c.Workload)
		if c.Condition == nil {
			s += " removed"
		} else {
			s += fmt.Sprintf(" %s %s: %s", c.Condition.Status, c.Condition.Reason, c.Condition.Message)
		}
		if c.Event != nil {
			s += " (" + c.Event.Type + " event)"
		}
		out = append(out, s)
	}
	for _, err := range d.Errors {
		out = append(out, "error: "+err.Error())
	}
	for _, k := range d.Kept {
		out = append(out, fmt.Sprintf("keep %s %s for %s", k.Type.Federated.Kind, k.Name, strings.Join(k.Kinds, ",")))
	}
	if d.Requeue > 0 {
		out = append(out, "requeue in "+d.Requeue.String())
	}
	return out
}

// TestDecide is the table of the dependencies loop's decisions over one namespace, each row a
// rule of the package documentation.
func TestDecide(t *testing.T) {
	cfg := `{containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]}`
	for _, tc := range []struct {
		name string
		in   dependencies.Input
		want []string
	}{
		{name: "a new workload is held, and its dependency read",
			in:   dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, scheduledTo("b", "a"))}},
			want: []string{"read ConfigMap/cfg"}},
		{name: "then federated where it runs",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, scheduledTo("b", "a"))},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"hold web", "create FederatedConfigMap cfg in [a,b] required-by-kinds=FederatedDeployment",
				"condition web True DependenciesResolved: following the workload: ConfigMap/cfg"}},
		{name: "missing on the host: said, with a Warning; nothing federated",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held), workload(t, "ns", "api", cfg, scheduledTo("a"))},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": {}}},
			want: []string{"hold api",
				"condition web False DependencyMissing: not found in namespace ns: ConfigMap/cfg; the workload propagates without it, and it follows once it exists (Warning event)",
				"condition api False DependencyMissing: not found in namespace ns: ConfigMap/cfg; the workload propagates without it, and it follows once it exists (Warning event)"}},
		{name: "a read that failed leaves its dependency as it is",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, scheduledTo("a"))},
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", "", "b")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": {Err: errors.New("forbidden")}}},
			want: []string{"condition web True DependenciesResolved: following the workload: ConfigMap/cfg",
				"error: dependencies: get ConfigMap ns/cfg: forbidden"}},

		// What the pods refer to, after overrides.
		{name: "a workload with overrides needs the Clusters first",
			in:   dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, `{spec: {overrides: [{clusterName: eu, clusterOverrides: [{path: /spec/template/spec/containers/0/envFrom/0/configMapRef/name, value: cfg-eu}]}]}, status: {schedule: {clusters: [{name: eu, replicas: 1}, {name: us, replicas: 1}]}}}`)}},
			want: []string{"read the Clusters"}},
		{name: "each dependency goes where the pods that use it run",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, `{spec: {overrides: [{clusterName: eu, clusterOverrides: [{path: /spec/template/spec/containers/0/envFrom/0/configMapRef/name, value: cfg-eu}]}]}, status: {schedule: {clusters: [{name: eu, replicas: 1}, {name: us, replicas: 1}]}}}`)},
				FleetRead: true,
				Objects:   map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", ""), "ConfigMap/cfg-eu": hostObject(t, "ConfigMap", "cfg-eu", "")}},
			want: []string{"create FederatedConfigMap cfg in [us] required-by-kinds=FederatedDeployment", "create FederatedConfigMap cfg-eu in [eu] required-by-kinds=FederatedDeployment",
				"condition web True DependenciesResolved: following the workload: ConfigMap/cfg, ConfigMap/cfg-eu"}},

		// An explicit exclusion wins.
		{name: "a user's dependency is required where its workloads run, but for what its placement refuses",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, scheduledTo("a", "b"))}, FleetRead: true,
				Fleet: []federation.Cluster{cluster("a"), cluster("b")},
				Kinds: map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{object(t,
					`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: cfg, namespace: ns}, spec: {template: {}, placement: {excludeClusters: [b]}}}`)}}}},
			want: []string{"update FederatedConfigMap cfg required-by-clusters=a,b required-by-kinds=FederatedDeployment",
				"condition web False DependencyNotPlaceable: an explicit exclusion wins, so not placed where the workload runs: ConfigMap/cfg in b (ExcludeClusters: listed in spec.placement.excludeClusters) (Warning event)"}},

		// Credentials never travel.
		{name: "a Secret holding a member's credentials is refused",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", `{containers: [{name: c, envFrom: [{secretRef: {name: creds}}]}]}`, held, scheduledTo("a"))},
				Objects: map[string]dependencies.HostObject{"Secret/creds": hostObject(t, "Secret", "creds", ", labels: {"+federation.SecretClusterLabel+": a}")}},
			want: []string{"condition web False DependencyRefused: credentials never follow a workload: Secret/creds (it holds the credentials of Cluster \"a\" (label federation.k8s.io/cluster)) (Warning event)",
				"requeue in 1m0s"}},

		// A dependency leaves a cluster only after its workload's copy there is gone.
		{name: "a copy its finalizers hold keeps its dependency in that cluster",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, `{status: {schedule: {clusters: [{name: b, replicas: 1}]}, clusters: [{name: a, propagation: WaitingForRemoval}, {name: b}]}}`)},
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", "", "a", "b")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"condition web True DependenciesResolved: following the workload: ConfigMap/cfg"}},
		{name: "once it is gone, the dependency leaves",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, `{status: {schedule: {clusters: [{name: b, replicas: 1}]}, clusters: [{name: b}]}}`)},
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", "", "a", "b")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"update FederatedConfigMap cfg in [b] required-by-kinds=FederatedDeployment", "condition web True DependenciesResolved: following the workload: ConfigMap/cfg"}},
		{name: "a generated dependency still being deleted is made again once gone",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, scheduledTo("a"))},
				Kinds: map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{
					generatedCM(t, "cfg", `, deletionTimestamp: "2026-12-01T00:00:00Z", finalizers: [x]`, "a")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"condition web True DependenciesResolved: following the workload: ConfigMap/cfg", "requeue in 5s"}},

		// Claims are released, not deleted.
		{name: "a claim no workload needs stays, placed nowhere, while the host claim exists",
			in: dependencies.Input{
				Kinds:   map[string]dependencies.Federated{dependencies.KindPersistentVolumeClaim: {Type: federation.PersistentVolumeClaimType, Objects: []*unstructured.Unstructured{edit(generatedCM(t, "data", "", "eu"), "FederatedPersistentVolumeClaim")}}},
				Objects: map[string]dependencies.HostObject{"PersistentVolumeClaim/data": hostObject(t, "PersistentVolumeClaim", "data", "")}},
			want: []string{"update FederatedPersistentVolumeClaim data in []"}},
		{name: "and goes with the host claim",
			in: dependencies.Input{
				Kinds:   map[string]dependencies.Federated{dependencies.KindPersistentVolumeClaim: {Type: federation.PersistentVolumeClaimType, Objects: []*unstructured.Unstructured{edit(generatedCM(t, "data", "", "eu"), "FederatedPersistentVolumeClaim")}}},
				Objects: map[string]dependencies.HostObject{"PersistentVolumeClaim/data": {}}},
			want: []string{"delete FederatedPersistentVolumeClaim data"}},
		{name: "a ConfigMap no workload needs goes",
			in: dependencies.Input{
				Kinds: map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", "", "eu")}}}},
			want: []string{"delete FederatedConfigMap cfg"}},

		// An orphaned workload's dependencies are released.
		{name: "an orphaned workload releases its dependencies where it ran, then goes",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg,
				`{metadata: {finalizers: [`+federation.DependenciesFinalizer+`], deletionTimestamp: "2026-12-01T00:00:00Z", annotations: {`+federation.OrphanAnnotation+`: "true"}}, status: {schedule: {clusters: [{name: eu, replicas: 1}, {name: us, replicas: 1}]}}}`)},
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", "", "eu", "us")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"update FederatedConfigMap cfg in [eu,us] release-clusters=eu,us required-by-kinds=FederatedDeployment", "let go web (orphaning)",
				"condition web True DependenciesResolved: following the workload: ConfigMap/cfg"}},
		{name: "what it released stays, placed nowhere, while the host object exists",
			in: dependencies.Input{
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", `, annotations: {`+federation.ReleaseClustersAnnotation+`: "eu,us"}`, "eu", "us")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"update FederatedConfigMap cfg in [] release-clusters=eu,us"}},
		{name: "a workload deleted without the orphan annotation releases nothing",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg,
				`{metadata: {finalizers: [`+federation.DependenciesFinalizer+`], deletionTimestamp: "2026-12-01T00:00:00Z"}, status: {schedule: {clusters: [{name: eu, replicas: 1}]}}}`)},
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", "", "eu")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"let go web", "condition web True DependenciesResolved: following the workload: ConfigMap/cfg"}},
		{name: "a workload that stops propagating its dependencies is let go, its condition removed",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg,
				`{metadata: {finalizers: [`+federation.DependenciesFinalizer+`]}, spec: {propagateDependencies: false}, status: {conditions: [{type: DependenciesResolved, status: "True", reason: DependenciesResolved, message: m, lastTransitionTime: "2026-12-01T00:00:00Z"}]}}`)}},
			want: []string{"let go web", "condition web removed"}},

		// What a kind the loop does not run over required stays (a type disabled, or left
		// out of the control plane's types): its workloads may still use it.
		{name: "a ConfigMap only a kind the loop cannot see required stays as it is",
			in: dependencies.Input{
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", `, annotations: {`+federation.RequiredByKindsAnnotation+`: FederatedWidget}`, "eu")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"keep FederatedConfigMap cfg for FederatedWidget"}},
		{name: "and goes with its host object",
			in: dependencies.Input{
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", `, annotations: {`+federation.RequiredByKindsAnnotation+`: FederatedWidget}`, "eu")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": {}}},
			want: []string{"delete FederatedConfigMap cfg"}},
		{name: "one shared with such a kind is not narrowed to the workloads the loop sees",
			in: dependencies.Input{Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, scheduledTo("a"))},
				Kinds:   map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", `, annotations: {`+federation.RequiredByKindsAnnotation+`: "FederatedDeployment,FederatedWidget"}`, "a", "b")}}},
				Objects: map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"condition web True DependenciesResolved: following the workload: ConfigMap/cfg", "keep FederatedConfigMap cfg for FederatedWidget"}},
		{name: "a kind the loop runs over again is judged as any",
			in: dependencies.Input{WorkloadKinds: []string{"FederatedDeployment", "FederatedWidget"},
				Workloads: []dependencies.WorkloadObject{workload(t, "ns", "web", cfg, held, scheduledTo("a"))},
				Kinds:     map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{generatedCM(t, "cfg", `, annotations: {`+federation.RequiredByKindsAnnotation+`: "FederatedDeployment,FederatedWidget"}`, "a", "b")}}},
				Objects:   map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", "")}},
			want: []string{"update FederatedConfigMap cfg in [a] required-by-kinds=FederatedDeployment", "condition web True DependenciesResolved: following the workload: ConfigMap/cfg"}},
		{name: "a user's dependency such a kind required keeps its required clusters",
			in: dependencies.Input{
				Kinds: map[string]dependencies.Federated{dependencies.KindConfigMap: {Type: federation.ConfigMapType, Objects: []*unstructured.Unstructured{object(t,
					`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: cfg, namespace: ns, annotations: {`+federation.RequiredByClustersAnnotation+`: a, `+federation.RequiredByKindsAnnotation+`: FederatedWidget}}, spec: {template: {}}}`)}}}},
			want: []string{"keep FederatedConfigMap cfg for FederatedWidget"}},

		// Nothing of the system travels.
		{name: "a workload in a system namespace federates nothing and is let go",
			in: dependencies.Input{Namespace: "kube-system", Workloads: []dependencies.WorkloadObject{workload(t, "kube-system", "coredns", cfg, held, scheduledTo("a"))}},
			want: []string{"let go coredns",
				"condition coredns False NamespaceRefused: kube-system is a system namespace (kube-system, kube-public, kube-node-lease): nothing in it is federated, so no dependency follows a workload there (Warning event)"}},
		{name: "nor in the control plane's namespace",
			in:   dependencies.Input{Namespace: "platform", ControlPlaneNamespace: "platform", Workloads: []dependencies.WorkloadObject{workload(t, "platform", "agent", cfg, scheduledTo("a"))}},
			want: []string{"condition agent False NamespaceRefused: platform is the control plane's own namespace: nothing in it is federated, so no dependency follows a workload there (Warning event)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if in.Namespace == "" {
				in.Namespace = "ns"
			}
			in.Now = now
			if in.WorkloadKinds == nil {
				in.WorkloadKinds = []string{"FederatedDeployment"}
			}
			got, err := dependencies.Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, decisionSummary(in, got)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// edit gives a generated FederatedConfigMap another kind.
func edit(u *unstructured.Unstructured, kind string) *unstructured.Unstructured {
	u.SetKind(kind)
	return u
}

// TestDecideReadsTemplatesOnce: what a Decision that asked for reads found the workloads
// refer to, handed back as Input.References, decides as reading the templates again does.
func TestDecideReadsTemplatesOnce(t *testing.T) {
	in := dependencies.Input{Namespace: "ns", Now: now, Workloads: []dependencies.WorkloadObject{
		workload(t, "ns", "web", `{containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}, {secretRef: {name: creds}}]}]}`, scheduledTo("a")),
		workload(t, "ns", "bad", `{volumes: 3}`, scheduledTo("a")),
	}}
	first, err := dependencies.Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"read ConfigMap/cfg", "read Secret/creds"}, decisionSummary(in, first)); diff != "" {
		t.Fatalf("first Decide (-want +got):\n%s", diff)
	}
	in.Objects = map[string]dependencies.HostObject{"ConfigMap/cfg": hostObject(t, "ConfigMap", "cfg", ""), "Secret/creds": hostObject(t, "Secret", "creds", "")}
	fresh, err := dependencies.Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	in.References = first.References
	memo, err := dependencies.Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(decisionSummary(in, fresh), decisionSummary(in, memo)); diff != "" {
		t.Errorf("Decide with the References handed back (-fresh +handed back):\n%s", diff)
	}
	if !strings.Contains(strings.Join(decisionSummary(in, memo), "\n"), "condition bad False InvalidTemplate") {
		t.Errorf("Decide = %q; want bad's template InvalidTemplate", decisionSummary(in, memo))
	}
}

// cluster is a Ready Cluster named name.
func cluster(name string) federation.Cluster {
	c := federation.Cluster{}
	c.Name = name
	c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
	return c
}
