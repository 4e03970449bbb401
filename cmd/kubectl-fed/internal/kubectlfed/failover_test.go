package kubectlfed

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

// TestPrintFailoverByEvictionState: each eviction of a failover plan is printed by its state.
// A Held eviction waits for its cluster, a Released one keeps nothing: neither waits for
// replacements.
func TestPrintFailoverByEvictionState(t *testing.T) {
	deadline := metav1.NewTime(time.Date(2026, 6, 1, 0, 10, 0, 0, time.UTC))
	f := &preview.Failover{
		Down:  []string{"eu"},
		Moves: []preview.Move{{Cluster: "us", Before: 2, After: 4}},
		Evictions: []federation.Eviction{
			{Cluster: "eu", Reason: federation.EvictionTaint, Keep: 2, Deadline: &deadline},
			{Cluster: "ap", Reason: federation.EvictionTaint, Keep: 1},
			{Cluster: "sa", Reason: federation.EvictionPlacement, Keep: 3, PurgeMode: federation.PurgeNever, Release: true},
		},
	}
	var out strings.Builder
	printFailover(&out, f)
	want := `  failover with eu down:
    us: 2 -> 4 replicas
    eu keeps 2 until the replacements are ready (TaintNoExecute)
    ap keeps 1 until it is back, when the replacements are checked again (TaintNoExecute)
    sa: its copy is released, not deleted (purge mode Never; PlacementChanged)
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
