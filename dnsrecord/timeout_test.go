package dnsrecord_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// hang answers nothing until ctx is done, as a member that accepts the connection and never
// answers.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// hungReader is the shared cache of a member that never answers: its first list never
// completes, so its reads wait for a sync that never comes, as federation.MemberCache's do.
type hungReader struct{}

func (hungReader) Get(ctx context.Context, _ schema.GroupVersionResource, _, _ string) (*unstructured.Unstructured, error) {
	return nil, hang(ctx)
}

func (hungReader) List(ctx context.Context, _ schema.GroupVersionResource, _ string, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, hang(ctx)
}

// hungCacheSet is the fleet, with the member cache of one cluster never synced.
type hungCacheSet struct {
	*fake.Fleet
	hung string
}

func (s hungCacheSet) CachedReader(cluster string, gvr schema.GroupVersionResource) (federation.Reader, error) {
	if cluster == s.hung {
		return hungReader{}, nil
	}
	return s.Fleet.CachedReader(cluster, gvr)
}

// liveSet is the fleet without its member caches: every member read goes to the API server.
type liveSet struct{ fleet *fake.Fleet }

func (s liveSet) Client(name string) (federation.ClusterClient, error) { return s.fleet.Client(name) }

// TestMemberReadTimeout: a member that accepts and never answers (its member cache never
// syncs, its EndpointSlice list or its Service read never returns) costs a pass
// Options.ReadTimeout on the injected clock, not the pass: the other clusters are read and
// published, the hung cluster keeps its last load balancer, and the pass returns a retryable
// error naming the cluster and the timeout.
func TestMemberReadTimeout(t *testing.T) {
	const timeout = 5 * time.Second
	tests := []struct {
		name string
		set  func(w *world) federation.ClusterSet
		hang func(w *world)
	}{
		{
			name: "the member cache never syncs",
			set:  func(w *world) federation.ClusterSet { return hungCacheSet{Fleet: w.fleet, hung: "east-a"} },
		},
		{
			name: "the EndpointSlice list never answers",
			set:  func(w *world) federation.ClusterSet { return w.fleet },
			hang: func(w *world) {
				w.member("east-a").SetHooks(fake.Hooks{List: func(ctx context.Context, _ federation.ClusterClient, _ schema.GroupVersionResource, _ string, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
					return nil, hang(ctx)
				}})
			},
		},
		{
			name: "without member caches, the Service read never answers",
			set:  func(w *world) federation.ClusterSet { return liveSet{w.fleet} },
			hang: func(w *world) {
				w.member("east-a").SetHooks(fake.Hooks{Get: func(ctx context.Context, _ federation.ClusterClient, _ schema.GroupVersionResource, _, _ string) (*unstructured.Unstructured, error) {
					return nil, hang(ctx)
				}})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.federateService("web", "east-a", "east-b", "eu")
			w.fleet.Tick()
			w.serviceRecord("web", "{domainRef: fed}")
			healthy, err := dnsrecord.New(w.host, w.fleet, dnsrecord.Options{Clock: w.clock, Resolver: w.resolver})
			require.NoError(t, err)
			_, err = healthy.Reconcile(w.ctx, webKey)
			require.NoError(t, err)

			// eu gets a new load balancer while east-a stops answering.
			require.NoError(t, w.member("eu").Drift(servicesGVR, "default", "web", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"ip": "198.18.9.9"}}, "status", "loadBalancer", "ingress")
			}))
			if tt.hang != nil {
				tt.hang(w)
			}
			c, err := dnsrecord.New(w.host, tt.set(w), dnsrecord.Options{Clock: w.clock, Resolver: w.resolver, ReadTimeout: timeout})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(w.ctx)
			defer cancel() // releases a pass that never times out, so the test ends
			done := make(chan error, 1)
			go func() {
				_, err := c.Reconcile(ctx, webKey)
				done <- err
			}()
			fedtest.Eventually(t, "the hung read waits on the injected clock", w.clock.HasWaiters)
			w.clock.Step(timeout)
			err = <-done
			require.ErrorContains(t, err, `cluster "east-a"`)
			require.ErrorContains(t, err, "timed out after 5s")
			require.False(t, federation.IsTerminal(err), "retried")
			want := []string{
				wEUb + " A 198.18.9.9", wEU + " A 198.18.9.9", wGlobal + " A 198.18.1.1,198.18.2.1,198.18.9.9",
				wEast + " A 198.18.1.1,198.18.2.1", wEast1a + " A 198.18.1.1", wEast1b + " A 198.18.2.1",
			}
			if diff := cmp.Diff(want, w.endpoints("service-web")); diff != "" {
				t.Errorf("the other clusters are published, east-a keeps its load balancer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunHungMember: under Run, a member whose cache never syncs holds up no record: every
// pass reads it for ReadTimeout at most, on the injected clock, and every record is published
// from the clusters that answer.
func TestRunHungMember(t *testing.T) {
	const timeout = 5 * time.Second
	w := newWorld(t)
	w.federateService("web", "east-a", "east-b", "eu")
	w.federateService("api", "east-a", "east-b", "eu")
	w.fleet.Tick()
	w.serviceRecord("web", "{domainRef: fed}")
	w.serviceRecord("api", "{domainRef: fed}")
	c, err := dnsrecord.New(w.host, hungCacheSet{Fleet: w.fleet, hung: "east-a"}, dnsrecord.Options{Clock: w.clock, Resolver: w.resolver, ReadTimeout: timeout})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	published := func(name string) bool {
		u, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "default", "service-"+name)
		if err != nil {
			return false
		}
		var de dnsrecord.DNSEndpoint
		require.NoError(t, federation.FromUnstructured(u, &de))
		for _, l := range lines(de.Spec.Endpoints) {
			if l == name+".default.fed.svc.us-east-1a.us-east-1.example.com CNAME "+name+".default.fed.svc.us-east-1.example.com" {
				return true // east-a, never read, has no load balancer: its zone falls back
			}
		}
		return false
	}
	fedtest.Eventually(t, "both records are published from the clusters that answer", func() bool {
		if w.clock.HasWaiters() {
			w.clock.Step(timeout)
		}
		return published("web") && published("api")
	})
}
