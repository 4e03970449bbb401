package sync_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// running starts e.s.Run and returns a func that stops it and returns its error.
func (e *env) running(t *testing.T) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.s.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

func TestRunPropagatesCorrectsDriftAndReadsNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{})
	stop := e.running(t)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	inSync := func() bool {
		fed := e.fed(t)
		return propagated(fed).Status == "True" && fed.Status.ObservedGeneration == fed.Generation
	}
	fedtest.Eventually(t, "propagated", inSync)

	// A member-side edit is seen through the member cache and reverted without waiting for
	// a resync.
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		setMemberImage(u, "evil:1")
	}))
	fedtest.Eventually(t, "drift reverted at once", func() bool { return image(t, e.member(t, "aws")) == frontendImage })

	// A member-side deletion is recreated at once too.
	require.NoError(t, e.cluster(t, "gcp").DriftDelete(deployments, key.Namespace, key.Name))
	fedtest.Eventually(t, "deleted member recreated", func() bool { return e.member(t, "gcp") != nil })

	// Periodic resyncs of an object in sync cost no API call at all. One step of the fake
	// clock may not bring the pass: a pass is counted before its requeue reaches the queue,
	// and client-go's delaying queue reads the clock, then sets its timer from that reading,
	// so a step in between puts the timer a whole period late. Step until the pass comes.
	e.clearActions()
	for range 3 {
		before := e.passes(t)
		fedtest.StepUntil(t, e.clock.Step, fedsync.DefaultResyncPeriod, 50,
			func() string { return "a resync pass" }, func() bool { return e.passes(t) > before })
	}
	require.NoError(t, stop())
	for _, c := range append([]*fake.Cluster{e.host}, members(e)...) {
		for _, a := range c.Actions() {
			require.Contains(t, []fake.Verb{fake.VerbWatch}, a.Verb, "%s: %s", c.Name(), a)
		}
	}
}

func members(e *env) []*fake.Cluster {
	var out []*fake.Cluster
	for _, n := range e.fleet.Names() {
		c, _ := e.fleet.Member(n)
		out = append(out, c)
	}
	return out
}

func TestRunRequeuesWhenAClusterRecovers(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{})
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	stop := e.running(t)
	defer func() { require.NoError(t, stop()) }()
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t, "azure not ready", func() bool { return propagation(e.fed(t))["azure"] == plan.ReasonClusterNotReady+"@0" })
	require.Nil(t, e.member(t, "azure"))

	require.NoError(t, e.fleet.Heal("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host)) // Ready again: every object is requeued
	fedtest.Eventually(t, "created once the cluster is ready", func() bool { return e.member(t, "azure") != nil })
	fedtest.Eventually(t, "propagated", func() bool { return propagated(e.fed(t)).Status == "True" })
}

func TestRunFailsWithoutTheFederatedCRD(t *testing.T) {
	defer goleak.VerifyNone(t)
	host := fake.NewCluster("host") // serves the Cluster CRD only, not FederatedDeployment's
	crd, err := federation.ClusterCRD()
	require.NoError(t, err)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	_, err = host.Create(context.Background(), crds, &unstructured.Unstructured{Object: m})
	require.NoError(t, err)
	s, err := fedsync.New(host, fake.NewFleet(), federation.DeploymentType, fedsync.Options{CacheSyncTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	err = s.Run(context.Background())
	require.ErrorContains(t, err, "federateddeployments")
}

func TestRunReleasesALeavingCluster(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{ClusterRemoval: fedsync.RemovalDelete})
	stop := e.running(t)
	defer func() { require.NoError(t, stop()) }()
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t, "propagated", func() bool { return e.member(t, "azure") != nil })
	e.leave(t, "azure")
	fedtest.Eventually(t, "deleted from the leaving cluster", func() bool { return e.member(t, "azure") == nil })
	fedtest.Eventually(t, "the Cluster released", func() bool { return e.clusterGone(t, "azure") })
}

// TestRunPassesOnceForEachChange: sync's own writes (the revision it records, the finalizer
// and revision annotation, the status) do not bring the federated object back; one change is
// one pass.
func TestRunPassesOnceForEachChange(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{})
	stop := e.running(t)
	defer func() { require.NoError(t, stop()) }()
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t, "propagated", func() bool { return propagated(e.fed(t)).Status == "True" })
	// The first passes race with the caches' first lists (each Cluster listed brings every
	// object back): count from when they are over.
	settled := -1.0
	require.Eventually(t, func() bool {
		before := settled
		settled = e.passes(t)
		return settled == before
	}, 10*time.Second, 100*time.Millisecond, "passes settle")

	for i, img := range []string{"frontend:2", "frontend:3"} {
		e.edit(t, setImage(img))
		fedtest.Eventually(t,

			"the new revision propagated", func() bool {
				fed := e.fed(t)
				return fed.Status.ObservedGeneration == fed.Generation && fed.Status.SyncedRevision == int64(i+2)
			})

		want := settled + float64(i+1)
		fedtest.Eventually(t, "the pass", func() bool { return e.passes(t) >= want })
		require.Never(t, func() bool { return e.passes(t) > want }, 300*time.Millisecond, 5*time.Millisecond,
			"a pass for sync's own writes")
	}
}

