package credentials_test

import (
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// failure is a member that fails in one way: its API endpoint, the CA bundle its Cluster
// carries, and what its Secret holds.
type failure struct {
	name     string
	endpoint string
	caBundle []byte
	// secret is the Secret's data; nil means {token: <the token>}.
	secret map[string]string
}

// failures starts the members, one per way a member can fail, each of which gets the token
// (or a kubeconfig holding it).
func failures(t *testing.T, token string) []failure {
	t.Helper()
	status := func(code int, reason, msg string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d}`, msg, reason, code)
		}
	}
	tlsServer := func(h http.Handler) (*httptest.Server, []byte) {
		s := httptest.NewTLSServer(h)
		t.Cleanup(s.Close)
		return s, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	}
	unauthorized, unauthorizedCA := tlsServer(status(http.StatusUnauthorized, "Unauthorized", "Unauthorized"))
	forbidden, forbiddenCA := tlsServer(status(http.StatusForbidden, "Forbidden", `forbidden: User "system:anonymous" cannot get path "/"`))
	// A member that answers with what it was sent: a misconfigured proxy, a hostile endpoint.
	echo, echoCA := tlsServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "rejected credentials: %s (query %s)", r.Header.Get("Authorization"), r.URL.RawQuery)
	}))
	echoJSON, echoJSONCA := tlsServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":"Forbidden","code":403}`, "token "+r.Header.Get("Authorization")+" is not allowed")
	}))
	// A member that quotes the request's credentials in a Warning header (RFC 7234), on
	// answers that succeed as well as on errors: client-go hands every Warning header to the
	// config's WarningHandler, whose default logs it through klog.
	warn, warnCA := tlsServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", fmt.Sprintf(`299 - "credentials %s seen"`, r.Header.Get("Authorization")))
		if r.URL.Path == "/readyz" || r.URL.Path == "/livez" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		status(http.StatusForbidden, "Forbidden", "not here")(w, r)
	}))
	badCA, _ := tlsServer(status(http.StatusOK, "", ""))
	_, otherCA := tlsServer(status(http.StatusOK, "", ""))
	plain := httptest.NewServer(status(http.StatusOK, "", ""))
	t.Cleanup(plain.Close)
	closed := closedPort(t)

	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: https://ignored.example.com}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, token)
	execKubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: https://ignored.example.com}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/echo, args: [%q]}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, token)

	return []failure{
		{name: "unreachable", endpoint: "https://" + closed},
		{name: "unresolvable", endpoint: "https://no-such-host.invalid"},
		{name: "not-tls", endpoint: "https://" + plain.Listener.Addr().String()},
		{name: "bad-ca", endpoint: badCA.URL, caBundle: otherCA},
		{name: "no-ca", endpoint: badCA.URL},
		{name: "unauthorized", endpoint: unauthorized.URL, caBundle: unauthorizedCA},
		{name: "forbidden", endpoint: forbidden.URL, caBundle: forbiddenCA},
		{name: "echo", endpoint: echo.URL, caBundle: echoCA},
		{name: "echo-status", endpoint: echoJSON.URL, caBundle: echoJSONCA},
		{name: "warning-echo", endpoint: warn.URL, caBundle: warnCA},
		{name: "kubeconfig", endpoint: unauthorized.URL, caBundle: unauthorizedCA, secret: map[string]string{"kubeconfig": kubeconfig}},
		{name: "kubeconfig-garbled", endpoint: unauthorized.URL, caBundle: unauthorizedCA, secret: map[string]string{"kubeconfig": "users: [{name: u, user: {token: " + token + "}"}},
		{name: "kubeconfig-exec", endpoint: unauthorized.URL, caBundle: unauthorizedCA, secret: map[string]string{"kubeconfig": execKubeconfig}},
		{name: "ca-bundle-garbage", endpoint: unauthorized.URL, caBundle: []byte("-----BEGIN CERTIFICATE-----\n" + token + "\n-----END CERTIFICATE-----\n")},
	}
}

// closedPort returns host:port where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
