package scale_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// summarize is where a run's time went, from the control plane's own metrics: per loop and
// outcome the passes and their mean duration, per work queue the adds and the mean wait and
// work times, and the member requests by verb and result.
func summarize(t testing.TB, reg prometheus.Gatherer) string {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var lines []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := labels(m)
			switch mf.GetName() {
			case "fedkit_reconcile_duration_seconds":
				h := m.GetHistogram()
				lines = append(lines, fmt.Sprintf("pass %s/%s %s: %d, mean %.1fms", l["loop"], l["type"], l["outcome"], h.GetSampleCount(), mean(h)))
			case "workqueue_queue_duration_seconds":
				h := m.GetHistogram()
				lines = append(lines, fmt.Sprintf("queue %s: %d waits, mean %.1fms", l["name"], h.GetSampleCount(), mean(h)))
			case "workqueue_work_duration_seconds":
				h := m.GetHistogram()
				lines = append(lines, fmt.Sprintf("work %s: %d, mean %.1fms", l["name"], h.GetSampleCount(), mean(h)))
			case "fedkit_member_requests_total":
				lines = append(lines, fmt.Sprintf("member %s %s %s %s: %.0f", l["loop"], l["cluster"], l["verb"], l["result"], m.GetCounter().GetValue()))
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func mean(h *dto.Histogram) float64 {
	if h.GetSampleCount() == 0 {
		return 0
	}
	return 1000 * h.GetSampleSum() / float64(h.GetSampleCount())
}
