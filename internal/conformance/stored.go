package conformance

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// storedBehaviours: what a real server makes of a built-in object as it stores it. It decodes
// the object into its Go type and encodes that, so resource quantities come back in their
// canonical form (cpu: 1 as "1", 0.5 as "500m", 1000m as "1"), fields left empty
// that the type omits when empty are gone, and a Secret's stringData is merged into its data. A loop that compares what it wrote with what it
// reads must expect both, or it writes forever.
func storedBehaviours() []behaviour {
	return []behaviour{
		{"stored/quantities-are-canonical", func(t *testing.T, e *env) {
			d := deployment(e.ns, "quantities", 1)
			setContainer(t, d, "resources", map[string]any{
				"requests": map[string]any{"cpu": 0.5, "memory": "512Mi", "ephemeral-storage": "2000m"},
				"limits":   map[string]any{"cpu": int64(1), "memory": "1Gi", "ephemeral-storage": "1000M"},
			})
			created := e.create(t, DeploymentGVR, d)
			want := map[string]any{
				"requests": map[string]any{"cpu": "500m", "memory": "512Mi", "ephemeral-storage": "2"},
				"limits":   map[string]any{"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1G"},
			}
			for what, u := range map[string]*unstructured.Unstructured{"create": created, "get": e.get(t, DeploymentGVR, e.ns, "quantities")} {
				if diff := cmp.Diff(want, container(t, u)["resources"]); diff != "" {
					t.Errorf("%s: resources (-want +got):\n%s", what, diff)
				}
			}

			setContainer(t, created, "resources", map[string]any{"requests": map[string]any{"cpu": 2.0, "memory": "0.5Gi"}})
			updated := e.update(t, DeploymentGVR, created)
			if diff := cmp.Diff(map[string]any{"requests": map[string]any{"cpu": "2", "memory": "512Mi"}}, container(t, updated)["resources"]); diff != "" {
				t.Errorf("update: resources (-want +got):\n%s", diff)
			}
		}},
		{"stored/empty-fields-are-dropped", func(t *testing.T, e *env) {
			d := deployment(e.ns, "empties", 0)
			set(t, d, false, "spec", "paused")
			set(t, d, map[string]any{}, "spec", "template", "spec", "nodeSelector")
			set(t, d, "", "spec", "template", "spec", "serviceAccountName")
			set(t, d, false, "spec", "template", "spec", "hostNetwork")
			setContainer(t, d, "args", []any{})
			setContainer(t, d, "env", []any{})
			setContainer(t, d, "workingDir", "")
			created := e.create(t, DeploymentGVR, d)
			for what, u := range map[string]*unstructured.Unstructured{"create": created, "get": e.get(t, DeploymentGVR, e.ns, "empties")} {
				for _, path := range [][]string{
					{"spec", "paused"},
					{"spec", "template", "spec", "nodeSelector"},
					{"spec", "template", "spec", "serviceAccountName"},
					{"spec", "template", "spec", "hostNetwork"},
				} {
					if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); found {
						t.Errorf("%s: %v is stored as %#v; want it dropped", what, path, v)
					}
				}
				c := container(t, u)
				for _, f := range []string{"args", "env", "workingDir"} {
					if v, found := c[f]; found {
						t.Errorf("%s: container %s is stored as %#v; want it dropped", what, f, v)
					}
				}
				// A pointer field keeps its zero value: replicas 0 is not "unset".
				if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); !found || v != int64(0) {
					t.Errorf("%s: spec.replicas = %#v (found %v); want 0", what, v, found)
				}
			}

			cm := configMap(e.ns, "empty-data", nil, nil)
			set(t, cm, map[string]any{}, "data")
			set(t, cm, map[string]any{}, "metadata", "labels")
			stored := e.create(t, ConfigMapGVR, cm)
			for _, path := range [][]string{{"data"}, {"metadata", "labels"}} {
				if v, found, _ := unstructured.NestedFieldNoCopy(stored.Object, path...); found {
					t.Errorf("ConfigMap: %v is stored as %#v; want it dropped", path, v)
				}
			}
		}},
		{"stored/secret-string-data-merges-into-data", func(t *testing.T, e *env) {
			// A Secret's stringData is write-only: the server merges it into data (base64),
			// each key of stringData replacing the same key of data, and never stores it.
			// So what a loop reads back from a Secret it wrote has data only.
			b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
			s := secret(e.ns, "string-data")
			set(t, s, map[string]any{"kept": b64("1"), "replaced": b64("old")}, "data")
			set(t, s, map[string]any{"replaced": "new", "added": "3"}, "stringData")
			created := e.create(t, SecretGVR, s)
			want := map[string]any{"kept": b64("1"), "replaced": b64("new"), "added": b64("3")}
			for what, u := range map[string]*unstructured.Unstructured{"create": created, "get": e.get(t, SecretGVR, e.ns, "string-data")} {
				if diff := cmp.Diff(want, u.Object["data"]); diff != "" {
					t.Errorf("%s: data (-want +got):\n%s", what, diff)
				}
				if v, found := u.Object["stringData"]; found {
					t.Errorf("%s: stringData is stored as %#v; want it merged into data and dropped", what, v)
				}
			}

			set(t, created, map[string]any{"kept": "updated"}, "stringData")
			updated := e.update(t, SecretGVR, created)
			want["kept"] = b64("updated")
			if diff := cmp.Diff(want, updated.Object["data"]); diff != "" {
				t.Errorf("update: data (-want +got):\n%s", diff)
			}
			if v, found := updated.Object["stringData"]; found {
				t.Errorf("update: stringData is stored as %#v; want it merged into data and dropped", v)
			}

			patched, err := e.c.Patch(e.ctx, SecretGVR, e.ns, "string-data", types.MergePatchType, []byte(`{"stringData":{"added":"patched"}}`))
			require.NoError(t, err)
			want["added"] = b64("patched")
			if diff := cmp.Diff(want, patched.Object["data"]); diff != "" {
				t.Errorf("merge patch: data (-want +got):\n%s", diff)
			}
			if v, found := patched.Object["stringData"]; found {
				t.Errorf("merge patch: stringData is stored as %#v; want it merged into data and dropped", v)
			}
		}},
		{"stored/unknown-fields-are-dropped-with-a-warning", unknownFieldsDropped},
	}
}

