package condition_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/internal/condition"
)

func TestSet(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 500, time.UTC)
	t1 := t0.Add(time.Minute)
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: "ok"}

	conds, changed := condition.Set(nil, ready, t0)
	require.True(t, changed)
	require.Equal(t, t0.Truncate(time.Second), conds[0].LastTransitionTime.Time)

	again, changed := condition.Set(conds, ready, t1)
	require.False(t, changed, "the same condition later changes nothing")
	require.Equal(t, t0.Truncate(time.Second), again[0].LastTransitionTime.Time)

	msg := ready
	msg.Message = "still ok"
	again, changed = condition.Set(conds, msg, t1)
	require.True(t, changed)
	require.Equal(t, t0.Truncate(time.Second), again[0].LastTransitionTime.Time, "same status: the transition time stays")

	notReady := ready
	notReady.Status = metav1.ConditionFalse
	again, _ = condition.Set(conds, notReady, t1)
	require.Equal(t, t1.Truncate(time.Second), again[0].LastTransitionTime.Time)
	require.Equal(t, metav1.ConditionTrue, conds[0].Status, "the input is not changed")
}

func TestTruncate(t *testing.T) {
	require.Equal(t, "short", condition.Truncate("short", 10))
	long := strings.Repeat("é", 100) // 2 bytes each
	got := condition.Truncate(long, 51)
	require.LessOrEqual(t, len(got), 51)
	require.True(t, utf8.ValidString(got), "no split UTF-8 sequence: %q", got)
	require.True(t, strings.HasSuffix(got, " ..."))
}
