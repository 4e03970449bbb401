package controlplane_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// hostWrites returns the host writes among actions, one line each ("patch
// types.federation.k8s.io/v1alpha1/federatedconfigmaps default/a"), but the Clusters' status
// (the monitor's heartbeats), which belongs to no federated object.
func hostWrites(actions []fake.Action) []string {
	var out []string
	for _, a := range actions {
		switch a.Verb {
		case fake.VerbCreate, fake.VerbUpdate, fake.VerbUpdateStatus, fake.VerbPatch, fake.VerbDelete:
		default:
			continue
		}
		if a.Resource == federation.ClusterGVR {
			continue
		}
		out = append(out, a.String())
	}
	slices.Sort(out)
	return out
}

func federatedConfigMap(name string) string {
	return fmt.Sprintf(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap,
metadata: {name: %s, namespace: default},
spec: {template: {data: {a: b}}, placement: {clusters: [{name: eu}, {name: us}]}}}`, name)
}

// A new federated object costs the host at most three writes besides the user's create, with
// a default control plane: sync's one metadata patch (finalizer and revision annotation), its
// ControllerRevision, and one status write that holds the scheduler's, sync's and the
// collector's fields. Its events are one per reason at most. A steady object costs none.
func TestNewObjectHostWrites(t *testing.T) {
	e := newEnv(t)
	opts := e.options(federation.ConfigMapType)
	opts.Disable.DNS = true
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	stepUntil(t, e.clock, time.Second, "both clusters Ready", func() bool {
		for _, name := range []string{"eu", "us"} {
			u, err := e.host.Peek(federation.ClusterGVR, "", name)
			if err != nil {
				return false
			}
			c, err := federation.ClusterFromUnstructured(u)
			if err != nil || !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
				return false
			}
		}
		return true
	})
	gvr := federation.ConfigMapType.FederatedGVR()
	e.host.ClearActions()
	create(t, e.host, gvr, federatedConfigMap("cfg"))
	// Steps of 100ms, each once the host has been quiet: the loops act within the status
	// window as they would in real time.
	stepQuiet(t, e, "Scheduled, Propagated and Ready", func() bool {
		return e.condition(gvr, "cfg", "Scheduled") == "True" && e.condition(gvr, "cfg", "Propagated") == "True" &&
			e.condition(gvr, "cfg", "Ready") == "True"
	})
	// The events of the window, written at its end; the broadcaster writes them in real time.
	stepUntilf(t, e.clock, controlplane.DefaultEventWindow, func() string {
		return fmt.Sprintf("the events CreatedInCluster, ScheduleChanged and Ready on the host; writes: %s", strings.Join(hostWrites(e.host.Actions()), ", "))
	}, func() bool {
		reasons := map[string]bool{}
		for _, ev := range e.hostEvents(t) {
			reasons[ev.Reason] = true
		}
		return reasons[fedsync.EventCreatedInCluster] && reasons["ScheduleChanged"] && reasons["Ready"]
	})

	var object, events []string
	for _, w := range hostWrites(e.host.Actions()) {
		switch {
		case strings.HasPrefix(w, "create types.federation.k8s.io/v1alpha1/federatedconfigmaps"):
			// the user's create
		case strings.Contains(w, " v1/events "):
			events = append(events, w)
		default:
			object = append(object, w)
		}
	}
	if len(object) > 3 {
		t.Errorf("%d host writes for one new object besides its events, want at most 3:\n%s", len(object), strings.Join(object, "\n"))
	}
	if len(events) > 3 {
		t.Errorf("%d events for one new object, want at most one per reason (3):\n%s", len(events), strings.Join(events, "\n"))
	}
	t.Logf("host writes for one new object: %d, and %d events", len(object), len(events))

	// Steady: a resync passes over the object and writes nothing.
	e.host.ClearActions()
	for range 3 {
		e.clock.Step(fedsync.DefaultResyncPeriod)
	}
	stepUntil(t, e.clock, controlplane.DefaultEventWindow, "a few windows", func() bool { return true })
	require.Empty(t, hostWrites(e.host.Actions()), "a steady object's host writes")
}

// stepQuiet steps the fake clock by 100ms until cond holds, each step once no host request
// came for 50ms of real time (bounded): the loops have done what the last step woke.
func stepQuiet(t *testing.T, e *env, what string, cond func() bool) {
	t.Helper()
	for range 600 {
		if cond() {
			return
		}
		last, quiet := len(e.host.Actions()), 0
		for i := 0; i < 500 && quiet < 50; i++ {
			time.Sleep(time.Millisecond)
			if n := len(e.host.Actions()); n != last {
				last, quiet = n, 0
			} else {
				quiet++
			}
		}
		e.clock.Step(100 * time.Millisecond)
	}
	t.Fatalf("%s: not after 600 steps of 100ms", what)
}
