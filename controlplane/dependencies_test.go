package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
)

var (
	configMapGVR = federation.ConfigMapType.TargetGVR()
	secretGVR    = federation.SecretType.TargetGVR()
)

// depsEnv runs a control plane for Deployments and their dependency kinds.
func depsEnv(t *testing.T) (*env, func() error) {
	t.Helper()
	e := newEnv(t)
	o := e.options(federation.DeploymentType, federation.ConfigMapType, federation.SecretType, federation.ServiceAccountType, federation.PersistentVolumeClaimType)
	o.Dependencies.CacheSyncTimeout = 2 * time.Minute
	o.Disable.DNS = true
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	return e, run(cp)
}

// workload is a FederatedDeployment with propagateDependencies, placed in clusters, whose pod
// reads the ConfigMap config (a volume) and the Secret secret (envFrom).
func workload(name, config, secret string, clusters ...string) string {
	refs := make([]string, len(clusters))
	for i, c := range clusters {
		refs[i] = "{name: " + c + "}"
	}
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: ` + name + `, namespace: default}
spec:
  propagateDependencies: true
  template:
    spec:
      replicas: 1
      selector: {matchLabels: {app: ` + name + `}}
      template:
        metadata: {labels: {app: ` + name + `}}
        spec:
          containers:
          - name: app
            image: "nginx:1.27"
            envFrom: [{secretRef: {name: ` + secret + `}}]
          volumes: [{name: config, configMap: {name: ` + config + `}}]
  placement: {clusters: [` + strings.Join(refs, ", ") + `]}
