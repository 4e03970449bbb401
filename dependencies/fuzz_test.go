package dependencies_test

import (
	"encoding/json"
	"testing"

	"github.com/fedkit/fedkit/dependencies"
)

// FuzzExtractors: no template, however malformed, makes an extractor panic.
func FuzzExtractors(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"template":{"spec":{"containers":[{"name":"c","envFrom":[{"configMapRef":{"name":"a"}}]}]}}}}`,
		`{"spec":{"template":{"spec":{"volumes":[{"name":"v","projected":{"sources":[{"secret":{"name":"s"}}]}}]}}}}`,
		`{"spec":{"volumeClaimTemplates":[{"metadata":{"name":1}}],"template":{"spec":{"volumes":"x"}}}}`,
		`{"spec":{"jobTemplate":{"spec":{"template":null}}}}`,
		`{"spec":{"template":{"spec":{"serviceAccountName":7}}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var m map[string]any
		if json.Unmarshal([]byte(doc), &m) != nil {
			return
		}
		for gvk, extract := range dependencies.Builtin() {
			refs, err := extract(m)
			if err != nil && refs != nil {
				t.Errorf("%s: references with an error: %v", gvk, refs)
			}
		}
	})
}
