package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// This file starts real API servers for the test: one etcd and a kube-apiserver per cluster,
// each under its own --etcd-prefix, on 127.0.0.1, from the binaries fedkit's
// hack/install-testbins.sh builds (fedkit's own test harness is an internal package, which
// another module cannot import). The test is skipped when they are missing, and fails
// instead when CI=true, so CI cannot pass without running it.

// testbinDir is $FEDKIT_TESTBIN_DIR, else where hack/install-testbins.sh puts the binaries.
func testbinDir() string {
	if d := os.Getenv("FEDKIT_TESTBIN_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "fedkit", "testbin", "v1.37.2-etcdv3.6.16")
}

// startAPIServers starts etcd and one kube-apiserver per name, and returns an admin
// rest.Config for each. Everything is killed when the test ends.
func startAPIServers(t *testing.T, names ...string) map[string]*rest.Config {
	t.Helper()
	bin := testbinDir()
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing in %s: run hack/install-testbins.sh (CI=true: not skipping)", b, bin)
			}
			t.Skipf("%s is missing in %s: run hack/install-testbins.sh from fedkit's root", b, bin)
		}
	}
	dir := t.TempDir()
	token := writeCredentials(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // startup on 2 busy cores
	defer cancel()

	ports := freePorts(t, 2+len(names))
	etcdURL, peerURL := "http://127.0.0.1:"+strconv.Itoa(ports[0]), "http://127.0.0.1:"+strconv.Itoa(ports[1])
	start(t, dir, "etcd", filepath.Join(bin, "etcd"), "--name=example", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=example="+peerURL, "--unsafe-no-fsync")
	waitOK(ctx, t, dir, "etcd", http.DefaultClient, etcdURL+"/health", "")

	out := map[string]*rest.Config{}
	for i, name := range names {
		port := strconv.Itoa(ports[2+i])
		certs := filepath.Join(dir, name)
		start(t, dir, name, filepath.Join(bin, "kube-apiserver"),
			"--etcd-servers="+etcdURL, "--etcd-prefix=/"+name,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+port,
			"--cert-dir="+certs, "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
			"--authorization-mode=RBAC", "--token-auth-file="+filepath.Join(dir, "tokens.csv"),
			"--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none",
			"--service-account-issuer=https://127.0.0.1:"+port+"/",
			"--service-account-key-file="+filepath.Join(dir, "sa.key"),
			"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"))
		out[name] = &rest.Config{Host: "https://127.0.0.1:" + port, BearerToken: token, QPS: 100, Burst: 200}
	}
	for _, name := range names {
		crt := filepath.Join(dir, name, "apiserver.crt")
		var ca []byte
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			var err error
			ca, err = os.ReadFile(crt)
			return err == nil && len(ca) > 0, nil
		})
		if err != nil {
			t.Fatalf("apiserver %s wrote no serving certificate: %v\n%s", name, err, logTail(dir, name))
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		waitOK(ctx, t, dir, name, client, out[name].Host+"/readyz", token)
		out[name].CAData = ca
	}
	return out
}

// writeCredentials writes the admin token file and the service-account key; it returns the
// token.
func writeCredentials(t *testing.T, dir string) string {
	t.Helper()
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	token := hex.EncodeToString(buf)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return token
}

// start starts a process with its output in dir/name.log, killed (and reaped) when the test
// ends, and by the kernel should the test binary die first.
func start(t *testing.T, dir, name, binary string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	_ = log.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// waitOK polls url until it answers 200; the process name logs to dir/name.log.
func waitOK(ctx context.Context, t *testing.T, dir, name string, client *http.Client, url, token string) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err
			return false, nil
		}
		_ = resp.Body.Close()
		last = fmt.Errorf("%s", resp.Status)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s not ready at %s: %v (last: %v)\n%s", name, url, err, last, logTail(dir, name))
	}
}

// logTail is the end of a process's log, for failure messages.
func logTail(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil {
		return ""
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freePorts returns n distinct free ports on 127.0.0.1.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out
}
