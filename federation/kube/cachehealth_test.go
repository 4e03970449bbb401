package kube

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/fedkit/fedkit/federation"
)

// TestCacheHealth: a member cache is in contact while its lists and watches succeed; once
// the member stops answering (its watch breaks, the lists that follow are refused) the cache
// says so, with the time it last heard from the member, while it keeps serving its last
// state; when the member answers again, the cache is in contact again.
func TestCacheHealth(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"}, configMap("a", "web", managed(nil)))
	var (
		mu      sync.Mutex
		down    bool
		watches []*watch.RaceFreeFakeWatcher
	)
	refused := &url.Error{Op: "Get", URL: "https://member.invalid/api/v1/configmaps",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	dyn.PrependReactor("list", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return true, nil, refused
		}
		return false, nil, nil
	})
	dyn.PrependWatchReactor("*", func(clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return true, nil, refused
		}
		w := watch.NewRaceFreeFake()
		watches = append(watches, w)
		return true, w, nil
	})
	set := staticSet(t, map[string]*Client{"eu": dynamicClient(t, dyn)})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	var r federation.Reader
	var err error
	require.Eventually(t, func() bool { r, err = set.CachedReader("eu", cmGVR); return err == nil }, 5*time.Second, 10*time.Millisecond)
	_, err = r.Get(ctx, cmGVR, "a", "web")
	require.NoError(t, err)
	_, err = set.CacheHealth("eu", cmGVR)
	require.NoError(t, err, "in contact")

	cutAt := time.Now()
	mu.Lock()
	down = true
	for _, w := range watches {
		w.Stop() // the connection breaks
	}
	mu.Unlock()
	var since time.Time
	require.Eventually(t, func() bool { since, err = set.CacheHealth("eu", cmGVR); return err != nil }, 30*time.Second, 10*time.Millisecond)
	require.True(t, errors.Is(err, federation.ErrUnreachable), "%v", err)
	require.False(t, since.After(cutAt), "the last contact, %s, is before the cut, %s", since, cutAt)
	_, err = r.Get(ctx, cmGVR, "a", "web")
	require.NoError(t, err, "the cache keeps serving its last state")

	mu.Lock()
	down = false
	mu.Unlock()
	require.Eventually(t, func() bool { _, err = set.CacheHealth("eu", cmGVR); return err == nil }, 60*time.Second, 10*time.Millisecond, "in contact again")
}
