package conformance_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/testenv"
)

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
