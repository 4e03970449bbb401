package controlplane_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

var (
	deployments = federation.DeploymentType.FederatedGVR()
	jobs        = federation.JobType
)

// One Run runs every loop: the fleet's controllers (the ClusterSet's own Run), the monitor,
// the scheduler, sync and the collector, and the event broadcaster. A FederatedDeployment is
// divided, propagated and reported Ready, with events on the host; Run returns nil when
// stopped and leaves no goroutine behind.
func TestRunPropagatesAndReportsReady(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newEnv(t)
	opts := e.options(federation.DeploymentType)
	opts.Disable.DNS = true
	opts.Registerer = prometheus.NewRegistry()
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)

	create(t, e.host, deployments, federatedDeployment("web"))
	stepUntil(t, e.clock, time.Second, "propagated to both members", func() bool {
		return e.memberReplicas("eu", "web") == 4 && e.memberReplicas("us", "web") == 4
	})
	// The three loops write the object's status concurrently: a Conflict is retried with
	// backoff on the fake clock.
	stepUntil(t, e.clock, time.Second, "Scheduled, Propagated and Ready", func() bool {
		return e.condition(deployments, "web", "Scheduled") == "True" && e.condition(deployments, "web", "Propagated") == "True" &&
			e.condition(deployments, "web", "Ready") == "True"
	})

	want := map[string]controlplane.State{
		controlplane.ClusterSetLoop:       controlplane.StateRunning,
		controlplane.MonitorLoop:          controlplane.StateRunning,
		"scheduler/FederatedDeployment":   controlplane.StateRunning,
		"sync/FederatedDeployment":        controlplane.StateRunning,
		"status/FederatedDeployment":      controlplane.StateRunning,
		controlplane.DependenciesLoop:     controlplane.StateRunning,
		"propagation/FederatedDeployment": controlplane.StateRunning,
		controlplane.PolicyMonitorLoop:    controlplane.StateRunning,
		controlplane.AutoscaleLoop:        controlplane.StateRunning,
	}
	if diff := cmp.Diff(want, states(cp)); diff != "" {
		t.Errorf("Status() (-want +got):\n%s", diff)
	}

	// Every loop's events go to the host through the broadcaster Run started: sync's and the
	// scheduler's on the object, the monitor's on a Cluster that stops answering. The first
	// rollout's Normal events are not written (its conditions say the same); a change of
	// replicas (a new schedule, updated members) and a cluster that stops answering are
	// events. Normal events are written at the end of their window on the fake clock.
	_, err = e.host.Patch(context.Background(), deployments, "default", "web", types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"replicas":6}}}}`))
	require.NoError(t, err)
	require.NoError(t, e.fleet.Partition("us"))
	stepUntil(t, e.clock, 10*time.Second, "us not ready", func() bool {
		u, err := e.host.Peek(federation.ClusterGVR, "", "us")
		if err != nil {
			return false
		}
		c, err := federation.ClusterFromUnstructured(u)
		return err == nil && meta.IsStatusConditionFalse(c.Status.Conditions, federation.ConditionReady)
	})
	for _, want := range []struct{ kind, name, reason string }{
		{"FederatedDeployment", "web", "UpdatedInCluster"},
		{"FederatedDeployment", "web", scheduler.EventScheduleChanged},
		{"Cluster", "us", ""}, // the Ready condition's reason
	} {
		stepUntil(t, e.clock, time.Second, fmt.Sprintf("a %s event on %s %s on the host", want.reason, want.kind, want.name), func() bool {
			for _, ev := range e.hostEvents(t) {
				if (want.reason == "" || ev.Reason == want.reason) && ev.InvolvedObject.Kind == want.kind &&
					ev.InvolvedObject.Name == want.name && ev.Source.Component == controlplane.DefaultName {
					return true
				}
			}
			return false
		})
	}

	require.NoError(t, stop())
	for _, l := range cp.Status() {
		require.Equal(t, controlplane.StateStopped, l.State, l.Name)
	}
}

// A type whose CRD the host does not serve is caught by the check before its loops start:
// they are Failed with ErrNotServed, logged once, and the other types run. Installing the CRD
// brings them up at the next retry, without restarting the control plane.
func TestMissingCRDAtStart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newEnv(t)
	e.deleteCRD(t, jobs)
	opts := e.options(federation.DeploymentType, jobs)
	opts.Disable.DNS = true
	logs := &logSink{}
	opts.Logger = logs.logger()
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	e.host.ClearActions()
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()

	create(t, e.host, deployments, federatedDeployment("web"))
	stepUntil(t, e.clock, time.Second, "the Deployment propagated", func() bool { return e.memberReplicas("eu", "web") == 4 })
	// The check runs beside the other types' loops, which may propagate first.
	stepUntil(t, e.clock, time.Second, "the Job loops failed", func() bool {
		s := states(cp)
		return s["scheduler/FederatedJob"] == controlplane.StateFailed && s["sync/FederatedJob"] == controlplane.StateFailed &&
			s["status/FederatedJob"] == controlplane.StateFailed
	})
	for _, name := range []string{"scheduler/FederatedJob", "sync/FederatedJob", "status/FederatedJob"} {
		l := loopStatus(t, cp, name)
		require.Equal(t, controlplane.StateFailed, l.State, name)
		require.ErrorIs(t, l.Err, controlplane.ErrNotServed, name)
		require.ErrorContains(t, l.Err, "federatedjobs.types.federation.k8s.io", name)
		require.ErrorContains(t, l.Err, "kubectl apply -f config/crd/", name) // the next step
	}
	require.Equal(t, 1, logs.count("Loop failed", "sync/FederatedJob"), logs)

	// The check is one List per resource, not one per loop.
	lists := 0
	for _, a := range e.host.Actions() {
		if a.Verb == fake.VerbList && a.Resource == jobs.FederatedGVR() && a.ListOptions.Limit == 1 {
			lists++
		}
	}
	require.Equal(t, 1, lists, "checks of federatedjobs")

	// Two retries later the CRD is still missing: logged once still.
	stepUntil(t, e.clock, 30*time.Second, "two more failed checks", func() bool {
		return loopStatus(t, cp, "sync/FederatedJob").Failures >= 3
	})
	require.Equal(t, 1, logs.count("Loop failed", "sync/FederatedJob"), logs)

	// The CRD is installed: the next retry starts the loops and a FederatedJob propagates.
	e.installCRD(t, jobs)
	stepUntil(t, e.clock, 10*time.Second, "the Job loops running", func() bool {
		s := states(cp)
		return s["scheduler/FederatedJob"] == controlplane.StateRunning && s["sync/FederatedJob"] == controlplane.StateRunning &&
			s["status/FederatedJob"] == controlplane.StateRunning
	})
	create(t, e.host, jobs.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedJob
metadata: {name: migrate, namespace: default}
spec:
  template:
    spec:
      template: {spec: {restartPolicy: Never, containers: [{name: m, image: "busybox"}]}}
  placement: {clusters: [{name: eu}]}
`)
	eu, _ := e.fleet.Member("eu")
	stepUntil(t, e.clock, time.Second, "the Job in eu", func() bool {
		_, err := eu.Peek(jobs.TargetGVR(), "default", "migrate")
		return err == nil
	})
}

