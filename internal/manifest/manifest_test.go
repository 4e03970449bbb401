package manifest_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/manifest"
)

const stream = `# a comment
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: web, namespace: shop}
spec:
  template: {data: {anything: goes, here: [1]}}
  palcement:
    clusters: [{name: a}]
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: api, namespace: shop}
spec:
  overrides:
  - clusterName: a
    clusterOverrides: [{op: add, path: /data/x, value: 1, vaule: 2}]
`

// TestDecodeNamesDocumentLineAndField: an unknown field is an error naming the document
// (index, kind, namespace/name), the line of the stream and the field's path; the template
// stays free-form.
func TestDecodeNamesDocumentLineAndField(t *testing.T) {
	docs, err := manifest.Split([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		var o federation.FederatedObject
		err := d.Decode(&o)
		if !errors.Is(err, manifest.ErrUnknownField) {
			t.Errorf("%s: want ErrUnknownField, got %v", d, err)
		}
		got = append(got, err.Error())
	}
	want := []string{
		`document 1 (FederatedConfigMap shop/web), line 7: unknown field "spec.palcement" (a FederatedConfigMap has no such field)`,
		`document 2 (FederatedConfigMap shop/api), line 16: unknown field "spec.overrides[0].clusterOverrides[0].vaule" (a FederatedConfigMap has no such field)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestSplitRefusesDuplicateKeys: two documents without "---" between them are one mapping
// with every top-level key twice, which YAML decoders resolve silently (the last wins).
func TestSplitRefusesDuplicateKeys(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{{
		name: "missing separator",
		in: `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
`,
		want: `document 2 (ConfigMap c), line 8: duplicate key "apiVersion" (first at line 5): is a "---" line missing between two documents?`,
	}, {
		name: "nested",
		in: `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  labels: {x: "1"}
  labels: {y: "2"}
`,
		want: `document 1 (ConfigMap a), line 6: duplicate key "metadata.labels" (first at line 5)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Split([]byte(tc.in))
			if !errors.Is(err, manifest.ErrDuplicateKey) {
				t.Fatalf("want ErrDuplicateKey, got %v", err)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestListItemsAreDecodedStrictly: the items of a List are checked too, each named by its
// List's document and its index.
func TestListItemsAreDecodedStrictly(t *testing.T) {
	docs, err := manifest.Split([]byte(`apiVersion: v1
kind: List
items:
- apiVersion: core.federation.k8s.io/v1alpha1
  kind: Cluster
  metadata: {name: a}
  spec: {apiEndpoint: "https://a", secretRef: {name: a}, regoin: x}
`))
	if err != nil {
		t.Fatal(err)
	}
	items, err := docs[0].Items()
	if err != nil || len(items) != 1 {
		t.Fatalf("items: %v %v", items, err)
	}
	var c federation.Cluster
	err = items[0].Decode(&c)
	want := `document 1 items[0] (Cluster a), line 7: unknown field "spec.regoin" (a Cluster has no such field)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
