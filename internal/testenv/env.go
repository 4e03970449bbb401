package testenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
)

// Versions of the binaries that hack/install-testbins.sh builds. Keep the two in sync.
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.6.16"
)

// ErrBinariesMissing is returned (wrapped) by Start when kube-apiserver or etcd is not
// in the binary directory. Run hack/install-testbins.sh to build them.
var ErrBinariesMissing = errors.New("testenv: test binaries missing")

// DefaultReadyTimeout is how long Start waits for each process to become ready when
// Options.ReadyTimeout is zero. Startup takes 3-4 s on an idle machine but can pass
// 20 s on 2 loaded cores.
const DefaultReadyTimeout = 120 * time.Second

// Options configures Start. The zero value is not useful: Clusters is required.
type Options struct {
	// Clusters names the clusters to start, one kube-apiserver each, e.g. "host",
	// "member1". Names must be DNS labels (lowercase letters, digits and '-') and unique.
	Clusters []string

	// BinDir holds the kube-apiserver and etcd binaries. Empty means
	// $FEDKIT_TESTBIN_DIR, else DefaultBinDir().
	BinDir string

	// ReadyTimeout bounds the wait for each process to become ready. Zero means
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration

	// Logf, when set, receives progress messages (ports, readiness, timings).
	Logf func(format string, args ...any)
}

// DefaultBinDir is where hack/install-testbins.sh puts the binaries by default:
// ${XDG_CACHE_HOME:-$HOME/.cache}/fedkit/testbin/<versions>.
func DefaultBinDir() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "fedkit", "testbin", KubernetesVersion+"-etcd"+EtcdVersion)
}

// BinDir returns the directory Start would use for opts: opts.BinDir, else
// $FEDKIT_TESTBIN_DIR, else DefaultBinDir().
func BinDir(opts Options) string {
	if opts.BinDir != "" {
		return opts.BinDir
	}
	if d := os.Getenv("FEDKIT_TESTBIN_DIR"); d != "" {
		return d
	}
	return DefaultBinDir()
}

// Env is a running set of clusters. Its methods are safe for concurrent use.
type Env struct {
	dir     string // temporary directory: logs, etcd data, certs, token and key files
	token   string // admin bearer token, valid on every apiserver
	names   []string
	etcd    *etcdServer
	servers map[string]*apiServer
	bin     string        // the binaries' directory, for StartCluster
	timeout time.Duration // Options.ReadyTimeout, for StartCluster

	// mu guards the processes of servers, which StopCluster and StartCluster replace.
	mu sync.Mutex

	stopOnce sync.Once
	stopErr  error
}

