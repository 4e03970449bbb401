package conformance_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/testenv"
)

// readObjects reads every YAML document of path as an unstructured object (numbers as int64,
// as the API machinery expects).
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "---" {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(js), "%s", doc)
		out = append(out, u)
	}
}

// TestCRDsServe checks that every CRD fedkit ships is Established and served at the version
// the Go types use, both as federation.CRDs returns them and as config/crd/*.yaml has them.
func TestCRDsServe(t *testing.T) {
	c := realClient(t)
	ctx := t.Context()

	// config/crd holds the same CRDs as files for kubectl users; applying them over the
	// installed ones must be accepted too.
	files, err := filepath.Glob("../../config/crd/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var fromFiles []*apiextensionsv1.CustomResourceDefinition
	var fileNames []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.UnmarshalStrict(data, crd), f)
		fromFiles = append(fromFiles, crd)
		fileNames = append(fileNames, crd.Name)
	}
	start := time.Now()
	require.NoError(t, conformance.InstallCRDs(ctx, c, fromFiles...))
	t.Logf("install from files: %s", time.Since(start))

	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	dns, err := dnsrecord.CRDs()
	require.NoError(t, err)
	crds = append(crds, dns...)
	var names []string
	for _, crd := range crds {
		names = append(names, crd.Name)
		for _, v := range crd.Spec.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			m, err := c.RESTMapping(gvk)
			require.NoError(t, err, "%s is not served", gvk)
			require.Equal(t, federation.Version, m.Resource.Version, "%s: served version", crd.Name)
			require.Equal(t, crd.Spec.Names.Plural, m.Resource.Resource)
		}
	}
	sort.Strings(names)
	sort.Strings(fileNames)
	if diff := cmp.Diff(names, fileNames); diff != "" {
		t.Errorf("config/crd and federation.CRDs with dnsrecord.CRDs differ (-CRDs +files):\n%s", diff)
	}
	for _, gvk := range []schema.GroupVersionKind{federation.ClusterGVK, federation.ReplicaSchedulingPreferenceGVK, federation.DeploymentType.Federated} {
		_, err := c.RESTMapping(gvk)
		require.NoError(t, err, "the Go types' GVK %s must be served", gvk)
	}
	_, err = c.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err, "federation.ClusterGVR is served")
}

