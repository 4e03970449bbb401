package scale_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/managertest"
)

var processArgsFlag = flag.String("scale.process.args", "", "with -scale.process, more flags for fedkit-controller-manager, space-separated (after the Deployment's, so they win): --leader-elect=false, --types=FederatedConfigMap")

var processFlag = flag.Bool("scale.process", false, "on real servers, run fedkit-controller-manager as a separate process with config/manager's Deployment args (leader election on, every type and loop, every CRD of config/crd installed), as a deployment runs it, instead of controlplane.Run inside the test process")

// startProcess is startReal's set-up for -scale.process: the host gets every CRD of
// config/crd, as `kubectl apply -k config/default` installs them, and the control plane is
// fedkit-controller-manager, run with the args of config/manager's Deployment (and the
// test's -scale flags translated to its own), reaching the host through a kubeconfig with
// the admin token (test/deploy runs it as its ServiceAccount; the rights change nothing
// here). Its metrics are scraped from its /metrics, its host writes from the host API
// server's apiserver_request_total, its CPU from /proc: it is a child of the test process.
func startProcess(t *testing.T, f *realFleet) {
	t.Helper()
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	dns, err := dnsrecord.CRDs()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, conformance.InstallCRDs(ctx, f.host, append(crds, dns...)...))
	f.createNamespace(t, f.host, "fedkit-system")
	for _, name := range memberNames {
		f.members[name] = unthrottled(t, f.env, name)
		f.env.Register(t, f.host, name, name, "fedkit-system")
	}
	kc, err := f.env.Kubeconfig()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, kc, 0o600))

	args := append(deploymentArgs(t), "--kubeconfig", path, "--host-context", hostName)
	if *workersFlag > 0 {
		w := strconv.Itoa(*workersFlag)
		args = append(args, "--sync-workers="+w, "--status-workers="+w, "--scheduler-workers="+w)
	}
	if *clusterQPSFlag > 0 {
		args = append(args, fmt.Sprintf("--sync-cluster-qps=%g", *clusterQPSFlag))
	}
	if *noSchedFlag {
		args = append(args, "--controllers=*,-scheduler")
	}
	if *hostQPSFlag != 0 {
		// The binary's limit applies to the host and to each member alike.
		args = append(args, fmt.Sprintf("--kube-api-qps=%d", *hostQPSFlag), fmt.Sprintf("--kube-api-burst=%d", max(1, 2**hostQPSFlag)))
	}
	args = append(args, strings.Fields(*processArgsFlag)...)
	f.proc = managertest.Start(t, managertest.Options{Args: args})
	t.Logf("fedkit-controller-manager %q (pid %d)", args, f.proc.Pid())
	f.proc.WaitReady(t)
	t.Cleanup(func() {
		if err := f.proc.Stop(); err != nil {
			t.Errorf("fedkit-controller-manager on SIGTERM: %v", err)
		}
	})
	f.waitMembersReady(t)
}

// deploymentArgs are the args of config/manager's Deployment.
func deploymentArgs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "manager.yaml"))
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, yaml.Unmarshal(data, &d))
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	return slices.Clone(d.Spec.Template.Spec.Containers[0].Args)
}

// gatherer is what summarize reads: the registry of the control plane in the test process,
// or the process's /metrics.
func (f *realFleet) gatherer(t *testing.T) prometheus.Gatherer {
	if f.proc == nil {
		return f.reg
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return f.proc.Scrape(t).Gather() })
}

// apiserverWriteVerbs are the verbs of apiserver_request_total that write.
var apiserverWriteVerbs = []string{"POST", "PUT", "PATCH", "DELETE", "APPLY"}

// apiserverWrites are the host API server's write requests so far, from its
// apiserver_request_total, by "VERB resource[/subresource]", every response code counted
// (conflicts too, as countingHost counts them).
func (f *realFleet) apiserverWrites(t *testing.T) map[string]float64 {
	t.Helper()
	cfg := f.env.Config(hostName)
	c, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	resp, err := c.Get(cfg.Host + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, m := range mfs["apiserver_request_total"].GetMetric() {
		l := labels(m)
		if !slices.Contains(apiserverWriteVerbs, l["verb"]) {
			continue
		}
		what := l["resource"]
		if l["subresource"] != "" {
			what += "/" + l["subresource"]
		}
		out[l["verb"]+" "+what] += m.GetCounter().GetValue()
	}
	return out
}

// markWrites records the host's writes so far: the process's count per object starts here.
func (f *realFleet) markWrites(t *testing.T) {
	if f.proc != nil {
		f.writes0 = f.apiserverWrites(t)
	}
}

// processWrites are the host writes since markWrites that are not the test's: the test's
// own creates of the n federated objects are taken off POST federatedconfigmaps.
func (f *realFleet) processWrites(t *testing.T, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range f.apiserverWrites(t) {
		if d := v - f.writes0[k]; d > 0 {
			out[k] = d
		}
	}
	out["POST federatedconfigmaps"] -= float64(n)
	return out
}

// hostTable is the host writes the control plane made during the run, per request kind and
// per object: countingHost's table (by loop) in the test process, the API server's count
// (by verb and resource) for the process.
func (f *realFleet) hostTable(t *testing.T, n int) string {
	if f.proc == nil {
		return f.counted.table(n)
	}
	var lines []string
	total := 0.0
	for k, v := range f.processWrites(t, n) {
		lines = append(lines, fmt.Sprintf("host %s: %.0f (%.2f per object)", k, v, v/float64(n)))
		total += v
	}
	slices.Sort(lines)
	lines = append(lines, fmt.Sprintf("host writes in all (leases, Clusters and namespaces included): %.0f, %.2f per object", total, total/float64(n)))
	return strings.Join(lines, "\n")
}

// perObject is countingHost.perObject for the process: its writes to the federated objects
// (their status included) and their ControllerRevisions per object, from the API server's
// count, and the Event writes about them (events, which must run first: the API server does
// not say what an Event is about), per object.
func (f *realFleet) perObject(t *testing.T, n int) (object, events float64) {
	if f.proc == nil {
		return f.counted.perObject(n)
	}
	var o float64
	for k, v := range f.processWrites(t, n) {
		_, what, _ := strings.Cut(k, " ")
		switch what {
		case "federatedconfigmaps", "federatedconfigmaps/status", "controllerrevisions":
			o += v
		}
	}
	return o / float64(n), float64(f.nsEvents) / float64(n)
}
