package fake_test

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

func TestFleetClient(t *testing.T) {
	var f fake.Fleet // the zero Fleet is usable
	eu := withNamespaces(t, f.Add("eu", nil))
	require.Equal(t, "eu", eu.Name())

	got, err := f.Client("eu")
	require.NoError(t, err)
	require.Same(t, eu, got)

	_, err = f.Client("nowhere")
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
	require.ErrorIs(t, f.Partition("nowhere"), federation.ErrClusterNotFound)
	require.ErrorIs(t, f.Heal("nowhere"), federation.ErrClusterNotFound)

	// Adding a name again keeps the cluster and its state, with the new labels.
	mustCreate(t, eu, configMapGVR, configMap("prod", "cfg", nil))
	again := f.Add("eu", map[string]string{"tier": "gold"})
	require.Same(t, eu, again)
	require.Len(t, again.Objects(configMapGVR), 1)
	require.Equal(t, map[string]string{"tier": "gold"}, f.Clusters()[0].Labels)

	f.Add("us", nil)
	require.Equal(t, []string{"eu", "us"}, f.Names())
	require.True(t, f.Remove("us"))
	require.False(t, f.Remove("us"))
	_, err = f.Client("us")
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
}

func TestFleetClusters(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	f := fake.NewFleet()
	f.SetClock(clk)
	f.Add("us", map[string]string{
		federation.RegionLabel: "us-east-1", federation.ZoneLabel: "us-east-1a", federation.ProviderLabel: "aws",
	})
	f.Add("bare", map[string]string{"env": "test"})
	clk.Step(time.Minute)
	require.NoError(t, f.Partition("bare"))

	got := f.Clusters()
	require.Len(t, got, 2)
	bare, us := got[0], got[1]

	require.Equal(t, "bare", bare.Name)
	require.Equal(t, map[string]string{"env": "test"}, bare.Labels)
	require.Empty(t, bare.Spec.Region)
	require.Equal(t, metav1.ConditionFalse, bare.Status.Conditions[0].Status)
	require.Equal(t, "ClusterUnreachable", bare.Status.Conditions[0].Reason)
	require.True(t, bare.Status.Conditions[0].LastTransitionTime.Time.Equal(clk.Now()))

	require.Equal(t, federation.ClusterGVK.Kind, us.Kind)
	require.Equal(t, federation.ClusterSpec{
		APIEndpoint: "https://us.fake.invalid",
		Region:      "us-east-1",
		Zones:       []string{"us-east-1a"},
		Provider:    "aws",
	}, us.Spec)
	require.Equal(t, federation.ConditionReady, us.Status.Conditions[0].Type)
	require.Equal(t, metav1.ConditionTrue, us.Status.Conditions[0].Status)
	require.Equal(t, "v1.37.2-fake", us.Status.KubernetesVersion)
	require.NoError(t, federation.ValidateCluster(&us).ToAggregate(), "described Clusters are valid")

	// Members with topology labels start with a labelled Node; others have none.
	usc, _ := f.Member("us")
	nodes := usc.Objects(nodeGVR)
	require.Len(t, nodes, 1)
	require.Equal(t, "us-east-1a", nodes[0].GetLabels()[federation.ZoneLabel])
	require.Equal(t, "us-east-1", nodes[0].GetLabels()[federation.RegionLabel])
	require.Equal(t, "110", nested(t, nodes[0], "status", "allocatable", "pods"))
	barec, _ := f.Member("bare")
	require.Empty(t, barec.Objects(nodeGVR))
}

func TestPartition(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	ctx := testCtx(t)
	mustCreate(t, eu, configMapGVR, configMap("prod", "cfg", nil))
	w, err := eu.Watch(ctx, configMapGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)

	require.NoError(t, f.Partition("eu"))
	require.True(t, eu.Partitioned())
	requireClosed(t, w)

	client, err := f.Client("eu")
	require.NoError(t, err, "a partitioned member is still known")
	_, err = client.Get(ctx, configMapGVR, "prod", "cfg")

	require.ErrorIs(t, err, federation.ErrUnreachable)
	var uerr *url.Error
	require.ErrorAs(t, err, &uerr)
	require.Equal(t, "https://eu.fake.invalid/api/v1/namespaces/prod/configmaps/cfg", uerr.URL)
	var nerr net.Error
	require.ErrorAs(t, err, &nerr)
	require.True(t, utilnet.IsConnectionRefused(err), "IsConnectionRefused(%v)", err)
	require.False(t, apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err), "not an API error")

	for name, call := range map[string]func() error{
		"list":    func() error { _, err := client.List(ctx, configMapGVR, "", metav1.ListOptions{}); return err },
		"watch":   func() error { _, err := client.Watch(ctx, configMapGVR, "", metav1.ListOptions{}); return err },
		"create":  func() error { _, err := client.Create(ctx, configMapGVR, configMap("prod", "x", nil)); return err },
		"delete":  func() error { return client.Delete(ctx, configMapGVR, "prod", "cfg", noDeleteOptions) },
		"healthy": func() error { return eu.Healthy(ctx) },
		"version": func() error { _, err := eu.ServerVersion(ctx); return err },
	} {
		require.ErrorIs(t, call(), federation.ErrUnreachable, name)
	}
	require.Len(t, eu.Objects(configMapGVR), 1, "state survives the partition")

	require.NoError(t, f.Heal("eu"))
	require.False(t, eu.Partitioned())
	require.NoError(t, eu.Healthy(ctx))
	_, err = client.Get(ctx, configMapGVR, "prod", "cfg")
	require.NoError(t, err)
	v, err := eu.ServerVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, "v1.37.2-fake", v.GitVersion)
}

func TestPartitionOnlyAffectsThatMember(t *testing.T) {
	f := fake.NewFleet()
	f.Add("a", nil)
	b := f.Add("b", nil)
	require.NoError(t, f.Partition("a"))
	require.NoError(t, b.Healthy(testCtx(t)))
	var names []string
	for _, c := range f.Clusters() {
		names = append(names, c.Name+"="+string(c.Status.Conditions[0].Status))
	}
	if diff := cmp.Diff([]string{"a=False", "b=True"}, names); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
}

func TestUnreachableErrorIsNotRetriedAsConflict(t *testing.T) {
	c := newCluster(t, "solo")
	c.Partition()
	_, err := c.Update(testCtx(t), configMapGVR, configMap("prod", "cfg", nil))
	require.False(t, apierrors.IsConflict(err))
	var cerr *federation.ClusterError
	require.False(t, errors.As(err, &cerr), "the fake does not add ClusterError; loops do")
	require.Contains(t, err.Error(), `Put "https://solo.fake.invalid/api/v1/namespaces/prod/configmaps/cfg"`)
}

// TestFleetAddWhileDescribing: Add of an existing name replaces its labels while Clusters
// describes the members. Run with -race: Clusters must read the labels under the fleet's lock.
func TestFleetAddWhileDescribing(t *testing.T) {
	f := fake.NewFleet()
	f.Add("eu", map[string]string{"tier": "a"})
	var wg sync.WaitGroup
	const n = 2000
	start := make(chan struct{}) // both loops run at once
	wg.Go(func() {
		<-start
		for i := range n {
			f.Add("eu", map[string]string{"tier": strconv.Itoa(i)})
		}
	})
	wg.Go(func() {
		<-start
		for range n {
			require.Len(t, f.Clusters()[0].Labels, 1)
		}
	})
	close(start)
	wg.Wait()
	require.Equal(t, strconv.Itoa(n-1), f.Clusters()[0].Labels["tier"])
}
