package autoscale_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// TestScaleUpUnderLoad: the members' pods run at 90% of a 60% cpu target; the autoscaler
// writes the fleet's new total to the preference's status, the scheduler divides it with the
// preference's weights, an Event and the ScalingActive condition say why; when the load
// settles at the target nothing more is written.
func TestScaleUpUnderLoad(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	require.Equal(t, map[string]int64{"ap": 2, "eu": 2, "us": 2}, e.shares(t))
	for _, m := range members {
		e.load[m] = 1800 // 2 pods at 90%
	}
	e.setLoad(t)

	require.NoError(t, e.pass(t))
	require.Equal(t, int64(9), e.total(t))
	require.Equal(t, map[string]int64{"ap": 3, "eu": 3, "us": 3}, e.shares(t), "the scheduler divides the autoscaler's total")
	const why = "6 -> 9: cpu 90% of 60% over 6 ready pods in 3 of 3 clusters"
	require.Equal(t, []string{"Normal SuccessfulRescale: " + why}, e.events.take())
	active := e.condition(t, federation.ConditionScalingActive)
	require.Equal(t, metav1.ConditionTrue, active.Status)
	require.Equal(t, "cpu 90% of 60% over 6 ready pods in 3 of 3 clusters", active.Message)
	st := e.rsp(t).Status.Autoscale
	require.Equal(t, int32(6), st.CurrentReplicas, "what the members ran when they were read")
	require.Equal(t, t0, st.LastScaleTime.Time.UTC())

	// The same load over 9 pods is 60%: within the tolerance, the total holds.
	e.Clock.Step(15 * time.Second)
	require.NoError(t, e.pass(t))
	require.Equal(t, int64(9), e.total(t))
	require.Empty(t, e.events.take())
	e.Host.ClearActions()
	e.Clock.Step(15 * time.Second)
	require.NoError(t, e.pass(t))
	for _, a := range e.Host.Actions() {
		if a.Verb == fake.VerbUpdateStatus && a.Resource == rspGVR {
			t.Errorf("nothing changed, yet the preference was written: %s", a)
		}
	}
}

// TestWriteIsLockedOnResourceVersion: a status write that meets a newer resourceVersion fails
// with the Conflict, writes nothing, keeps no memory of the decision, and the next pass
// decides again from a fresh read.
func TestWriteIsLockedOnResourceVersion(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	for _, m := range members {
		e.load[m] = 1800
	}
	e.setLoad(t)
	e.Host.FailOn(fake.VerbUpdateStatus, apierrors.NewConflict(schema.GroupResource{Group: "core.federation.k8s.io", Resource: "replicaschedulingpreferences"}, "web", nil), 1)
	_, err := e.a.Reconcile(ctx, key)
	require.True(t, apierrors.IsConflict(err), "%v", err)
	require.Equal(t, int64(6), e.total(t))
	require.Empty(t, e.events.take(), "no event for a total that was not written")
	_, err = e.a.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, int64(9), e.total(t))
}

// TestStaleMinorityHolds: a member out of reach keeps counting while its last read is fresh,
// then its share holds at what it ran, and the others' load alone moves the total; it is
// never scaled on data nobody has.
func TestStaleMinorityHolds(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	for _, m := range members {
		e.load[m] = 1200 // at the target
	}
	e.setLoad(t)
	require.NoError(t, e.pass(t))
	require.Equal(t, int64(6), e.total(t))

	require.NoError(t, e.Fleet.Partition("ap"))
	e.load["eu"], e.load["us"] = 1800, 1800
	e.setLoad(t)
	e.Clock.Step(15 * time.Second)
	require.NoError(t, e.pass(t))
	require.Equal(t, int64(8), e.total(t), "within StaleAfter ap's last read still counts: 6 pods at 80% ask for 8")

	// ap's last read is now older than StaleAfter (45s): its 2 replicas hold (the scheduler,
	// which does not know it is cut off, gave it a third one nobody could run), and eu and us
	// at 108% over their 5 pods ask for 9: 11 in all.
	e.load["eu"], e.load["us"] = 2700, 2700
	e.setLoad(t)
	e.Clock.Step(time.Minute)
	require.NoError(t, e.pass(t))
	require.Equal(t, int64(11), e.total(t))
	st := e.rsp(t).Status.Autoscale
	var ap federation.AutoscaleCluster
	for _, c := range st.Clusters {
		if c.Name == "ap" {
			ap = c
		}
	}
	require.True(t, ap.Stale, "%+v", ap)
	require.Equal(t, int32(2), *ap.CurrentReplicas)
	require.Equal(t, "8 -> 11: cpu 108% of 60% over 5 ready pods in 2 of 3 clusters; ap holds 2 (stale)", lastRescale(t, e))
}

// lastRescale is the message of the last SuccessfulRescale event.
func lastRescale(t *testing.T, e *env) string {
	t.Helper()
	var last string
	for _, ev := range e.events.take() {
		if msg, ok := strings.CutPrefix(ev, "Normal SuccessfulRescale: "); ok {
			last = msg
		}
	}
	return last
}
