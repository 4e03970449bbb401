package status_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// TestMonitorWarnsBeforeCredentialsExpire: the monitor reads when a member's credentials
// expire from its client (federation.CredentialsExpiryGetter: a ServiceAccount token's exp,
// a client certificate's NotAfter) and says it in the Cluster's CredentialsExpiring
// condition: False with the time while far off; True, with a Warning, once within
// CredentialsWarning, and again once expired; False with a Normal event once renewed; gone
// when the client cannot tell. A probe that changes none of it records nothing.
func TestMonitorWarnsBeforeCredentialsExpire(t *testing.T) {
	rec := &fake.Recorder{}
	e := newMonitorEnv(t, status.MonitorOptions{Events: rec, CredentialsWarning: 24 * time.Hour}, "eu")
	member, _ := e.fleet.Member("eu")
	member.SetCredentialsExpiry(t0.Add(72 * time.Hour))
	check := func(want metav1.Condition, events ...string) {
		t.Helper()
		e.probe(t, "eu")
		got := conditionOf(e.cluster(t, "eu"), federation.ConditionCredentialsExpiring)
		got.LastTransitionTime, got.ObservedGeneration = metav1.Time{}, 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("condition (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(events, eventStrings(rec)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	}
	cond := func(st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: federation.ConditionCredentialsExpiring, Status: st, Reason: reason, Message: msg}
	}
	const renew = ": renew them (kubectl fed join the cluster again, or put a new token in its Secret)"

	valid := cond(metav1.ConditionFalse, status.ReasonCredentialsValid, "the credentials of the Cluster's Secret expire at 2026-12-03T12:00:00Z")
	check(valid)
	e.clock.Step(47 * time.Hour)
	check(valid)

	e.clock.Step(time.Hour)
	expiring := cond(metav1.ConditionTrue, status.ReasonCredentialsExpiring, "the credentials of the Cluster's Secret expire at 2026-12-03T12:00:00Z, in less than 24h"+renew)
	check(expiring, "Warning Cluster eu CredentialsExpiring: "+expiring.Message)
	e.clock.Step(time.Hour)
	check(expiring)

	e.clock.Step(23 * time.Hour)
	expired := cond(metav1.ConditionTrue, status.ReasonCredentialsExpired, "the credentials of the Cluster's Secret expired at 2026-12-03T12:00:00Z"+renew)
	check(expired, "Warning Cluster eu CredentialsExpired: "+expired.Message)

	member.SetCredentialsExpiry(t0.Add(30 * 24 * time.Hour))
	renewed := cond(metav1.ConditionFalse, status.ReasonCredentialsValid, "the credentials of the Cluster's Secret expire at 2026-12-30T12:00:00Z")
	check(renewed, "Normal Cluster eu CredentialsValid: "+renewed.Message)

	member.SetCredentialsExpiry(time.Time{})
	check(metav1.Condition{})
}
