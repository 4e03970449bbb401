package override_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// webInput is a Deployment rendered for cluster eu-1 with a selector and a named override.
func webInput(t testing.TB) override.Input {
	t.Helper()
	tmpl := obj(t, deployment).Object
	delete(tmpl, "apiVersion")
	delete(tmpl, "kind")
	var overrides []federation.ClusterOverride
	require.NoError(t, yaml.Unmarshal([]byte(`
- clusterSelector: {matchLabels: {region: eu}}
  images: [{registry: mirror.eu}]
  labels: {set: {region: eu}}
- clusterName: eu-1
  containers: [{name: app, env: [{name: A, value: b}]}]
  clusterOverrides: [{op: add, path: /spec/template/spec/containers/0/args/-, value: --eu}]
`), &overrides))
	replicas := int64(4)
	return override.Input{
		Key:           federation.Key{Namespace: "prod", Name: "web"},
		Template:      tmpl,
		Overrides:     overrides,
		Type:          federation.DeploymentType,
		ClusterName:   "eu-1",
		ClusterLabels: map[string]string{"region": "eu"},
		Replicas:      &replicas,
		Revision:      3,
	}
}

func hashOf(t testing.TB, in override.Input) string {
	t.Helper()
	out, err := override.Render(in)
	require.NoError(t, err)
	return out.GetAnnotations()[federation.DesiredHashAnnotation]
}

// TestDesiredHash checks what the hash covers: the federation's intent, not the member's
// fields, and not the revision.
func TestDesiredHash(t *testing.T) {
	base := webInput(t)
	created, err := override.Render(base)
	require.NoError(t, err)
	h := created.GetAnnotations()[federation.DesiredHashAnnotation]
	require.Regexp(t, `^v2:[0-9a-f]{32}$`, h)

	// What the member owns does not change the hash.
	member := created.DeepCopy()
	member.SetResourceVersion("991")
	member.SetLabels(map[string]string{"added-by-member": "x"})
	member.SetFinalizers([]string{"example.com/f"})
	require.NoError(t, unstructured.SetNestedField(member.Object, int64(17), "spec", "replicas"))
	withMember := base
	withMember.Existing = member
	withMember.RetainReplicas = true
	out, err := override.Render(withMember)
	require.NoError(t, err)
	require.Equal(t, h, out.GetAnnotations()[federation.DesiredHashAnnotation], "member-owned fields changed the hash")
	require.Equal(t, int64(17), out.Object["spec"].(map[string]any)["replicas"])
	require.Equal(t, "x", out.GetLabels()["added-by-member"])

	// Neither does the revision.
	rev := base
	rev.Revision = 4
	require.Equal(t, h, hashOf(t, rev))

	// What the federation wants does.
	changes := map[string]func(in *override.Input){
		"schedule": func(in *override.Input) { r := int64(5); in.Replicas = &r },
		"template": func(in *override.Input) { in.Template["spec"].(map[string]any)["minReadySeconds"] = int64(5) },
		"cluster":  func(in *override.Input) { in.ClusterLabels = nil },
		"name":     func(in *override.Input) { in.Key.Name = "web2" },
		"type":     func(in *override.Input) { in.Type = federation.StatefulSetType },
		"overrides": func(in *override.Input) {
			in.Overrides = append([]federation.ClusterOverride(nil), in.Overrides...)
			in.Overrides[1].ClusterOverrides = nil
		},
	}
	for name, change := range changes {
		in := webInput(t)
		change(&in)
		require.NotEqual(t, h, hashOf(t, in), "changing the %s did not change the hash", name)
	}
}

