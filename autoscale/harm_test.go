package autoscale_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// noMetricsServer makes m answer 404 for metrics.k8s.io, as a cluster without metrics-server.
func noMetricsServer(m *fake.Cluster) {
	m.SetHooks(fake.Hooks{List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		if gvr.Group == "metrics.k8s.io" {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: gvr.Group, Resource: gvr.Resource}, "")
		}
		return next.List(ctx, gvr, ns, opts)
	}})
}

// TestNoQuorumHoldsTheTotal: with two of three members cut off long enough, there is no
// majority of fresh data: the total holds whatever the third reports, ScalingActive is False
// with NoQuorum, and the Warning is recorded once, not on every pass.
func TestNoQuorumHoldsTheTotal(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	for _, m := range members {
		e.load[m] = 1200
	}
	e.setLoad(t)
	require.NoError(t, e.pass(t))
	require.NoError(t, e.Fleet.Partition("ap"))
	require.NoError(t, e.Fleet.Partition("eu"))
	e.load["us"] = 200 // idle: alone, it would scale the fleet down to the minimum
	e.setLoad(t)
	for range 4 {
		e.Clock.Step(30 * time.Second)
		require.NoError(t, e.pass(t))
		require.Equal(t, int64(6), e.total(t))
	}
	c := e.condition(t, federation.ConditionScalingActive)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, autoscale.ReasonNoQuorum, c.Reason)
	require.Contains(t, c.Message, "fresh data from 1 of 3 clusters")
	warnings := 0
	for _, ev := range e.events.take() {
		if strings.HasPrefix(ev, "Warning NoQuorum") {
			warnings++
		}
	}
	require.Equal(t, 1, warnings)
}

// TestMetricThatCannotBeComputedNeverBecomesZero: a member without metrics-server holds its
// share while the others scale theirs; when no member can report cpu the total holds (an
// HPA's FailedGetMetrics), never read as 0 replicas.
func TestMetricThatCannotBeComputedNeverBecomesZero(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	noMetricsServer(e.Member(t, "ap"))
	for _, m := range members {
		e.load[m] = 2400 // 2 pods at 120%
	}
	e.setLoad(t)
	require.NoError(t, e.pass(t))
	require.Equal(t, int64(10), e.total(t), "eu and us's 4 pods at 120% ask for 8, ap holds its 2")
	require.Contains(t, lastRescale(t, e), "ap holds 2 (not served")

	for _, m := range []string{"eu", "us"} {
		noMetricsServer(e.Member(t, m))
	}
	for _, m := range members {
		e.load[m] = 0
	}
	e.setLoad(t)
	for range 3 {
		e.Clock.Step(5 * time.Minute)
		require.NoError(t, e.pass(t))
		require.Equal(t, int64(10), e.total(t))
	}
	c := e.condition(t, federation.ConditionScalingActive)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, autoscale.ReasonInvalidMetrics, c.Reason)
	require.Contains(t, c.Message, "the total holds at 10")
}

// TestFlappingMetricsChangeDirectionAtMostOncePerWindow: the fleet's load swings between
// 7.2 and 1.2 cores every 30 seconds for fifteen minutes, a pass each swing, then stays
// low. The total goes up with the first swing and holds while the load
// flaps; it comes down once, a window after the flapping ends. In any stabilization window
// (300s) the direction changes at most once.
func TestFlappingMetricsChangeDirectionAtMostOncePerWindow(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	type change struct {
		at       time.Duration
		from, to int64
	}
	var changes []change
	last := e.total(t)
	spread := func(total int64) {
		shares := e.shares(t)
		var sum int64
		for _, n := range shares {
			sum += n
		}
		for _, m := range members {
			e.load[m] = total * shares[m] / sum
		}
		e.setLoad(t)
	}
	for i := range 46 {
		if i < 30 && i%2 == 0 {
			spread(7200)
		} else {
			spread(1200)
		}
		require.NoError(t, e.pass(t))
		if now := e.total(t); now != last {
			changes = append(changes, change{at: e.Clock.Now().Sub(t0), from: last, to: now})
			last = now
		}
		e.Clock.Step(30 * time.Second)
	}
	up := func(c change) bool { return c.to > c.from }
	var turns []time.Duration
	for i := 1; i < len(changes); i++ {
		if up(changes[i]) != up(changes[i-1]) {
			turns = append(turns, changes[i].at)
		}
	}
	for i := 1; i < len(turns); i++ {
		if turns[i]-turns[i-1] < 300*time.Second {
			t.Fatalf("the direction changed twice within a window: %v", changes)
		}
	}
	require.Equal(t, []change{{at: 0, from: 6, to: 12}, {at: 19 * time.Minute, from: 12, to: 3}}, changes,
		"up once with the first swing, down once a window after the last high (14m)")
}
