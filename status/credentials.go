package status

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// renewAdvice ends the message of a CredentialsExpiring condition that is True.
const renewAdvice = ": renew them (kubectl fed join the cluster again, or put a new token in its Secret)"

// credentialsExpiry asks the member's client when its credentials expire. client is false
// when the ClusterSet has no client for the cluster (nothing is known, the condition stays
// as it is); ok is false when the client cannot tell (or they do not expire).
func (m *ClusterMonitor) credentialsExpiry(name string) (at time.Time, ok, client bool) {
	c, err := m.clusters.Client(name)
	if err != nil {
		return time.Time{}, false, false
	}
	if g, isGetter := c.(federation.CredentialsExpiryGetter); isGetter {
		at, ok = g.CredentialsExpiry()
	}
	return at, ok, true
}

// credentialsCondition is the CredentialsExpiring condition of credentials that expire at
// at, seen at now, warning warn ahead (its LastTransitionTime now).
func credentialsCondition(at, now time.Time, warn time.Duration) metav1.Condition {
	c := metav1.Condition{Type: federation.ConditionCredentialsExpiring, LastTransitionTime: metav1.NewTime(now)}
	when := at.UTC().Format(time.RFC3339)
	switch {
	case !now.Before(at):
		c.Status, c.Reason = metav1.ConditionTrue, ReasonCredentialsExpired
		c.Message = "the credentials of the Cluster's Secret expired at " + when + renewAdvice
	case at.Sub(now) <= warn:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonCredentialsExpiring
		c.Message = fmt.Sprintf("the credentials of the Cluster's Secret expire at %s, in less than %s%s", when, shortDuration(warn), renewAdvice)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonCredentialsValid
		c.Message = "the credentials of the Cluster's Secret expire at " + when
	}
	return c
}

// setCredentials brings the CredentialsExpiring condition of conds in line with credentials
// expiring at at (ok false: the client cannot tell, and the condition goes). It returns
// whether conds changed, and the condition to record as an event: one that turned True or
// changed reason (expiring, then expired), or turned False again (renewed); never the first
// False of a cluster, nor a pass that changes nothing.
func setCredentials(conds *[]metav1.Condition, at time.Time, ok bool, now time.Time, warn time.Duration) (changed bool, event *metav1.Condition) {
	old := meta.FindStatusCondition(*conds, federation.ConditionCredentialsExpiring)
	if !ok {
		return meta.RemoveStatusCondition(conds, federation.ConditionCredentialsExpiring), nil
	}
	c := credentialsCondition(at, now, warn)
	if old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return false, nil
	}
	if (old == nil && c.Status == metav1.ConditionTrue) || (old != nil && old.Reason != c.Reason) {
		event = &c
	}
	meta.SetStatusCondition(conds, c) // keeps the transition time while the status stays
	return true, event
}

// shortDuration is d as time.Duration prints it, without the zero minutes and seconds: 168h,
// 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