// TestRenderDoesNotMutateInputs renders with every input set and compares the inputs with
// snapshots taken before. Then it scribbles over the result and checks Existing, Overrides
// and ClusterLabels again, which catches a result sharing maps or slices with them. The
// result does share unchanged subtrees with Template (copy-on-write, documented), so
// scribbling over it reaches the template, and a DeepCopy of it does not.
func TestRenderDoesNotMutateInputs(t *testing.T) {
	snap := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	for _, withExisting := range []bool{false, true} {
		in := webInput(t)
		if withExisting {
			existing, err := override.Render(in)
			require.NoError(t, err)
			existing.SetResourceVersion("5")
			in.Existing = existing.DeepCopy()
			in.RetainReplicas = true
		}
		var existing any
		if in.Existing != nil {
			existing = in.Existing.Object
		}
		tmpl, others := snap(in.Template), snap([]any{in.Overrides, in.ClusterLabels, existing, *in.Replicas})
		out, err := override.Render(in)
		require.NoError(t, err)
		require.Equal(t, tmpl, snap(in.Template), "Render changed the template")
		require.Equal(t, others, snap([]any{in.Overrides, in.ClusterLabels, existing, *in.Replicas}), "Render changed an input")

		scribble(out.DeepCopy().Object)
		require.Equal(t, tmpl, snap(in.Template), "a DeepCopy of the result shares memory with the template")
		scribble(out.Object)
		require.Equal(t, others, snap([]any{in.Overrides, in.ClusterLabels, existing, *in.Replicas}), "the result shares memory with Existing, Overrides or ClusterLabels")
	}
}

// scribble changes every value of v in place.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scribble(e)
			x[k] = "scribbled"
		}
		x["scribbled"] = true
	case []any:
		for i, e := range x {
			scribble(e)
			x[i] = "scribbled"
		}
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name    string
		change  func(in *override.Input)
		wantErr error
		wantMsg string
	}{
		{
			name: "an operation names object, cluster, op and path",
			change: func(in *override.Input) {
				in.Overrides = []federation.ClusterOverride{{ClusterName: "eu-1", ClusterOverrides: ops(t, `[{op: remove, path: /spec/paused}]`)}}
			},
			wantErr: override.ErrPathNotFound,
			wantMsg: `override: render Deployment prod/web: cluster "eu-1": remove /spec/paused: override: path not found: no member "paused" to remove`,
		},
		{
			name: "an identity override",
			change: func(in *override.Input) {
				in.Overrides = []federation.ClusterOverride{{ClusterName: "eu-1", ClusterOverrides: ops(t, `[{path: /metadata/namespace, value: other}]`)}}
			},
			wantErr: override.ErrIdentityPath,
			wantMsg: `override: render Deployment prod/web: cluster "eu-1": replace /metadata/namespace: override: path identifies the object and cannot be overridden`,
		},
		{
			name: "cluster named twice",
			change: func(in *override.Input) {
				in.Overrides = []federation.ClusterOverride{{ClusterName: "eu-1"}, {ClusterName: "eu-1"}}
			},
			wantErr: override.ErrInvalidOverride,
			wantMsg: `override: render Deployment prod/web for cluster "eu-1": override: invalid override: cluster "eu-1" is named by overrides[0] and overrides[1]`,
		},
		{name: "no name", change: func(in *override.Input) { in.Key.Name = "" }, wantErr: override.ErrInvalidInput},
		{name: "no namespace for a namespaced type", change: func(in *override.Input) { in.Key.Namespace = "" }, wantErr: override.ErrInvalidInput},
		{name: "incomplete type", change: func(in *override.Input) { in.Type = federation.TypeConfig{} }, wantErr: override.ErrInvalidInput},
		{
			name:    "metadata of the wrong shape",
			change:  func(in *override.Input) { in.Template = map[string]any{"metadata": "x"} },
			wantErr: override.ErrPathNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := webInput(t)
			tc.change(&in)
			_, err := override.Render(in)
			require.ErrorIs(t, err, tc.wantErr)
			if tc.wantMsg != "" {
				require.Equal(t, tc.wantMsg, err.Error())
			}
			var pe *override.PathError
			if errors.As(err, &pe) && tc.wantMsg != "" {
				require.Equal(t, "eu-1", pe.Cluster)
			}
		})
	}
}

