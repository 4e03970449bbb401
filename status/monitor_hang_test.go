package status_test

import (
	"context"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/status"
)

// hang makes member answer none of the given reads ("version", "nodes", "pods"): the call
// is accepted and waits until its context ends, as a member whose API server accepts the
// connection and never answers. It returns a channel that receives once per hung call.
func hang(t testing.TB, member *fake.Cluster, read string) <-chan struct{} {
	t.Helper()
	entered := make(chan struct{}, 100)
	if read == "version" {
		// ServerVersion has no hook: a latency far beyond any step of the test is a member
		// that never answers. The call is recorded before it waits.
		member.SetLatency(fake.VerbVersion, 1000*time.Hour)
		return nil
	}
	member.SetHooks(fake.Hooks{List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		if gvr.Resource != read {
			return next.List(ctx, gvr, namespace, opts)
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	return entered
}

// TestMonitorReadsAfterProbeAreBounded: the version, node and pod reads that follow a
// successful probe are each bounded by Timeout on the monitor's clock. A member that
// accepts them and never answers costs one Timeout: Reconcile returns, the probe's result
// (Ready) is written, the old capacity stays, and the log names the read that timed out.
func TestMonitorReadsAfterProbeAreBounded(t *testing.T) {
	for _, read := range []string{"version", "nodes", "pods"} {
		t.Run(read, func(t *testing.T) {
			e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
			member, _ := e.fleet.Member("eu")
			before := e.cluster(t, "eu").Status.Capacity
			entered := hang(t, member, read)

			lines := &lockedLines{}
			done := make(chan error, 1)
			go func() {
				_, err := e.m.Reconcile(lines.context(), federation.Key{Name: "eu"})
				done <- err
			}()
			if entered != nil {
				fedtest.Eventually(t, "the "+read+" list", func() bool { return len(entered) > 0 })
			} else {
				fedtest.Eventually(t, "the version read", func() bool {
					for _, a := range member.Actions() {
						if a.Verb == fake.VerbVersion {
							return true
						}
					}
					return false
				})
			}
			// The read's timeout is armed before the call is made, so one step fires it.
			e.clock.Step(status.DefaultProbeTimeout)
			fedtest.Eventually(t, "Reconcile to return once Timeout has passed on the clock", func() bool { return len(done) > 0 })
			require.NoError(t, <-done)

			c := e.cluster(t, "eu")
			require.Equal(t, metav1.ConditionTrue, conditionOf(c, federation.ConditionReady).Status)
			requireResources(t, before, c.Status.Capacity)
			want := map[string]string{"version": "get version", "nodes": "list nodes", "pods": "list pods"}[read]
			require.Contains(t, lines.String(), want+": status: member read timed out: no answer within 3s")
		})
	}
}

// TestMonitorRunHungMemberDoesNotStopOthers: with one worker, a member that never answers
// its node list holds the worker for one Timeout per probe, and the monitor goes on probing
// the other clusters: a partition of one of them still turns it not Ready.
func TestMonitorRunHungMemberDoesNotStopOthers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newMonitorEnv(t, status.MonitorOptions{Workers: 1}, "eu", "us")
	eu, _ := e.fleet.Member("eu")
	entered := hang(t, eu, "nodes")
	stop := run(t, e.m.Run)
	defer stop()
	fedtest.Eventually(t, "eu's node list", func() bool { return len(entered) > 0 })

	require.NoError(t, e.fleet.Partition("us"))
	stepWhile(t, e.clock.Step, time.Second, "us not Ready", func() bool {
		return conditionOf(e.cluster(t, "us"), federation.ConditionReady).Status == metav1.ConditionFalse
	})
	require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status,
		"eu answers its probes; only its reads hang")
}

// stepWhile steps the fake clock by d every few milliseconds of real time until cond
// holds, for up to a minute of real time. Only the fake clock decides what is due; the
// real time only bounds how long a slow machine may take to get there.
func stepWhile(t testing.TB, step func(time.Duration), d time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute of stepping the clock by %s", what, d)
		}
		step(d)
		<-tick.C
	}
}

// lockedLines collects log lines; safe for the goroutine that logs and the test that reads.
type lockedLines struct {
	mu    gosync.Mutex
	lines []string
}

func (l *lockedLines) context() context.Context {
	return logrContext(func(args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	})
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