// TestRunCachesOnlyFedkitRevisions: Run's history informer lists and watches only the
// ControllerRevisions that carry OwnerUIDLabel (fedkit's, every type's: one watch for all),
// never the Deployments' and StatefulSets' own histories, which a real host holds by the
// thousand; every history read asks for one owner's.
func TestRunCachesOnlyFedkitRevisions(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	native := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"metadata": map[string]any{"name": "db-5d8f9", "namespace": "production", "labels": map[string]any{"app": "db"}},
		"revision": int64(1)}}
	require.NoError(t, e.host.Seed(native))
	stop := e.running(t)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t, "propagated", func() bool { return propagated(e.fed(t)).Status == "True" })
	require.NoError(t, stop())

	revisions := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	watches := 0
	for _, a := range e.host.Actions() {
		if a.Resource != revisions || (a.Verb != fake.VerbList && a.Verb != fake.VerbWatch) {
			continue
		}
		if a.Verb == fake.VerbWatch {
			watches++
		}
		sel, err := labels.Parse(a.ListOptions.LabelSelector)
		require.NoError(t, err)
		reqs, _ := sel.Requirements()
		own := false
		for _, r := range reqs {
			own = own || (r.Key() == fedsync.OwnerUIDLabel && r.Operator() != selection.DoesNotExist && r.Operator() != selection.NotEquals)
		}
		require.True(t, own, "%s of ControllerRevisions with selector %q: it must require %s", a.Verb, a.ListOptions.LabelSelector, fedsync.OwnerUIDLabel)
	}
	require.Equal(t, 1, watches, "watches of ControllerRevisions")
}

// TestWatchesIsWhatRunWatches: Watches names every host resource Run opens a watch on, with
// its namespace, and nothing else: what a control plane checks and waits for before it calls
// the Syncer ready (the revision history among them).
func TestWatchesIsWhatRunWatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts fedsync.Options
	}{
		{name: "every namespace"},
		{name: "one namespace", opts: fedsync.Options{Namespace: "production"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts)
			stop := e.running(t)
			e.apply(t, e.typ.FederatedGVR(), frontend)
			fedtest.Eventually(t, "propagated", func() bool { return propagated(e.fed(t)).Status == "True" })
			require.NoError(t, stop())

			var watched []federation.Watch
			for _, a := range e.host.Actions() {
				if w := (federation.Watch{GVR: a.Resource, Namespace: a.Namespace}); a.Verb == fake.VerbWatch && !slices.Contains(watched, w) {
					watched = append(watched, w)
				}
			}
			want := e.s.Watches()
			sortWatches := func(ws []federation.Watch) {
				slices.SortFunc(ws, func(a, b federation.Watch) int {
					return strings.Compare(a.GVR.String()+"|"+a.Namespace, b.GVR.String()+"|"+b.Namespace)
				})
			}
			sortWatches(want)
			sortWatches(watched)
			if diff := cmp.Diff(want, watched); diff != "" {
				t.Errorf("Watches() and the watches Run opened differ (-Watches +Run):\n%s", diff)
			}
			if !slices.ContainsFunc(want, func(w federation.Watch) bool { return w.GVR.Resource == "controllerrevisions" }) {
				t.Errorf("Watches() = %v; want the revision history (controllerrevisions) among them", want)
			}
		})
	}
}
