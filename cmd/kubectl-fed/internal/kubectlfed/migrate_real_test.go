package kubectlfed

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// TestMigrateSamplesApplyReal: `kubectl fed migrate -f samples --allow-loss | kubectl apply
// -f -` on a real host with fedkit's CRDs. Every document of the output is created on the
// kube-apiserver with strict field validation, as kubectl apply sends it.
func TestMigrateSamplesApplyReal(t *testing.T) {
	e := startReal(t)
	code, out, errOut := run(t, "", "migrate", "-f", samples, "--allow-loss")
	require.Equal(t, 0, code, "stderr:\n%s", errOut)

	cfg := e.env.Config(hostName)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	for _, doc := range strings.Split(out, "\n---\n") {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
		if len(u.Object) == 0 {
			continue // the TypeConfig comments, if any
		}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err, "%s is not served", gvk)
		ri := dyn.Resource(m.Resource)
		var c dynamic.ResourceInterface = ri
		if m.Scope.Name() == "namespace" {
			ns := u.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			c = ri.Namespace(ns)
		}
		_, err = c.Create(ctx, u, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		require.NoError(t, err, "create %s %s/%s", gvk.Kind, u.GetNamespace(), u.GetName())
		n++
	}
	require.Equal(t, 13, n, "documents created")
}