// A type whose CRD passes the check but cannot be listed when its loops start (deleted in
// between, here a host that answers 404 to the loops' lists) fails at runtime, after the
// loops' CacheSyncTimeout, with ErrCacheNotSynced: it is reported and retried, and the other
// types keep working.
func TestMissingCRDAtRuntime(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newEnv(t)
	gone := schema.GroupResource{Group: jobs.Federated.Group, Resource: jobs.FederatedResource}
	e.host.SetHooks(fake.Hooks{List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		if gvr == jobs.FederatedGVR() && opts.Limit != 1 { // the control plane's check gets through
			return nil, apierrors.NewNotFound(gone, "")
		}
		return next.List(ctx, gvr, ns, opts)
	}})
	opts := e.options(federation.DeploymentType, jobs)
	opts.Disable.DNS = true
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()

	stepUntil(t, e.clock, 5*time.Second, "the Job loops failed (after the 2m CacheSyncTimeout)", func() bool {
		s := states(cp)
		return s["scheduler/FederatedJob"] == controlplane.StateFailed && s["sync/FederatedJob"] == controlplane.StateFailed &&
			s["status/FederatedJob"] == controlplane.StateFailed
	})
	l := loopStatus(t, cp, "sync/FederatedJob")
	require.ErrorIs(t, l.Err, controlplane.ErrCacheNotSynced)
	require.ErrorContains(t, l.Err, "federatedjobs.types.federation.k8s.io")
	require.Equal(t, controlplane.StateRunning, loopStatus(t, cp, "sync/FederatedDeployment").State)

	create(t, e.host, deployments, federatedDeployment("web"))
	stepUntil(t, e.clock, time.Second, "the Deployment propagated", func() bool { return e.memberReplicas("us", "web") == 4 })

	// The host serves the type again: the retry brings the loops back.
	e.host.SetHooks(fake.Hooks{})
	stepUntil(t, e.clock, 10*time.Second, "the Job loops running", func() bool {
		return states(cp)["sync/FederatedJob"] == controlplane.StateRunning
	})
}

// A host without fedkit's CRDs runs nothing: Run returns at once with every loop's reason.
func TestRunFailsWhenNothingCanRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	host := fake.NewCluster("not-a-host")
	fleet := fake.NewFleet()
	opts := controlplane.Options{Types: []federation.TypeConfig{federation.DeploymentType}, Disable: controlplane.Parts{ClusterSet: true}}
	cp, err := controlplane.New(host, fleet, opts)
	require.NoError(t, err)
	err = cp.Run(context.Background())
	require.ErrorIs(t, err, controlplane.ErrAllFailed)
	require.ErrorIs(t, err, controlplane.ErrNotServed)
	for _, want := range []string{"cluster-monitor: ", "sync/FederatedDeployment: ", "clusters.core.federation.k8s.io", "dnsrecord: "} {
		require.ErrorContains(t, err, want)
	}
	for _, l := range cp.Status() {
		require.Equal(t, controlplane.StateStopped, l.State, l.Name)
		require.Equal(t, 1, l.Failures, l.Name)
	}
}

