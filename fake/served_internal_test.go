package fake

import (
	"strings"
	"testing"
)

// TestBuiltinResourcesParse: every line of builtin_resources.txt becomes a served resource
// (builtinServed skips malformed lines rather than fail a constructor).
func TestBuiltinResourcesParse(t *testing.T) {
	want := 0
	for _, line := range strings.Split(builtinResources, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			want++
		}
	}
	if got := len(builtinServed()); got != want || want < 60 {
		t.Fatalf("builtinServed() has %d resources; want the %d lines of builtin_resources.txt", got, want)
	}
}
