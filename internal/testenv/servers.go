package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// startAttempts is how often a process is started when it loses a race for its port
// (see freePorts).
const startAttempts = 3

// etcdServer is the one etcd that all apiservers of an Env share.
type etcdServer struct {
	proc *process
	url  string // client URL, http://127.0.0.1:port
}

// startEtcd starts etcd in dir/etcd-N and waits until it is healthy. On error no
// process is left running.
func startEtcd(ctx context.Context, binary, dir string, timeout time.Duration) (*etcdServer, error) {
	var err error
	for attempt := range startAttempts {
		var ports []int
		if ports, err = freePorts(2); err != nil {
			return nil, err
		}
		url := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		args := []string{
			"--name=testenv",
			"--data-dir=" + filepath.Join(dir, fmt.Sprintf("etcd-%d", attempt)),
			"--listen-client-urls=" + url,
			"--advertise-client-urls=" + url,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=testenv=" + peer,
			// The data is thrown away with the test: durability only costs time.
			"--unsafe-no-fsync",
		}
		var p *process
		if p, err = startProcess("etcd", binary, args, filepath.Join(dir, "etcd.log")); err != nil {
			return nil, err
		}
		plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		client := func() (*http.Client, error) { return plain, nil }
		if err = waitReady(ctx, p, timeout, httpProbe(client, url+"/health", "")); err == nil {
			return &etcdServer{proc: p, url: url}, nil
		}
		retry := p.addressInUse()
		_ = p.kill()
		if !retry {
			break
		}
	}
	return nil, err
}

// apiServer is one cluster's kube-apiserver.
type apiServer struct {
	name  string
	port  int
	caPEM []byte // the self-signed serving certificate and its CA, PEM
	proc  *process
}

type apiServerConfig struct {
	name    string
	port    int // 0: a free port
	binary  string
	dir     string // the Env's directory: tokens.csv and sa.key are there
	etcdURL string
	token   string
	timeout time.Duration
}

// startAPIServer starts the kube-apiserver for one cluster and waits until /readyz
// answers 200. On error no process is left running.
func startAPIServer(ctx context.Context, c apiServerConfig) (*apiServer, error) {
	certDir := filepath.Join(c.dir, c.name)
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("testenv: apiserver %s: %w", c.name, err)
	}
	var err error
	for range startAttempts {
		port := c.port
		if port == 0 {
			var ports []int
			if ports, err = freePorts(1); err != nil {
				return nil, err
			}
			port = ports[0]
		}
		s := &apiServer{name: c.name, port: port}
		var p *process
		p, err = startProcess("apiserver "+c.name, c.binary, apiServerArgs(c, s.port, certDir),
			filepath.Join(c.dir, c.name+".log"))
		if err != nil {
			return nil, err
		}
		s.proc = p
		crt := filepath.Join(certDir, "apiserver.crt")
		client := selfSignedClient(crt)
		url := fmt.Sprintf("https://127.0.0.1:%d/readyz", s.port)
		if err = waitReady(ctx, p, c.timeout, httpProbe(client, url, c.token)); err == nil {
			// Read the certificate again now that it is surely complete.
			if s.caPEM, err = os.ReadFile(crt); err == nil {
				return s, nil
			}
			err = fmt.Errorf("testenv: apiserver %s: %w", c.name, err)
		}
		retry := p.addressInUse()
		_ = p.kill()
		if !retry {
			break
		}
	}
	return nil, err
}

// apiServerArgs are the flags of a kube-apiserver v1.37 that serves one isolated
// cluster from the shared etcd.
func apiServerArgs(c apiServerConfig, port int, certDir string) []string {
	return []string{
		"--etcd-servers=" + c.etcdURL,
		"--etcd-prefix=/testenv/" + c.name, // the isolation between clusters
		"--bind-address=127.0.0.1",
		// Without it the apiserver advertises the host's default-route address, and
		// fails on machines without one.
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		// Self-signed serving certificate, valid for 127.0.0.1 (the bind address).
		"--cert-dir=" + certDir,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--authorization-mode=RBAC",
		"--token-auth-file=" + filepath.Join(c.dir, "tokens.csv"),
		// No controller-manager creates default service accounts, so pods could not
		// be admitted with this plugin on.
		"--disable-admission-plugins=ServiceAccount",
		"--service-account-issuer=https://127.0.0.1:" + strconv.Itoa(port) + "/",
		"--service-account-key-file=" + filepath.Join(c.dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(c.dir, "sa.key"),
		// With the advertise address on loopback the endpoint reconciler refuses to
		// start ("may not be in the loopback range"), and nothing routes to the
		// "kubernetes" Service here anyway.
		"--endpoint-reconciler-type=none",
		// Priority and fairness stays on, as in real clusters: turning it off made no
		// measurable difference to startup (2.7-2.8 s either way), and the admin token
		// is in system:masters, which flow control exempts.
	}
}

// selfSignedClient returns a client factory for an apiserver whose serving
// certificate is not written yet: it fails until crt exists, then returns a client
// that trusts it, so readiness checks verify TLS like the rest.Config will.
func selfSignedClient(crt string) func() (*http.Client, error) {
	var client *http.Client
	return func() (*http.Client, error) {
		if client != nil {
			return client, nil
		}
		pemBytes, err := os.ReadFile(crt)
		if err != nil {
			return nil, fmt.Errorf("serving certificate not written yet: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("no certificate in %s yet", crt)
		}
		client = &http.Client{Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			DisableKeepAlives: true, // no idle connection outlives the check
		}}
		return client, nil
	}
}
