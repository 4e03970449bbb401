package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	gosync "sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/fedkit/fedkit/federation/kube"
)

// A member that quotes the request's credentials in its answer (a misconfigured proxy, a
// hostile endpoint) does not get them into the Client's errors, which end up in logs and in
// Cluster and federated status on the host, readable by far more people than the Secret
// (found by the credentials test, test/credentials). The errors keep their meaning.
func TestErrorsNeverCarryTheClientsCredentials(t *testing.T) {
	const token, password = "canary-token-8c1f", "canary-password-77a2"
	echo := func(code int, asStatus bool) *httptest.Server {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			said := r.Header.Get("Authorization")
			if u, p, ok := r.BasicAuth(); ok {
				said = u + ":" + p
			}
			if asStatus {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":"Forbidden","code":%d}`, "not allowed: "+said, code)
				return
			}
			w.WriteHeader(code)
			fmt.Fprintf(w, "rejected %s", said)
		}))
		t.Cleanup(s.Close)
		return s
	}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name   string
		server *httptest.Server
		auth   func(*rest.Config)
		is     func(error) bool
		// quoted: the answer's text makes it into the error (client-go keeps a Status's
		// message; a text answer to a 401 becomes its own generic message).
		quoted bool
	}{
		{name: "token in a Status", server: echo(http.StatusForbidden, true), auth: func(c *rest.Config) { c.BearerToken = token }, is: apierrors.IsForbidden, quoted: true},
		{name: "token in a text answer", server: echo(http.StatusUnauthorized, false), auth: func(c *rest.Config) { c.BearerToken = token }, is: apierrors.IsUnauthorized},
		{name: "password", server: echo(http.StatusForbidden, true), auth: func(c *rest.Config) { c.Username, c.Password = "admin", password }, is: apierrors.IsForbidden, quoted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &rest.Config{Host: tc.server.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
			tc.auth(cfg)
			c, err := kube.New(cfg, kube.Options{})
			require.NoError(t, err)
			_, getErr := c.Get(context.Background(), configMaps, "default", "x")
			healthErr := c.Healthy(context.Background())
			for _, err := range []error{getErr, healthErr} {
				require.Error(t, err)
				for _, s := range []string{token, password} {
					require.NotContains(t, err.Error(), s)
					require.NotContains(t, fmt.Sprintf("%+v", err), s)
				}
				if tc.quoted {
					require.Contains(t, err.Error(), "[redacted]", "the answer is kept, the credential cut out")
				}
			}
			require.True(t, tc.is(getErr), "%v", getErr)
		})
	}
}

// A Warning header quoting the request's credentials, on an answer that succeeds, reaches
// the log through the request's context logger with the credentials cut out, never through
// client-go's process-wide default handler (klog) as it was sent.
func TestWarningsNeverCarryTheClientsCredentials(t *testing.T) {
	const token = "canary-token-4b9e"
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", fmt.Sprintf(`299 - "seen %s"`, r.Header.Get("Authorization")))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)
	}))
	t.Cleanup(s.Close)
	var lines []string
	var mu gosync.Mutex
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	klog.SetLogger(funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, "klog: "+args)
	}, funcr.Options{}))
	t.Cleanup(klog.ClearLogger)

	c, err := kube.New(&rest.Config{Host: s.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, kube.Options{})
	require.NoError(t, err)
	_, err = c.Get(logr.NewContext(context.Background(), log), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x")
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, lines, 1, "the warning is logged once: %q", lines)
	require.NotContains(t, lines[0], token)
	require.Contains(t, lines[0], "Warning: seen Bearer [redacted]")
	require.NotContains(t, lines[0], "klog: ", "logged through the request's logger")
}