func TestRendererRetainers(t *testing.T) {
	_, err := override.New(override.Options{Retainers: override.Retainers{{}: {nil}}})
	require.ErrorIs(t, err, override.ErrInvalidInput)

	// An embedder keeps a field its own controller sets in the member.
	rs := override.DefaultRetainers()
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	rs[gk] = append(rs[gk], func(desired *override.Target, existing *unstructured.Unstructured) error {
		if v, ok, _ := unstructured.NestedString(existing.Object, "spec", "paused"); ok {
			return desired.Set(v, "spec", "paused")
		}
		return nil
	})
	r, err := override.New(override.Options{Retainers: rs})
	require.NoError(t, err)
	in := webInput(t)
	in.Existing = obj(t, `{metadata: {resourceVersion: "8"}, spec: {paused: "yes"}}`)
	out, err := r.Render(in)
	require.NoError(t, err)
	require.Equal(t, "yes", out.Object["spec"].(map[string]any)["paused"])
	require.Equal(t, "8", out.GetResourceVersion())

	// An empty table retains nothing, not even the resourceVersion.
	r, err = override.New(override.Options{Retainers: override.Retainers{}})
	require.NoError(t, err)
	out, err = r.Render(in)
	require.NoError(t, err)
	require.Empty(t, out.GetResourceVersion())
}

// TestRetainDeclared: a kind's type configuration names fields the member owns
// (KindRules.Retain); each the member has is kept over the template, overrides still win,
// and a field the member lacks is the template's.
func TestRetainDeclared(t *testing.T) {
	typ := federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "")
	typ.Rules = &federation.KindRules{Retain: []string{"spec.endpoint", "spec.port", "spec.absent"}}
	in := override.Input{
		Key:         federation.Key{Namespace: "ns", Name: "w"},
		Type:        typ,
		ClusterName: "eu",
		Template:    map[string]any{"spec": map[string]any{"color": "blue", "endpoint": "template", "absent": "mine"}},
		Existing:    obj(t, `{metadata: {resourceVersion: "3"}, spec: {color: red, endpoint: 10.0.0.7, port: 8443}}`),
		Overrides:   []federation.ClusterOverride{{ClusterName: "eu", ClusterOverrides: []federation.OverrideOp{{Op: "add", Path: "/spec/port", Value: mustRaw(t, 9000)}}}},
	}
	out, err := override.Render(in)
	require.NoError(t, err)
	spec := out.Object["spec"].(map[string]any)
	require.Equal(t, "blue", spec["color"], "a field not retained is the template's")
	require.Equal(t, "10.0.0.7", spec["endpoint"], "a retained field is the member's")
	require.EqualValues(t, 9000, spec["port"], "an override wins over a retained field")
	require.Equal(t, "mine", spec["absent"], "a retained field the member lacks is the template's")
}

