package dependencies_test

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// events records events as "Type Reason: message".
type events struct {
	mu   gosync.Mutex
	list []string
}

func (e *events) Eventf(_ runtime.Object, typ, reason, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, typ+" "+reason+": "+fmt.Sprintf(format, args...))
}

// TestRefusedDeleteIsAWarningAndALaterLook: the workload stops referring to its ConfigMap, so
// the generated FederatedConfigMap goes; the embedder's gate refuses every delete in ns. It
// stays, a Warning names it and the invariant, and the pass is no error retried with backoff:
// it comes back after gate.RecheckAfter.
func TestRefusedDeleteIsAWarningAndALaterLook(t *testing.T) {
	ctx := context.Background()
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: ns}, data: {level: info}}`)
	workloadWith(t, e.Host, "web", `          containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]`, "a")
	frozen := gate.Invariant{Name: "frozen-ns", Check: func(w gate.Write) string {
		if w.Verb == gate.Delete && w.Object.GetNamespace() == "ns" {
			return "ns is frozen"
		}
		return ""
	}}
	rec := &events{}
	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{
		Clock: e.Clock, Events: rec, Gate: gate.New(gate.Options{Invariants: []gate.Invariant{frozen}}),
	})
	require.NoError(t, err)
	key := federation.Key{Namespace: "ns"}
	_, err = d.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = e.Host.Peek(federation.ConfigMapType.FederatedGVR(), "ns", "cfg")
	require.NoError(t, err, "generated")

	fedtest.Apply(t, e.Host, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: ns}
spec:
  propagateDependencies: true
  template: {spec: {template: {spec: {containers: [{name: c}]}}}}`)
	res, err := d.Reconcile(ctx, key)
	require.NoError(t, err, "a refusal is no error to retry with backoff")
	require.Equal(t, gate.RecheckAfter, res.RequeueAfter)
	_, err = e.Host.Peek(federation.ConfigMapType.FederatedGVR(), "ns", "cfg")
	require.NoError(t, err, "the gate refused its delete")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.list, 1, "%v", rec.list)
	require.True(t, strings.HasPrefix(rec.list[0], "Warning "+gate.ReasonRefused+": delete federatedconfigmaps.types.federation.k8s.io ns/cfg in the host: ns is frozen (invariant frozen-ns)"), rec.list[0])
}
