package soak_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/test/soak"
)

// tiny is a soak small enough to run several times in a test.
func tiny(seed uint64) soak.Config {
	return soak.Config{Seed: seed, Clusters: 3, Objects: 10, Steps: 4, Skip: skipped()}
}

func TestScriptDependsOnTheSeedOnly(t *testing.T) {
	a, err := soak.NewScript(tiny(7))
	require.NoError(t, err)
	b, err := soak.NewScript(tiny(7))
	require.NoError(t, err)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("the same seed gave two scripts (-first +second):\n%s", diff)
	}
	c, err := soak.NewScript(tiny(8))
	require.NoError(t, err)
	require.NotEqual(t, a, c, "another seed, the same script")
}

// A deterministic soak replays exactly: the same seed makes the same writes, round for round.
func TestSoakReplaysExactly(t *testing.T) {
	t.Parallel()
	run := func() soak.Result {
		res, err := soak.Run(context.Background(), tiny(3), soak.Loops)
		require.NoError(t, err)
		require.Empty(t, res.Violations)
		return res
	}
	first, second := run(), run()
	first.Elapsed, second.Elapsed = 0, 0
	if diff := cmp.Diff(first, second, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Config.Logf" }, cmp.Ignore())); diff != "" {
		t.Errorf("two runs of seed 3 differ (-first +second):\n%s", diff)
	}
}

// sabotaged wraps fedkit's loops with a fault of the test's making.
type sabotaged struct {
	inner soak.ControlPlane
	w     *soak.World
	round func(ctx context.Context, s *sabotaged) error
}

func (s *sabotaged) Round(ctx context.Context) error { return s.round(ctx, s) }
func (s *sabotaged) Run(ctx context.Context) error   { return s.inner.Run(ctx) }

// The checks can fail: a control plane that does nothing, one that touches an object no
// federation manages, and one that never stops writing are each caught, and named.
func TestSoakCatchesBrokenControlPlanes(t *testing.T) {
	t.Parallel()
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name  string
		round func(ctx context.Context, s *sabotaged) error
		want  string
	}{{
		name:  "idle",
		round: func(context.Context, *sabotaged) error { return nil },
		want:  "absent there",
	}, {
		name: "meddler",
		round: func(ctx context.Context, s *sabotaged) error {
			m, _ := s.w.Fleet.Member(s.w.Fleet.Names()[0])
			for _, o := range m.Objects(configMaps) {
				if o.GetName() == "foreign-settings" {
					_ = unstructured.SetNestedField(o.Object, "mine now", "data", "owner")
					_, _ = m.Update(ctx, configMaps, o)
				}
			}
			return s.inner.Round(ctx)
		},
		want: "not this federation's",
	}, {
		name: "chatty",
		round: func(ctx context.Context, s *sabotaged) error {
			for _, o := range s.w.Host.Objects(configMaps) {
				_, _ = s.w.Host.Update(ctx, configMaps, o) // unchanged: stores nothing, but is a write
			}
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"generateName": "chatter-", "namespace": "default"}}}
			_, _ = s.w.Host.Create(ctx, configMaps, cm)
			return s.inner.Round(ctx)
		},
		want: "still writing",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			factory := func(w *soak.World) (soak.ControlPlane, error) {
				inner, err := soak.Loops(w)
				return &sabotaged{inner: inner, w: w, round: tc.round}, err
			}
			cfg := tiny(1)
			cfg.MaxRounds = 20
			res, err := soak.Run(context.Background(), cfg, factory)
			require.NoError(t, err)
			require.True(t, contains(res.Violations, tc.want), "no violation mentions %q:\n%s", tc.want, lines(res.Violations))
		})
	}
}

func contains(list []soak.Violation, sub string) bool {
	for _, v := range list {
		if strings.Contains(v.String(), sub) {
			return true
		}
	}
	return false
}

// lines is the violations, one a line (without the replay command each repeats).
func lines(list []soak.Violation) string {
	var out []string
	for _, v := range list {
		v.Replay = ""
		out = append(out, v.String())
	}
	return strings.Join(out, "\n")
}
