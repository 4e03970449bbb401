package fedtest_test

import (
	"testing"

	"github.com/fedkit/fedkit/internal/fedtest"
)

// BenchmarkNew is what every test that builds an Env pays: the host with fedkit's CRDs, three
// registered members, a namespace.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		fedtest.New(b, fedtest.Options{Namespaces: []string{"production"}, Members: []fedtest.Member{{Name: "aws"}, {Name: "gcp"}, {Name: "azure"}}})
	}
}
