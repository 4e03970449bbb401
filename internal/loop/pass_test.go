package loop_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	"github.com/fedkit/fedkit/internal/metrics"
)

// TestPassRun: the one reconcile wrapper gives the pass a logger (from ctx, else the
// fallback) carrying the loop, the type and the key, times the pass on the clock, and records
// the outcome the pass returned, a Conflict's as conflict; an empty outcome records nothing.
func TestPassRun(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "things"}, "a", errors.New("changed"))
	tests := []struct {
		name     string
		pass     loop.Pass
		ctxLog   bool
		outcome  string
		err      error
		wantLog  string
		wantSeen string
	}{
		{name: "from ctx", pass: loop.Pass{Loop: "sync", Type: "FederatedDeployment"}, ctxLog: true, outcome: metrics.OutcomeWritten,
			wantLog: `ctx "level"=0 "msg"="in pass" "loop"="sync" "type"="FederatedDeployment" "object"="ns/a"`, wantSeen: "written 2s <nil>"},
		{name: "fallback logger", pass: loop.Pass{Loop: "scheduler", Type: "FederatedDeployment"}, outcome: metrics.OutcomeUnchanged,
			wantLog: `fallback "level"=0 "msg"="in pass" "loop"="scheduler" "type"="FederatedDeployment" "object"="ns/a"`, wantSeen: "unchanged 2s <nil>"},
		{name: "no type, another key name", pass: loop.Pass{Loop: "cluster-monitor", KeyName: "cluster"}, ctxLog: true, outcome: metrics.OutcomeGone,
			wantLog: `ctx "level"=0 "msg"="in pass" "loop"="cluster-monitor" "cluster"="ns/a"`, wantSeen: "gone 2s <nil>"},
		{name: "conflict", pass: loop.Pass{Loop: "status", Type: "FederatedDeployment"}, ctxLog: true, outcome: metrics.OutcomeError, err: conflict,
			wantLog: `ctx "level"=0 "msg"="in pass" "loop"="status" "type"="FederatedDeployment" "object"="ns/a"`, wantSeen: "conflict 2s " + conflict.Error()},
		{name: "nothing to record", pass: loop.Pass{Loop: "dns", Type: "IngressDNSRecord"}, ctxLog: true, outcome: "",
			wantLog: `ctx "level"=0 "msg"="in pass" "loop"="dns" "type"="IngressDNSRecord" "object"="ns/a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			var logs []string
			logger := func(name string) logr.Logger {
				return funcr.New(func(prefix, args string) { logs = append(logs, name+" "+args) }, funcr.Options{})
			}
			var seen string
			p := tt.pass
			p.Clock = clk
			p.Logger = logger("fallback")
			p.Observe = func(outcome string, err error, start, end time.Time) {
				seen = fmt.Sprintf("%s %s %v", outcome, end.Sub(start), err)
			}
			ctx := context.Background()
			if tt.ctxLog {
				ctx = logr.NewContext(ctx, logger("ctx"))
			}
			res, err := p.Run(ctx, federation.Key{Namespace: "ns", Name: "a"}, func(ctx context.Context) (federation.Result, string, error) {
				logr.FromContextOrDiscard(ctx).Info("in pass")
				clk.Step(2 * time.Second)
				return federation.Result{RequeueAfter: time.Minute}, tt.outcome, tt.err
			})
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(federation.Result{RequeueAfter: time.Minute}, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.wantLog}, logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			if seen != tt.wantSeen {
				t.Errorf("observed %q, want %q", seen, tt.wantSeen)
			}
		})
	}
}

// TestRunGivesPassesTheQueueInCtx: Run hands each pass a ctx whose logger names the queue,
// so a pass's log lines (through Pass.Run) say which queue ran it.
func TestRunGivesPassesTheQueueInCtx(t *testing.T) {
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "a"))
	logs := &logLines{}
	logged := make(chan struct{}, 1)
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Name: "q", Logger: logs.logger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			logr.FromContextOrDiscard(ctx).Info("in pass", "key", key.String())
			select {
			case logged <- struct{}{}:
			default:
			}
			return federation.Result{}, nil
		}))
	}()
	select {
	case <-logged:
	case <-time.After(time.Minute):
		t.Fatal("no pass within a minute")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"msg"="in pass" "queue"="q" "key"="default/a"`) {
		t.Errorf("the pass's log line does not name the queue:\n%s", logs.String())
	}
}