// TestDesignYAMLAccepted creates every object of federation/testdata/design.yaml (the shapes
// of the user's specification) and writes its status, and checks that nothing was pruned:
// what is read back is what was written, apart from server-set metadata.
func TestDesignYAMLAccepted(t *testing.T) {
	c := realClient(t)
	ctx := t.Context()
	objs := readObjects(t, "../../federation/testdata/design.yaml")
	require.NotEmpty(t, objs)
	for _, obj := range objs {
		t.Run(obj.GetKind()+"/"+obj.GetName(), func(t *testing.T) {
			m, err := c.RESTMapping(obj.GroupVersionKind())
			require.NoError(t, err)
			if ns := obj.GetNamespace(); ns != "" {
				nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
				if _, err := c.Create(ctx, conformance.NamespaceGVR, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
					require.NoError(t, err)
				}
			}
			want := obj.DeepCopy()
			created, err := c.Create(ctx, m.Resource, obj.DeepCopy())
			require.NoError(t, err, "the schema must accept the documented shape")
			if diff := cmp.Diff(want.Object["spec"], created.Object["spec"]); diff != "" {
				t.Errorf("spec was changed or pruned (-want +got):\n%s", diff)
			}
			if status, ok := want.Object["status"]; ok {
				created.Object["status"] = status
				updated, err := c.UpdateStatus(ctx, m.Resource, created)
				require.NoError(t, err, "the schema must accept the documented status")
				if diff := cmp.Diff(status, updated.Object["status"]); diff != "" {
					t.Errorf("status was changed or pruned (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestSchemaRejectsInvalid checks that the CRD schemas, not only fedkit's Go validation,
// reject malformed objects, so a bad kubectl apply fails at the API server.
func TestSchemaRejectsInvalid(t *testing.T) {
	c := realClient(t)
	ctx := t.Context()
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "schema"}}}
	if _, err := c.Create(ctx, conformance.NamespaceGVR, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	const (
		cluster = "apiVersion: core.federation.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: bad}\n"
		fed     = "apiVersion: types.federation.k8s.io/v1alpha1\nkind: FederatedDeployment\nmetadata: {name: bad, namespace: schema}\n"
		rsp     = "apiVersion: core.federation.k8s.io/v1alpha1\nkind: ReplicaSchedulingPreference\nmetadata: {name: bad, namespace: schema}\n"
	)
	tests := []struct {
		name    string
		yaml    string
		wantMsg string // part of the API server's message: the field at fault
	}{
		{"Cluster without spec.apiEndpoint", cluster + "spec: {region: eu}", "spec.apiEndpoint: Required value"},
		{"Cluster without a spec", cluster, "spec"},
		{"Cluster with an empty apiEndpoint", cluster + "spec: {apiEndpoint: ''}", "spec.apiEndpoint"},
		{"pull Cluster with an apiEndpoint", cluster + "spec: {mode: Pull, apiEndpoint: 'https://x'}", "a pull cluster holds no connection"},
		{"pull Cluster with a secretRef", cluster + "spec: {mode: Pull, secretRef: {name: creds}}", "a pull cluster holds no connection"},
		{"Cluster with a numeric apiEndpoint", cluster + "spec: {apiEndpoint: 6443}", "spec.apiEndpoint"},
		{"Cluster with zones as a string", cluster + "spec: {apiEndpoint: 'https://x', zones: eu-1a}", "spec.zones"},
		{"Cluster secretRef without a name", cluster + "spec: {apiEndpoint: 'https://x', secretRef: {}}", "spec.secretRef.name"},
		{"Cluster taint without an effect", cluster + "spec: {apiEndpoint: 'https://x', taints: [{key: k}]}", "spec.taints[0].effect"},
		{"Cluster with insecureSkipTLSVerify as a string", cluster + "spec: {apiEndpoint: 'https://x', insecureSkipTLSVerify: 'yes'}", "spec.insecureSkipTLSVerify"},
		{"FederatedDeployment with an unknown override op", fed + "spec: {template: {}, overrides: [{clusterName: a, clusterOverrides: [{op: frobnicate, path: /spec/replicas, value: 1}]}]}", "op"},
		{"FederatedDeployment override without a path", fed + "spec: {template: {}, overrides: [{clusterName: a, clusterOverrides: [{op: replace, value: 1}]}]}", "path"},
		{"FederatedDeployment with placement.clusters as a string", fed + "spec: {template: {}, placement: {clusters: a}}", "spec.placement.clusters"},
		{"FederatedDeployment with a rollout stage of 101 percent", fed + "spec: {template: {}, rollout: {stages: [{percentage: 101}]}}", "spec.rollout.stages[0].percentage"},
		{"FederatedDeployment with a rollout stage naming clusters in a string", fed + "spec: {template: {}, rollout: {stages: [{clusters: a}]}}", "spec.rollout.stages[0].clusters"},
		{"RSP without totalReplicas", rsp + "spec: {targetKind: FederatedDeployment}", "spec.totalReplicas: Required value"},
		{"RSP with totalReplicas as a word", rsp + "spec: {targetKind: FederatedDeployment, totalReplicas: nine}", "spec.totalReplicas"},
		{"RSP with a weight as a word", rsp + "spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {a: {weight: heavy}}}", "weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(tt.yaml))
			require.NoError(t, err)
			u := &unstructured.Unstructured{}
			require.NoError(t, u.UnmarshalJSON(js))
			m, err := c.RESTMapping(u.GroupVersionKind())
			require.NoError(t, err)
			_, err = c.Create(ctx, m.Resource, u)
			require.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
			require.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

// TestPrinterColumnsAndShortNames: on a real API server, `kubectl get` of a federated object
// (the Table API) shows its conditions, ready and desired replicas, the synced revision and
// the reason of the first condition that is not True; discovery lists KubeFed's short names
// (f + the target's short name: fdeploy, fsvc, fcm, ...).
func TestPrinterColumnsAndShortNames(t *testing.T) {
	realClient(t) // installs the CRDs
	env := testenv.Shared(t)
	cfg := env.Config(realCluster)
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)

	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "printer"}}}
	_, err = dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, ns, metav1.CreateOptions{})
	require.NoError(t, err)
	gvr := federation.DeploymentType.FederatedGVR()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: printer}
spec: {template: {spec: {replicas: 5}}, placement: {clusters: [{name: a}, {name: b}]}}
`), &obj.Object))
	obj, err = dyn.Resource(gvr).Namespace("printer").Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	status := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(`
observedGeneration: 1
syncedRevision: 4
conditions:
- {type: Scheduled, status: "True", reason: Scheduled, message: ok, lastTransitionTime: "2026-12-01T00:00:00Z"}
- {type: Propagated, status: "True", reason: Propagated, message: ok, lastTransitionTime: "2026-12-01T00:00:00Z"}
- {type: Ready, status: "False", reason: NotReady, message: "b: 0 of 2 ready", lastTransitionTime: "2026-12-01T00:00:00Z"}
aggregated: {replicas: 5, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 5, clusters: 2, staleClusters: 0}
`), &status))
	obj.Object["status"] = status
	_, err = dyn.Resource(gvr).Namespace("printer").UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	require.NoError(t, err)

	table := getTable(t, cfg, "/apis/"+gvr.Group+"/"+gvr.Version+"/namespaces/printer/"+gvr.Resource+"/web")
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"Name", "Scheduled", "Propagated", "Ready", "Clusters", "Ready Replicas", "Desired", "Revision", "Reason", "Age"}, names)
	require.Len(t, table.Rows, 1)
	var cells []string
	for _, c := range table.Rows[0].Cells[:len(names)-1] { // Age depends on the clock
		cells = append(cells, fmt.Sprint(c))
	}
	if diff := cmp.Diff([]string{"web", "True", "True", "False", "2", "3", "5", "4", "NotReady"}, cells); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	short := map[string][]string{}
	for _, gv := range []string{federation.TypesGroup + "/v1alpha1", federation.CoreGroup + "/v1alpha1"} {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		require.NoError(t, err)
		for _, r := range list.APIResources {
			if len(r.ShortNames) > 0 {
				short[r.Kind] = r.ShortNames
			}
		}
	}
	want := map[string][]string{
		"FederatedConfigMap": {"fcm"}, "FederatedDaemonSet": {"fds"}, "FederatedDeployment": {"fdeploy"},
		"FederatedIngress": {"fing"}, "FederatedJob": {"fjob"}, "FederatedNamespace": {"fns"},
		"FederatedPersistentVolumeClaim": {"fpvc"},
		"FederatedReplicaSet":            {"frs"}, "FederatedSecret": {"fsec"}, "FederatedService": {"fsvc"},
		"FederatedServiceAccount": {"fsa"}, "FederatedStatefulSet": {"fsts"},
		"ReplicaSchedulingPreference": {"rsp"},
		"PropagationPolicy":           {"pp"}, "ClusterPropagationPolicy": {"cpp"},
		"FederatedTypeConfig": {"ftc"},
	}
	if diff := cmp.Diff(want, short); diff != "" {
		t.Errorf("short names in discovery (-want +got):\n%s", diff)
	}
}

// getTable GETs path as a meta.k8s.io/v1 Table, as kubectl get does.
func getTable(t *testing.T, cfg *rest.Config, path string) metav1.Table {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var table metav1.Table
	require.NoError(t, json.Unmarshal(body, &table))
	return table
}

// TestValidateMemberIsTheServersRule: federation.ValidateMember, which preview and sync use to
// refuse a workload before it reaches a member, agrees with a real kube-apiserver. Each
// object is created with dryRun=All: the server refuses exactly those ValidateMember
// refuses, and names every field ValidateMember names.
func TestValidateMemberIsTheServersRule(t *testing.T) {
	env := testenv.Shared(t)
	dyn, err := dynamic.NewForConfig(env.Config(realCluster))
	require.NoError(t, err)
	const ns = "default"
	for _, tc := range []struct{ name, obj string }{
		{"valid deployment", `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a, tier: web}}, spec: {containers: [{name: a, image: a}]}}}}`},
		{"deployment without selector", `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {labels: {app: a}}, spec: {containers: [{name: a, image: a}]}}}}`},
		{"statefulset without selector", `{apiVersion: apps/v1, kind: StatefulSet, spec: {template: {spec: {containers: [{name: a, image: a}]}}}}`},
		{"daemonset with an empty selector", `{apiVersion: apps/v1, kind: DaemonSet, spec: {selector: {}, template: {spec: {containers: [{name: a, image: a}]}}}}`},
		{"replicaset whose labels do not match", `{apiVersion: apps/v1, kind: ReplicaSet, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: a, image: a}]}}}}`},
		{"deployment without containers", `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}}}}`},
		{"container without image", `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: a}]}}}}`},
		{"job with restartPolicy Always and a nameless container", `{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {restartPolicy: Always, containers: [{image: a}]}}}}`},
		{"job without selector", `{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: a}]}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(tc.obj), &u.Object))
			u.SetName("v")
			u.SetNamespace(ns)
			var ours []string
			for _, e := range federation.ValidateMember(u) {
				ours = append(ours, e.Field)
			}
			gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
			require.NoError(t, err)
			gvr := gv.WithResource(strings.ToLower(u.GetKind()) + "s")
			_, err = dyn.Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if len(ours) == 0 {
				require.NoError(t, err, "ValidateMember passes it, the server must take it")
				return
			}
			require.Error(t, err, "ValidateMember refuses it (%v), the server must too", ours)
			var status apierrors.APIStatus
			require.True(t, errors.As(err, &status) && apierrors.IsInvalid(err), "want Invalid, got %v", err)
			var theirs []string
			if d := status.Status().Details; d != nil {
				for _, c := range d.Causes {
					theirs = append(theirs, c.Field)
				}
			}
			for _, f := range ours {
				require.True(t, slices.Contains(theirs, f), "ValidateMember names %s; the server's causes are %v (%v)", f, theirs, err)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite fake/builtin_resources.txt from the real API server's discovery")

// builtinResourcesFile is the table of built-in resources the fake serves, embedded in package
// fake: what a real kube-apiserver of fedkit's Kubernetes version serves with its default
// configuration (GA versions only), as its discovery reports it.
const builtinResourcesFile = "../../fake/builtin_resources.txt"

// TestFakeServesWhatKubeServes compares the fake's table of built-in resources with the real
// API server's discovery (minus the resources of CRDs): same resources, kinds, scopes,
// subresources and verbs. Refresh the table with -update after a Kubernetes upgrade.
func TestFakeServesWhatKubeServes(t *testing.T) {
	c := realClient(t) // installs fedkit's CRDs, which the comparison must leave out
	env := testenv.Shared(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config(realCluster))
	require.NoError(t, err)
	_, lists, err := dc.ServerGroupsAndResources()
	require.NoError(t, err)

	crds, err := c.List(t.Context(), conformance.CRDGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	custom := map[schema.GroupResource]bool{}
	for _, crd := range crds.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		custom[schema.GroupResource{Group: group, Resource: plural}] = true
	}

	var lines []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		require.NoError(t, err)
		subs := map[string][]string{}
		for _, r := range l.APIResources {
			if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
				subs[parent] = append(subs[parent], sub)
			}
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || custom[schema.GroupResource{Group: gv.Group, Resource: r.Name}] {
				continue
			}
			lines = append(lines, resourceLine(l.GroupVersion, r, subs[r.Name]))
		}
	}
	slices.Sort(lines)
	got := builtinHeader + strings.Join(lines, "\n") + "\n"
	if *update {
		require.NoError(t, os.WriteFile(builtinResourcesFile, []byte(got), 0o644))
	}
	want, err := os.ReadFile(builtinResourcesFile)
	require.NoError(t, err)
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("the fake's built-in resources differ from the real API server's discovery (-fake +kube); run with -update to refresh:\n%s", diff)
	}
}

const builtinHeader = `# The built-in resources of a kube-apiserver v1.37 with its default configuration, as its
# discovery reports them: group/version, resource, kind, scope, subresources, verbs.
# Generated by test/conformance (TestFakeServesWhatKubeServes -update); do not edit.
`

func resourceLine(groupVersion string, r metav1.APIResource, subs []string) string {
	scope := "cluster"
	if r.Namespaced {
		scope = "namespaced"
	}
	slices.Sort(subs)
	sub := "-"
	if len(subs) > 0 {
		sub = strings.Join(subs, ",")
	}
	verbs := slices.Clone([]string(r.Verbs))
	slices.Sort(verbs)
	return fmt.Sprintf("%s %s %s %s %s %s", groupVersion, r.Name, r.Kind, scope, sub, strings.Join(verbs, ","))
}