// unknownFieldsDropped: a field the Go type does not have is dropped, and the answer warns
// about it (field validation "Warn", the server's default for requests that do not ask for
// another), on a create and an update alike. The warnings reach the request's handler
// (federation.WithWarningHandler) in the server's words; a write without such a field has
// none.
func unknownFieldsDropped(t *testing.T, e *env) {
	var warnings []string
	ctx := federation.WithWarningHandler(e.ctx, func(w string) { warnings = append(warnings, w) })
	d := deployment(e.ns, "typo", 1)
	setContainer(t, d, "imagePullPolicyy", "Always")
	created, err := e.c.Create(ctx, DeploymentGVR, d)
	require.NoError(t, err)
	if diff := cmp.Diff([]string{`unknown field "spec.template.spec.containers[0].imagePullPolicyy"`}, warnings); diff != "" {
		t.Errorf("create: warnings (-want +got):\n%s", diff)
	}
	if _, found := container(t, created)["imagePullPolicyy"]; found {
		t.Errorf("create: the unknown field is stored")
	}

	warnings = nil
	set(t, created, "x", "spec", "strategyy")
	updated, err := e.c.Update(ctx, DeploymentGVR, created)
	require.NoError(t, err)
	if diff := cmp.Diff([]string{`unknown field "spec.strategyy"`}, warnings); diff != "" {
		t.Errorf("update: warnings (-want +got):\n%s", diff)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(updated.Object, "spec", "strategyy"); found {
		t.Errorf("update: the unknown field is stored")
	}

	warnings = nil
	_, err = e.c.Create(ctx, DeploymentGVR, deployment(e.ns, "no-typo", 1))
	require.NoError(t, err)
	if len(warnings) != 0 {
		t.Errorf("a write without unknown fields warned: %q", warnings)
	}
}

// container returns the first container of a Deployment.
func container(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatalf("%s has no containers", u.GetName())
	}
	c, _ := cs[0].(map[string]any)
	return c
}

// setContainer sets field of a Deployment's first container.
func setContainer(t *testing.T, u *unstructured.Unstructured, field string, value any) {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatalf("%s has no containers", u.GetName())
	}
	cs[0].(map[string]any)[field] = value
	set(t, u, cs, "spec", "template", "spec", "containers")
}
