package override_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

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