// Start starts etcd, then one kube-apiserver per cluster in parallel, and returns
// when all of them answer /readyz. ctx bounds only the startup: the processes run
// until Stop. On error, everything started so far is stopped and cleaned up.
func Start(ctx context.Context, opts Options) (*Env, error) {
	if err := validateClusters(opts.Clusters); err != nil {
		return nil, err
	}
	bin := BinDir(opts)
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if fi, err := os.Stat(filepath.Join(bin, b)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("%w: no executable %s in %s; run hack/install-testbins.sh", ErrBinariesMissing, b, bin)
		}
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}

	dir, err := os.MkdirTemp("", "fedkit-testenv-")
	if err != nil {
		return nil, fmt.Errorf("testenv: creating the temporary directory: %w", err)
	}
	env := &Env{dir: dir, names: slices.Clone(opts.Clusters), servers: map[string]*apiServer{}, bin: bin, timeout: opts.ReadyTimeout}
	ok := false
	defer func() {
		if !ok {
			_ = env.Stop()
		}
	}()
	if err := env.writeCredentials(); err != nil {
		return nil, err
	}

	begin := time.Now()
	env.etcd, err = startEtcd(ctx, filepath.Join(bin, "etcd"), dir, opts.ReadyTimeout)
	if err != nil {
		return nil, err
	}
	logf("testenv: etcd ready on %s after %s", env.etcd.url, time.Since(begin).Round(time.Millisecond))

	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range env.names {
		g.Go(func() error {
			s, err := startAPIServer(gctx, apiServerConfig{
				name:    name,
				binary:  filepath.Join(bin, "kube-apiserver"),
				dir:     dir,
				etcdURL: env.etcd.url,
				token:   env.token,
				timeout: opts.ReadyTimeout,
			})
			if err != nil {
				return err // startAPIServer killed its process already
			}
			mu.Lock()
			env.servers[name] = s
			mu.Unlock()
			logf("testenv: apiserver %q ready on https://127.0.0.1:%d after %s",
				name, s.port, time.Since(begin).Round(time.Millisecond))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	logf("testenv: %d cluster(s) ready after %s (dir %s)", len(env.names), time.Since(begin).Round(time.Millisecond), dir)
	ok = true
	return env, nil
}

func validateClusters(names []string) error {
	if len(names) == 0 {
		return errors.New("testenv: Options.Clusters is empty")
	}
	seen := map[string]bool{}
	for _, n := range names {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			return fmt.Errorf("testenv: invalid cluster name %q: %s", n, strings.Join(errs, "; "))
		}
		if seen[n] {
			return fmt.Errorf("testenv: duplicate cluster name %q", n)
		}
		seen[n] = true
	}
	return nil
}

// writeCredentials writes the static token file (one admin token in system:masters)
// and an RSA key that the apiservers use to sign and verify service-account tokens.
func (e *Env) writeCredentials() error {
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return fmt.Errorf("testenv: generating the admin token: %w", err)
	}
	e.token = hex.EncodeToString(buf)
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n", e.token)
	if err := os.WriteFile(filepath.Join(e.dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return fmt.Errorf("testenv: writing the token file: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("testenv: generating the service-account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("testenv: encoding the service-account key: %w", err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(filepath.Join(e.dir, "sa.key"), pemKey, 0o600); err != nil {
		return fmt.Errorf("testenv: writing the service-account key: %w", err)
	}
	return nil
}

// Names returns the cluster names in the order given to Start.
func (e *Env) Names() []string { return slices.Clone(e.names) }

// Config returns a new rest.Config for the named cluster, or nil if there is no such
// cluster. It authenticates as an admin (group system:masters) with a bearer token
// and verifies the apiserver's self-signed certificate. The caller may modify it.
func (e *Env) Config(name string) *rest.Config {
	s, ok := e.servers[name]
	if !ok {
		return nil
	}
	return &rest.Config{
		Host:            fmt.Sprintf("https://127.0.0.1:%d", s.port),
		BearerToken:     e.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: slices.Clone(s.caPEM)},
		// Tests create many objects quickly; client-go's default of 5 QPS would make
		// them slow without testing anything.
		QPS:   200,
		Burst: 400,
	}
}

// StopCluster kills the named cluster's apiserver, as a crash or a network cut would look
// to its clients: connections are refused until StartCluster. The cluster's data stays in
// etcd. Stopping a stopped cluster does nothing.
func (e *Env) StopCluster(name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.servers[name]
	if !ok {
		return fmt.Errorf("testenv: stop: no cluster %q", name)
	}
	return s.proc.kill()
}

// StartCluster starts the named cluster's apiserver again after StopCluster, on the same
// port and with the same serving certificate, so its rest.Config (and every client built from
// it) works again; it returns when /readyz answers. Starting a running cluster does nothing.
func (e *Env) StartCluster(ctx context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.servers[name]
	if !ok {
		return fmt.Errorf("testenv: start: no cluster %q", name)
	}
	if !s.proc.exited() {
		return nil
	}
	restarted, err := startAPIServer(ctx, apiServerConfig{
		name:    name,
		port:    s.port,
		binary:  filepath.Join(e.bin, "kube-apiserver"),
		dir:     e.dir,
		etcdURL: e.etcd.url,
		token:   e.token,
		timeout: e.timeout,
	})
	if err != nil {
		return err
	}
	s.proc = restarted.proc
	return nil
}

// Stop kills the apiservers, then etcd, waits for them to exit and removes the
// temporary directory. It is idempotent: later calls return the first call's result.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		var errs []error
		// Kill the apiservers together: they are independent, and each kill waits.
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, s := range e.servers {
			wg.Go(func() {
				if err := s.proc.kill(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if e.etcd != nil {
			if err := e.etcd.proc.kill(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := os.RemoveAll(e.dir); err != nil {
			errs = append(errs, fmt.Errorf("testenv: removing %s: %w", e.dir, err))
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}