`
}

func nativeDoc(kind, name, key, value string) string {
	field := "data"
	return `{apiVersion: v1, kind: ` + kind + `, metadata: {name: ` + name + `, namespace: default}, ` + field + `: {` + key + `: "` + value + `"}}`
}

// in returns the clusters (of eu, us) that hold default/name of gvr.
func (e *env) in(gvr schema.GroupVersionResource, name string) []string {
	return e.holding(gvr, "default", name, nil)
}

// holding returns the clusters (of eu, us) that hold namespace/name of gvr, those keep
// accepts when it is set.
func (e *env) holding(gvr schema.GroupVersionResource, namespace, name string, keep func(*unstructured.Unstructured) bool) []string {
	var out []string
	for _, c := range []string{"eu", "us"} {
		m, _ := e.fleet.Member(c)
		if u, err := m.Peek(gvr, namespace, name); err == nil && (keep == nil || keep(u)) {
			out = append(out, c)
		}
	}
	return out
}

func (e *env) where(gvr schema.GroupVersionResource, name string) string {
	return strings.Join(e.in(gvr, name), ",")
}

func (e *env) conditionMessage(gvr schema.GroupVersionResource, name, typ string) string {
	u, err := e.host.Peek(gvr, "default", name)
	if err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

// TestDependenciesFollowWorkloads: a Deployment's ConfigMap and Secret go where it goes,
// move with it, widen to a second workload's clusters, narrow when it leaves, and the host
// ConfigMap is the truth for the members' copies.
func TestDependenciesFollowWorkloads(t *testing.T) {
	e, stop := depsEnv(t)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	deployments := federation.DeploymentType.FederatedGVR()
	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "shared", "level", "info"))
	create(t, e.host, secretGVR, nativeDoc("Secret", "web-token", "token", "c2VjcmV0"))
	create(t, e.host, deployments, workload("web", "shared", "web-token", "eu"))

	all := func(want string) func() bool {
		return func() bool {
			return e.where(federation.DeploymentType.TargetGVR(), "web") == want && e.where(configMapGVR, "shared") == want && e.where(secretGVR, "web-token") == want
		}
	}
	seen := func() string {
		return "deployment in " + e.where(federation.DeploymentType.TargetGVR(), "web") + ", configmap in " + e.where(configMapGVR, "shared") + ", secret in " + e.where(secretGVR, "web-token")
	}
	stepUntilf(t, e.clock, time.Second, func() string { return "the Deployment with its ConfigMap and Secret in eu: " + seen() }, all("eu"))
	fcm, err := e.host.Peek(federation.ConfigMapType.FederatedGVR(), "default", "shared")
	require.NoError(t, err)
	require.Equal(t, federation.GeneratedByDependencies, fcm.GetLabels()[federation.GeneratedByLabel])
	stepUntil(t, e.clock, time.Second, "DependenciesResolved True", func() bool {
		return e.condition(deployments, "web", federation.ConditionDependenciesResolved) == "True"
	})

	// A placement change moves all three.
	u, err := e.host.Get(ctx, deployments, "default", "web")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "us"}}, "spec", "placement", "clusters"))
	_, err = e.host.Update(ctx, deployments, u)
	require.NoError(t, err)
	stepUntilf(t, e.clock, time.Second, func() string { return "all three moved to us: " + seen() }, all("us"))

	// A second workload sharing the ConfigMap widens it; deleting it narrows it again.
	create(t, e.host, secretGVR, nativeDoc("Secret", "api-token", "token", "YXBp"))
	create(t, e.host, deployments, workload("api", "shared", "api-token", "eu"))
	stepUntilf(t, e.clock, time.Second, func() string { return "the ConfigMap widened to eu,us: " + seen() }, func() bool {
		return e.where(configMapGVR, "shared") == "eu,us" && e.where(secretGVR, "api-token") == "eu" && e.where(secretGVR, "web-token") == "us"
	})
	require.NoError(t, e.host.Delete(ctx, deployments, "default", "api", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string { return "the ConfigMap narrowed to us: " + seen() }, func() bool {
		_, err := e.host.Peek(federation.SecretType.FederatedGVR(), "default", "api-token")
		return e.where(configMapGVR, "shared") == "us" && e.where(secretGVR, "api-token") == "" && err != nil
	})

	// Editing the host ConfigMap flows to the member.
	cm, err := e.host.Get(ctx, configMapGVR, "default", "shared")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(cm.Object, "debug", "data", "level"))
	_, err = e.host.Update(ctx, configMapGVR, cm)
	require.NoError(t, err)
	us, _ := e.fleet.Member("us")
	stepUntil(t, e.clock, time.Second, "the member ConfigMap has the host's new data", func() bool {
		m, err := us.Peek(configMapGVR, "default", "shared")
		if err != nil {
			return false
		}
		v, _, _ := unstructured.NestedString(m.Object, "data", "level")
		return v == "debug"
	})
}

// TestDependencyMissing: a Secret the host does not have is a condition and an event naming
// it; the workload still propagates, and once the Secret exists it follows and the condition
// turns True.
func TestDependencyMissing(t *testing.T) {
	e, stop := depsEnv(t)
	defer func() { require.NoError(t, stop()) }()
	deployments := federation.DeploymentType.FederatedGVR()
	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "cfg", "a", "b"))
	create(t, e.host, deployments, workload("web", "cfg", "absent", "eu", "us"))
	stepUntilf(t, e.clock, time.Second, func() string {
		return "DependenciesResolved False naming Secret/absent, the Deployment propagated: " + e.conditionMessage(deployments, "web", federation.ConditionDependenciesResolved)
	}, func() bool {
		return e.condition(deployments, "web", federation.ConditionDependenciesResolved) == "False" &&
			strings.Contains(e.conditionMessage(deployments, "web", federation.ConditionDependenciesResolved), "Secret/absent") &&
			e.where(federation.DeploymentType.TargetGVR(), "web") == "eu,us" && e.where(configMapGVR, "cfg") == "eu,us"
	})
	stepUntil(t, e.clock, time.Second, "a DependencyMissing event", func() bool {
		for _, ev := range e.hostEvents(t) {
			if ev.Reason == dependencies.ReasonDependencyMissing && strings.Contains(ev.Message, "Secret/absent") && ev.InvolvedObject.Name == "web" {
				return true
			}
		}
		return false
	})
	create(t, e.host, secretGVR, nativeDoc("Secret", "absent", "k", "dg=="))
	stepUntil(t, e.clock, time.Second, "the Secret followed and the condition is True", func() bool {
		return e.where(secretGVR, "absent") == "eu,us" && e.condition(deployments, "web", federation.ConditionDependenciesResolved) == "True"
	})
}

// TestHandFederatedDependency: a ConfigMap the user federated keeps its own clusters and
// spec, and gains the clusters of the workloads that need it.
func TestHandFederatedDependency(t *testing.T) {
	e, stop := depsEnv(t)
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()
	fcmGVR := federation.ConfigMapType.FederatedGVR()
	create(t, e.host, fcmGVR, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: mine, namespace: default}
spec:
  template: {data: {owner: me}}
  placement: {clusters: [{name: eu}]}
`)
	create(t, e.host, secretGVR, nativeDoc("Secret", "tok", "k", "dg=="))
	create(t, e.host, federation.DeploymentType.FederatedGVR(), workload("web", "mine", "tok", "us"))
	stepUntilf(t, e.clock, time.Second, func() string { return "the user's ConfigMap in eu and us: " + e.where(configMapGVR, "mine") }, func() bool {
		return e.where(configMapGVR, "mine") == "eu,us"
	})
	u, err := e.host.Get(ctx, fcmGVR, "default", "mine")
	require.NoError(t, err)
	require.Equal(t, "us", u.GetAnnotations()[federation.RequiredByClustersAnnotation])
	require.Empty(t, u.GetLabels()[federation.GeneratedByLabel], "the user's object is not taken over")
	clusters, _, _ := unstructured.NestedSlice(u.Object, "spec", "placement", "clusters")
	require.Equal(t, []any{map[string]any{"name": "eu"}}, clusters, "the user's placement is not rewritten")

	// The workload goes: the user's ConfigMap keeps its own cluster only.
	require.NoError(t, e.host.Delete(ctx, federation.DeploymentType.FederatedGVR(), "default", "web", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string { return "the user's ConfigMap back to eu: " + e.where(configMapGVR, "mine") }, func() bool {
		return e.where(configMapGVR, "mine") == "eu"
	})
}