// FuzzRender: arbitrary templates, existing objects and operations never make Render panic,
// and a failure is an error wrapping one of the package's sentinels.
func FuzzRender(f *testing.F) {
	f.Add([]byte(`{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"a","image":"nginx"}]}}}}`), []byte(`{"metadata":{"resourceVersion":"1","labels":{"x":"y"}},"spec":{"replicas":5}}`),
		[]byte(`[{"op":"add","path":"/spec/x","value":1}]`), "mirror.io", true)
	f.Add([]byte(`{"metadata":{"labels":"bad"}}`), []byte(`null`), []byte(`[{"path":"/metadata/labels/a","value":"b"}]`), "", false)
	f.Fuzz(func(t *testing.T, tmplJSON, existingJSON, opsJSON []byte, registry string, retain bool) {
		var tmpl, existing map[string]any
		if utiljson.Unmarshal(tmplJSON, &tmpl) != nil {
			return
		}
		_ = utiljson.Unmarshal(existingJSON, &existing)
		var rawOps []federation.OverrideOp
		_ = json.Unmarshal(opsJSON, &rawOps)
		replicas := int64(3)
		in := override.Input{
			Key:            federation.Key{Namespace: "ns", Name: "n"},
			Template:       tmpl,
			RetainReplicas: retain,
			Type:           federation.DeploymentType,
			ClusterName:    "c",
			Replicas:       &replicas,
			Overrides: []federation.ClusterOverride{
				{ClusterSelector: &metav1LabelSelectorAll, Images: []federation.ImageOverride{{Registry: registry}}, Labels: &federation.MapOverride{Set: map[string]string{"a": "b"}}},
				{ClusterName: "c", ClusterOverrides: rawOps},
			},
		}
		if existing != nil {
			in.Existing = &unstructured.Unstructured{Object: existing}
		}
		before, _ := json.Marshal([]any{tmpl, existing})
		_, err := override.Render(in)
		after, _ := json.Marshal([]any{tmpl, existing})
		if string(before) != string(after) {
			t.Fatalf("Render changed its inputs")
		}
		if err != nil {
			for _, s := range []error{override.ErrInvalidImage, override.ErrContainerNotFound, override.ErrPathNotFound, override.ErrInvalidIndex,
				override.ErrTestFailed, override.ErrInvalidPath, override.ErrIdentityPath, override.ErrUnsupportedOp, override.ErrMissingValue,
				override.ErrInvalidValue, override.ErrInvalidOverride, override.ErrInvalidInput} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
	})
}

var metav1LabelSelectorAll = metav1.LabelSelector{}

func TestInputFor(t *testing.T) {
	var fed federation.FederatedObject
	require.NoError(t, yaml.Unmarshal([]byte(`{metadata: {name: a, namespace: b}, spec: {retainReplicas: true, template: {spec: {x: 1}}, overrides: [{clusterName: c, replicas: 1}]}}`), &fed))
	in := override.InputFor(&fed, federation.DeploymentType)
	if diff := cmp.Diff(federation.Key{Namespace: "b", Name: "a"}, in.Key); diff != "" {
		t.Error(diff)
	}
	require.True(t, in.RetainReplicas)
	require.Len(t, in.Overrides, 1)
	require.Equal(t, int64(1), in.Template["spec"].(map[string]any)["x"])
}

var update = flag.Bool("update", false, "rewrite override/testdata/*.out.yaml from the current output")

// goldenInput is the shape of testdata/*.in.yaml: a federated object rendered for a list of
// clusters, each with its labels, scheduled replicas and existing member object.
type goldenInput struct {
	// Type is a built-in target kind ("Deployment"), or empty when CustomType is set.
	Type       string `json:"type"`
	CustomType *struct {
		Group, Version, Kind, Resource string
		Namespaced                     bool
		ReplicasPath                   string
	} `json:"customType"`
	Revision  int64                      `json:"revision"`
	Federated federation.FederatedObject `json:"federated"`
	Clusters  []struct {
		Name     string            `json:"name"`
		Labels   map[string]string `json:"labels"`
		Replicas *int64            `json:"replicas"`
		Existing json.RawMessage   `json:"existing"`
	} `json:"clusters"`
}

func (g *goldenInput) typeConfig(t *testing.T) federation.TypeConfig {
	if c := g.CustomType; c != nil {
		return federation.NewTypeConfig(schema.GroupVersionKind{Group: c.Group, Version: c.Version, Kind: c.Kind}, c.Resource, c.Namespaced, c.ReplicasPath)
	}
	typ, ok := federation.BuiltinTypeFor(g.Type)
	require.True(t, ok, "unknown type %q", g.Type)
	return typ
}

// TestRenderGolden renders testdata/*.in.yaml and compares with *.out.yaml. Run
// `go test ./override -run TestRenderGolden -update` to rewrite the outputs after a change,
// then review the diff.
func TestRenderGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.in.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			var in goldenInput
			require.NoError(t, yaml.UnmarshalStrict(data, &in))
			typ := in.typeConfig(t)
			fedBefore := in.Federated.DeepCopy()
			var docs []string
			var members []override.Member
			var singles []*unstructured.Unstructured
			var singleErrs []string
			for _, c := range in.Clusters {
				input := override.InputFor(&in.Federated, typ)
				input.ClusterName, input.ClusterLabels = c.Name, c.Labels
				input.Replicas, input.Revision = c.Replicas, in.Revision
				var existingBefore map[string]any
				if len(c.Existing) > 0 {
					var m map[string]any
					require.NoError(t, utiljson.Unmarshal(c.Existing, &m))
					input.Existing = &unstructured.Unstructured{Object: m}
					existingBefore = input.Existing.DeepCopy().Object
				}
				doc := "# cluster: " + c.Name + "\n"
				out, err := override.Render(input)
				members = append(members, override.Member{Name: c.Name, Labels: c.Labels, Replicas: c.Replicas, Existing: input.Existing})
				singles = append(singles, out)
				singleErrs = append(singleErrs, fmt.Sprint(err))
				if err != nil {
					doc += "error: " + err.Error() + "\n"
				} else {
					b, err := yaml.Marshal(out.Object)
					require.NoError(t, err)
					doc += string(b)
				}
				docs = append(docs, doc)
				if input.Existing != nil {
					if diff := cmp.Diff(existingBefore, input.Existing.Object); diff != "" {
						t.Errorf("Render changed the existing object (-before +after):\n%s", diff)
					}
				}
			}
			// RenderMembers renders all clusters at once and must agree with Render.
			var r override.Renderer
			batch := override.InputFor(&in.Federated, typ)
			batch.Revision = in.Revision
			for i, got := range r.RenderMembers(batch, members) {
				require.Equal(t, singleErrs[i], fmt.Sprint(got.Err), "RenderMembers error for %s", members[i].Name)
				if got.Err == nil {
					if diff := cmp.Diff(singles[i].Object, got.Object.Object); diff != "" {
						t.Errorf("RenderMembers differs from Render for %s (-Render +RenderMembers):\n%s", members[i].Name, diff)
					}
				}
			}
			if diff := cmp.Diff(fedBefore, &in.Federated); diff != "" {
				t.Errorf("Render changed the federated object (-before +after):\n%s", diff)
			}
			got := strings.Join(docs, "---\n")
			golden := strings.TrimSuffix(file, ".in.yaml") + ".out.yaml"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./override -run TestRenderGolden -update")
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// Finalizers the template set are tracked like its labels and annotations: removed from the
// template, they are removed from the member; the member's own finalizers stay.
func TestRenderDropsFinalizersTheTemplateNoLongerSets(t *testing.T) {
	render := func(t *testing.T, fins []string, existing *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		in := webInput(t)
		in.Template = (&unstructured.Unstructured{Object: in.Template}).DeepCopy().Object
		u := &unstructured.Unstructured{Object: in.Template}
		u.SetFinalizers(fins)
		in.Existing = existing
		out, err := override.Render(in)
		require.NoError(t, err)
		return out
	}
	// member is what a cluster holds after a render of before: the render, with the member's
	// own finalizers added after the federation's, and with the managed list dropped when the
	// render is an older one's, which did not track finalizers.
	member := func(t *testing.T, before []string, own []string, untracked bool) *unstructured.Unstructured {
		m := render(t, before, nil)
		m.SetFinalizers(append(m.GetFinalizers(), own...))
		m.SetResourceVersion("7")
		if untracked {
			a := m.GetAnnotations()
			delete(a, federation.ManagedFinalizersAnnotation)
			m.SetAnnotations(a)
		}
		return m
	}
	cases := []struct {
		name           string
		before, after  []string
		own            []string
		untracked      bool
		want           []string
		wantAnnotation string
	}{
		{name: "removed from the template", before: []string{"example.com/a"}, own: []string{"member.io/m"},
			want: []string{"member.io/m"}},
		{name: "one of two removed", before: []string{"example.com/b", "example.com/a"}, after: []string{"example.com/b"}, own: []string{"member.io/m"},
			want: []string{"example.com/b", "member.io/m"}, wantAnnotation: "example.com/b"},
		{name: "all gone", before: []string{"example.com/a"}, want: nil},
		{name: "added", after: []string{"example.com/a"}, own: []string{"member.io/m"},
			want: []string{"member.io/m", "example.com/a"}, wantAnnotation: "example.com/a"},
		{name: "kept", before: []string{"example.com/a"}, after: []string{"example.com/a"},
			want: []string{"example.com/a"}, wantAnnotation: "example.com/a"},
		{name: "untracked member: nothing is known to be the federation's", before: []string{"example.com/a"}, own: []string{"member.io/m"}, untracked: true,
			want: []string{"example.com/a", "member.io/m"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := render(t, c.after, member(t, c.before, c.own, c.untracked))
			if diff := cmp.Diff(c.want, out.GetFinalizers()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			got, ok := out.GetAnnotations()[federation.ManagedFinalizersAnnotation]
			require.Equal(t, c.wantAnnotation, got)
			require.Equal(t, c.wantAnnotation != "", ok, "the list is absent when the template sets none")
		})
	}
	first := render(t, []string{"example.com/b", "example.com/a", "example.com/b"}, nil)
	require.Equal(t, "example.com/a,example.com/b", first.GetAnnotations()[federation.ManagedFinalizersAnnotation], "sorted, each once")
}

func mustRaw(t *testing.T, v any) *federation.RawValue {
	t.Helper()
	r, err := federation.NewRawValue(v)
	require.NoError(t, err)
	return r
}
