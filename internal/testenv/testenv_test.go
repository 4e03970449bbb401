package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) {
	os.Exit(Main(m, "host", "member1", "member2"))
}

func TestValidateClusters(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		wantErr string
	}{
		{name: "ok", names: []string{"host", "member1", "member-2"}},
		{name: "empty", names: nil, wantErr: "Clusters is empty"},
		{name: "duplicate", names: []string{"host", "host"}, wantErr: `duplicate cluster name "host"`},
		{name: "uppercase", names: []string{"Host"}, wantErr: `invalid cluster name "Host"`},
		{name: "slash", names: []string{"a/b"}, wantErr: `invalid cluster name "a/b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateClusters(tt.names)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.True(t, strings.HasPrefix(err.Error(), "testenv: "), err.Error())
		})
	}
}

func TestStartMissingBinaries(t *testing.T) {
	_, err := Start(t.Context(), Options{Clusters: []string{"host"}, BinDir: t.TempDir()})
	require.ErrorIs(t, err, ErrBinariesMissing)
}

// TestStartFailure uses scripts in place of the binaries to check that a process
// that fails to become ready is reported with the tail of its log, and killed.
func TestStartFailure(t *testing.T) {
	tests := []struct {
		name    string
		etcd    string // the fake etcd's script body
		want    []string
		timeout time.Duration
	}{
		{
			name: "exits",
			etcd: "echo starting; echo 'fatal: disk on fire' >&2; exit 3",
			want: []string{"testenv: etcd (pid ", "exited: exit status 3", "fatal: disk on fire", "starting"},
		},
		{
			name:    "hangs",
			etcd:    "echo 'waiting forever'; exec sleep 600",
			timeout: 500 * time.Millisecond,
			want:    []string{"still running", "context deadline exceeded", "connection refused", "waiting forever"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			writeScript(t, bin, "etcd", "echo $$ > "+bin+"/pid\n"+tt.etcd)
			writeScript(t, bin, "kube-apiserver", "exit 1")
			_, err := Start(t.Context(), Options{Clusters: []string{"host"}, BinDir: bin, ReadyTimeout: tt.timeout})
			require.Error(t, err)
			t.Log(err)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
			b, err := os.ReadFile(bin + "/pid")
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			requireGone(t, pid)
		})
	}
}

func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(dir+"/"+name, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

func TestBinDir(t *testing.T) {
	t.Setenv("FEDKIT_TESTBIN_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	require.Equal(t, "/cache/fedkit/testbin/v1.37.2-etcdv3.6.16", BinDir(Options{}))
	t.Setenv("FEDKIT_TESTBIN_DIR", "/env")
	require.Equal(t, "/env", BinDir(Options{}))
	require.Equal(t, "/opt", BinDir(Options{BinDir: "/opt"}))
}

// TestSharedIsolation shows that the clusters of one environment, sharing one etcd,
// do not see each other's objects.
func TestSharedIsolation(t *testing.T) {
	env := Shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	require.Equal(t, []string{"host", "member1", "member2"}, env.Names())
	require.Nil(t, env.Config("nope"))
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, name := range env.Names() {
		createNamespace(ctx, t, env.Config(name), name+"-"+suffix)
	}
	for _, in := range env.Names() {
		cs := kubernetes.NewForConfigOrDie(env.Config(in))
		for _, of := range env.Names() {
			_, err := cs.CoreV1().Namespaces().Get(ctx, of+"-"+suffix, metav1.GetOptions{})
			if in == of {
				require.NoError(t, err, "namespace of %s in %s", of, in)
			} else {
				require.True(t, apierrors.IsNotFound(err), "namespace of %s in %s: %v", of, in, err)
			}
		}
	}
	for _, name := range env.Names() {
		t.Logf("apiserver %s: %d MiB resident", name, rssMiB(env.servers[name].proc.pid()))
	}
	t.Logf("etcd: %d MiB resident", rssMiB(env.etcd.proc.pid()))
}

// TestStartStop starts its own environment of two clusters, checks their isolation
// and TLS verification, that one cluster can stop and start again, and that Stop leaves
// no process and no directory behind.
func TestStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("real API servers are skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	begin := time.Now()
	env, err := Start(ctx, Options{Clusters: []string{"a", "b"}, Logf: t.Logf})
	SkipIfMissing(t, err)
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	t.Logf("2 clusters started in %s", time.Since(begin).Round(time.Millisecond))

	createNamespace(ctx, t, env.Config("a"), "only-in-a")
	_, err = kubernetes.NewForConfigOrDie(env.Config("b")).CoreV1().Namespaces().Get(ctx, "only-in-a", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "namespace of a in b: %v", err)

	// TLS verification is on: without the CA the same request fails.
	noCA := env.Config("a")
	noCA.CAData = nil
	_, err = kubernetes.NewForConfigOrDie(noCA).CoreV1().Namespaces().Get(ctx, "only-in-a", metav1.GetOptions{})
	require.ErrorContains(t, err, "certificate")

	// One cluster stops and starts again, on the same address with the same certificate:
	// the same client reaches it, and its data is still there.
	clientA := kubernetes.NewForConfigOrDie(env.Config("a"))
	old := env.servers["a"].proc.pid()
	require.NoError(t, env.StopCluster("a"))
	requireGone(t, old)
	_, err = clientA.CoreV1().Namespaces().Get(ctx, "only-in-a", metav1.GetOptions{})
	require.True(t, utilnet.IsConnectionRefused(err), "a stopped cluster refuses connections: %v", err)
	require.NoError(t, env.StopCluster("a"), "stopping a stopped cluster")
	require.NoError(t, env.StartCluster(ctx, "a"))
	_, err = clientA.CoreV1().Namespaces().Get(ctx, "only-in-a", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, env.StartCluster(ctx, "a"), "starting a running cluster")

	pids := []int{env.etcd.proc.pid()}
	for _, s := range env.servers {
		pids = append(pids, s.proc.pid())
	}
	require.NoError(t, env.Stop())
	for _, pid := range pids {
		requireGone(t, pid)
	}
	_, err = os.Stat(env.dir)
	require.True(t, errors.Is(err, os.ErrNotExist), "%s still exists after Stop: %v", env.dir, err)
	require.NoError(t, env.Stop(), "Stop is idempotent")
}

// requireGone fails t if a process with pid exists (signal 0 probes without
// delivering anything).
func requireGone(t *testing.T, pid int) {
	t.Helper()
	err := syscall.Kill(pid, 0)
	require.True(t, errors.Is(err, syscall.ESRCH), "pid %d still exists: %v", pid, err)
}

func createNamespace(ctx context.Context, t *testing.T, cfg *rest.Config, name string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err = cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	require.NoError(t, err)
}

// rssMiB returns the resident memory of pid in MiB, or -1 if unknown (not Linux).
func rssMiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}