// TestDependenciesLoopRunsForWorkloads: the loop runs when a type of Types is a workload it
// can read, and not when none is or when it is disabled.
func TestDependenciesLoopRunsForWorkloads(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		types   []federation.TypeConfig
		disable bool
		want    bool
	}{
		{"a workload type", []federation.TypeConfig{federation.DeploymentType}, false, true},
		{"no workload type", []federation.TypeConfig{federation.ConfigMapType, federation.ServiceType}, false, false},
		{"disabled", []federation.TypeConfig{federation.DeploymentType}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := e.options(tc.types...)
			o.Disable.Dependencies = tc.disable
			cp, err := controlplane.New(e.host, e.fleet, o)
			require.NoError(t, err)
			_, runs := states(cp)[controlplane.DependenciesLoop]
			require.Equal(t, tc.want, runs)
		})
	}
}

// TestDependenciesWithoutAWorkloadCRD: a host without the FederatedJob CRD runs the
// dependencies loop over the workload types it serves, says which it runs without (Status,
// logged once), and picks Jobs up at the retry after their CRD is installed.
func TestDependenciesWithoutAWorkloadCRD(t *testing.T) {
	e := newEnv(t)
	e.deleteCRD(t, jobs)
	o := e.options(federation.DeploymentType, jobs, federation.ConfigMapType, federation.SecretType, federation.ServiceAccountType, federation.PersistentVolumeClaimType)
	o.Dependencies.CacheSyncTimeout = 2 * time.Minute
	o.Disable.DNS = true
	logs := &logSink{}
	o.Logger = logs.logger()
	cp, err := controlplane.New(e.host, e.fleet, o)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()

	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "shared", "level", "info"))
	create(t, e.host, secretGVR, nativeDoc("Secret", "web-token", "token", "c2VjcmV0"))
	create(t, e.host, federation.DeploymentType.FederatedGVR(), workload("web", "shared", "web-token", "eu"))
	stepUntilf(t, e.clock, time.Second, func() string { return "the Deployment's ConfigMap in eu: " + e.where(configMapGVR, "shared") }, func() bool {
		return e.where(configMapGVR, "shared") == "eu"
	})
	l := loopStatus(t, cp, controlplane.DependenciesLoop)
	require.Equal(t, controlplane.StateRunning, l.State, l.Err)
	require.ErrorIs(t, l.Partial, controlplane.ErrNotServed)
	require.ErrorContains(t, l.Partial, "federatedjobs.types.federation.k8s.io")
	require.NotContains(t, l.Partial.Error(), "federateddeployments")

	// Retries while the CRD stays missing are not logged again.
	stepUntil(t, e.clock, 30*time.Second, "two more failed checks of the Job loops", func() bool {
		return loopStatus(t, cp, "sync/FederatedJob").Failures >= 3
	})
	require.Equal(t, 1, logs.count("Running without", "federatedjobs", `"loop"="dependencies"`), logs)

	// The CRD is installed: the next check restarts the loop with Jobs.
	e.installCRD(t, jobs)
	create(t, e.host, configMapGVR, nativeDoc("ConfigMap", "migrations", "v", "1"))
	create(t, e.host, jobs.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedJob
metadata: {name: migrate, namespace: default}
spec:
  propagateDependencies: true
  template:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: m, image: "busybox"}]
          volumes: [{name: m, configMap: {name: migrations}}]
  placement: {clusters: [{name: us}]}
`)
	stepUntilf(t, e.clock, 5*time.Second, func() string {
		return "the Job's ConfigMap in us: " + e.where(configMapGVR, "migrations") + "; " + logs.String()
	}, func() bool {
		return e.where(configMapGVR, "migrations") == "us" && e.where(jobs.TargetGVR(), "migrate") == "us"
	})
	l = loopStatus(t, cp, controlplane.DependenciesLoop)
	require.Equal(t, controlplane.StateRunning, l.State, l.Err)
	require.NoError(t, l.Partial)
	require.Equal(t, "eu", e.where(configMapGVR, "shared"))
}
