package preview_test

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/preview"
)

// TestOneFixtureFeedsApplyAndPreview: the manifests of a repository, with the Namespace that
// fake.Apply needs first and a plain ConfigMap, are applied to a fake host and previewed
// as they are.
func TestOneFixtureFeedsApplyAndPreview(t *testing.T) {
	data, err := os.ReadFile("testdata/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.NewHost("host").Apply(string(data)); err != nil {
		t.Fatalf("fake.Apply: %v", err)
	}
	in, err := preview.Decode(data)
	if err != nil {
		t.Fatalf("preview.Decode: %v", err)
	}
	var other []string
	for _, u := range in.Other {
		other = append(other, u.GetKind()+" "+u.GetName())
	}
	if diff := cmp.Diff([]string{"Namespace shop", "ConfigMap settings"}, other); diff != "" {
		t.Errorf("Input.Other (-want +got):\n%s", diff)
	}
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rep, err := preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Objects) != 1 || len(rep.Objects[0].Problems) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("want one object without problems, got %+v", rep)
	}
	if c := rep.Objects[0].Clusters; len(c) != 1 || !c[0].Selected {
		t.Errorf("want web placed in eu, got %+v", c)
	}
}