// An embedder's recorder gets the events instead of the host; Disable.Events records none.
func TestEventsOption(t *testing.T) {
	for _, tt := range []struct {
		name    string
		events  *record.FakeRecorder
		disable bool
	}{
		{name: "embedder's recorder", events: record.NewFakeRecorder(100)},
		{name: "disabled", disable: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			opts := e.options(federation.DeploymentType)
			opts.Disable.DNS, opts.Disable.Events = true, tt.disable
			if tt.events != nil {
				opts.Events = tt.events
			}
			cp, err := controlplane.New(e.host, e.fleet, opts)
			require.NoError(t, err)
			stop := run(cp)
			create(t, e.host, deployments, federatedDeployment("web"))
			stepUntil(t, e.clock, time.Second, "propagated", func() bool { return e.memberReplicas("us", "web") == 4 })
			var got []string
			if tt.events != nil {
				// The scheduler records its event after the status write sync waits for: the
				// event may come after the members.
				seen := func(reason string) bool {
					return slices.ContainsFunc(got, func(ev string) bool { return strings.Contains(ev, reason) })
				}
				stepUntil(t, e.clock, time.Second, "sync's and the scheduler's events", func() bool {
					for len(tt.events.Events) > 0 {
						got = append(got, <-tt.events.Events)
					}
					return seen("CreatedInCluster") && seen(scheduler.EventScheduleChanged)
				})
			}
			require.NoError(t, stop())
			require.Empty(t, e.hostEvents(t))
			if tt.events != nil {
				require.True(t, slices.ContainsFunc(got, func(ev string) bool { return strings.Contains(ev, "CreatedInCluster") }), "sync's events: %q", got)
				require.True(t, slices.ContainsFunc(got, func(ev string) bool { return strings.Contains(ev, scheduler.EventScheduleChanged) }), "the scheduler's events: %q", got)
			}
		})
	}
}

func TestNew(t *testing.T) {
	host, fleet := fake.NewHost("host"), fake.NewFleet()
	for _, tt := range []struct {
		name string
		opts controlplane.Options
		want error
		has  string
	}{
		{name: "a type twice", opts: controlplane.Options{Types: []federation.TypeConfig{jobs, jobs}}, want: controlplane.ErrInvalidOptions, has: "FederatedJob appears twice"},
		{name: "an incomplete type", opts: controlplane.Options{Types: []federation.TypeConfig{{TargetResource: "x"}}}, want: federation.ErrUnknownType},
		{name: "identities that disagree", opts: func() controlplane.Options {
			o := controlplane.Options{}
			o.Sync.Identity = "blue"
			return o
		}(), want: controlplane.ErrInvalidOptions, has: `Sync.Identity "blue" and Status.Identity "fedkit" differ`},
		{name: "a loop's bad option names the loop", opts: func() controlplane.Options {
			o := controlplane.Options{Types: []federation.TypeConfig{jobs}}
			o.Sync.Conflict = "Steal"
			return o
		}(), has: "sync for FederatedJob"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := controlplane.New(host, fleet, tt.opts)
			require.Error(t, err)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			require.ErrorContains(t, err, tt.has)
		})
	}
	_, err := controlplane.New(nil, fleet, controlplane.Options{})
	require.ErrorContains(t, err, "host client is nil")
	_, err = controlplane.New(host, nil, controlplane.Options{})
	require.ErrorContains(t, err, "cluster set is nil")

	// Every built-in type, every loop, one registry: the loops' metrics do not collide.
	cp, err := controlplane.New(host, fleet, controlplane.Options{Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	// + a propagation loop per namespaced type but Secrets, the policy monitor, DNS, the
	// autoscaler and dependencies
	require.Len(t, cp.Status(), 2+3*len(federation.BuiltinTypes())+len(federation.BuiltinTypes())-2+4)
}

func TestRunTwice(t *testing.T) {
	e := newEnv(t)
	opts := e.options(federation.DeploymentType)
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	stepUntil(t, e.clock, time.Second, "running", func() bool { return states(cp)[controlplane.MonitorLoop] == controlplane.StateRunning })
	require.ErrorIs(t, cp.Run(context.Background()), controlplane.ErrRunning)
	require.NoError(t, stop())
	// Stopped, it runs again (the loops' Run may run again once returned).
	stop = run(cp)
	stepUntil(t, e.clock, time.Second, "running again", func() bool { return states(cp)[controlplane.MonitorLoop] == controlplane.StateRunning })
	require.NoError(t, stop())
}
