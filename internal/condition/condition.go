package condition

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMessage bounds a condition message, well below the API's 32768 bytes: a status lists
// several conditions, and a message that names every cluster of a large fleet must not
// crowd them out.
const MaxMessage = 4096

// Set returns a copy of conds with cond set: its lastTransitionTime is kept when its status
// did not change, and now otherwise (to the second, as the API stores it). changed reports
// whether anything of the condition differs from what conds held.
func Set(conds []metav1.Condition, cond metav1.Condition, now time.Time) (out []metav1.Condition, changed bool) {
	out = append([]metav1.Condition(nil), conds...)
	if prev := meta.FindStatusCondition(out, cond.Type); prev != nil && prev.Status == cond.Status {
		cond.LastTransitionTime = prev.LastTransitionTime
	} else {
		cond.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	}
	changed = meta.SetStatusCondition(&out, cond)
	return out, changed
}

// Truncate cuts s to at most max bytes on a UTF-8 boundary, marking the cut with " ...".
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len(" ...")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut-- // do not split a UTF-8 sequence
	}
	return strings.TrimSpace(s[:cut]) + " ..."
}
