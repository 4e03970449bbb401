package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/output.txt")

// TestPolicy runs the example and compares what it prints with testdata/output.txt.
func TestPolicy(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	if *update {
		require.NoError(t, os.WriteFile("testdata/output.txt", out.Bytes(), 0o644))
	}
	want, err := os.ReadFile("testdata/output.txt")
	require.NoError(t, err)
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output changed (-want +got); run go test ./examples/policy -update if intended:\n%s", diff)
	}
}
