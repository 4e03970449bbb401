package conformance_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/testenv"
)

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
