package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/internal/metrics"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "fedkit_test_total", Help: "test"}
	first, err := metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	require.NoError(t, err)
	second, err := metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	require.NoError(t, err)
	require.Same(t, first, second, "a second loop shares the first one's collector")

	_, err = metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"other"}))
	require.Error(t, err, "the same name with other labels is refused")

	c := prometheus.NewCounter(opts)
	got, err := metrics.Register(nil, c)
	require.NoError(t, err)
	require.Same(t, c, got, "nil registers nothing")
}
