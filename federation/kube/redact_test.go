package kube_test

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/fedkit/fedkit/federation"
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

// canary is a bearer token recognisable anywhere it leaks to.
const canary = "fedkit-canary-7d1e0b52-bearer-token"

// echoServer is a member API server that quotes the request's Authorization header back in
// every answer, as a misconfigured proxy or a verbose server in front of a member might:
// status is the HTTP status, asStatus whether the body is a Kubernetes Status (its message
// quoting the header) or plain text.
func echoServer(t *testing.T, status int, asStatus bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		quoted := "you sent " + r.Header.Get("Authorization")
		if asStatus {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":"Unauthorized","code":%d,"details":{"causes":[{"message":%q}]}}`, quoted, status, quoted)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		fmt.Fprint(w, quoted)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCredentialsNeverLeak: a member whose answers quote the credentials sent to it never
// gets them into an error returned by the set's clients or its cached readers, nor into the
// set's logs. (Before the fix, client-go's errors carried the member's text verbatim, and the
// loops copy errors into status messages and events on the host, which far more people read
// than the Secret.)
func TestCredentialsNeverLeak(t *testing.T) {
	basicAuth := kubeconfig("username: admin, password: "+canary, "")
	for _, tt := range []struct {
		name     string
		status   int
		asStatus bool
		secret   map[string]string
	}{
		{"plain-text 500", http.StatusInternalServerError, false, nil},
		{"plain-text 401", http.StatusUnauthorized, false, nil},
		{"Status 401", http.StatusUnauthorized, true, nil},
		{"Status 503", http.StatusServiceUnavailable, true, nil},
		{"basic auth, Status 403", http.StatusForbidden, true, map[string]string{"kubeconfig": basicAuth}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := echoServer(t, tt.status, tt.asStatus)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			cluster := clusterObject("eu", srv.URL, "eu-creds")
			cluster.Object["spec"].(map[string]any)["caBundle"] = base64.StdEncoding.EncodeToString(ca)
			logs := &logSink{}
			secret := tt.secret
			if secret == nil {
				secret = map[string]string{"token": canary}
			}
			host := fakeHost(cluster, secretObject("fedkit-system", "eu-creds", "eu", secret))
			set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Logger: logs.logger(), Client: kube.Options{DiscoveryTimeout: 5 * time.Second}})
			require.NoError(t, err)
			_, err = set.Reconcile(t.Context(), federation.Key{Name: "eu"})
			require.NoError(t, err)
			c, err := set.Client("eu")
			require.NoError(t, err)

			ctx := t.Context()
			var errs []error
			note := func(err error) {
				require.Error(t, err, "the member refuses everything")
				errs = append(errs, err)
			}
			_, err = c.Get(ctx, configMaps, "default", "a")
			note(err)
			_, err = c.List(ctx, configMaps, "default", metav1.ListOptions{})
			note(err)
			_, err = c.Create(ctx, configMaps, cm("default", "a"))
			note(err)
			_, err = c.Update(ctx, configMaps, cm("default", "a"))
			note(err)
			_, err = c.UpdateStatus(ctx, configMaps, cm("default", "a"))
			note(err)
			_, err = c.Patch(ctx, configMaps, "default", "a", types.MergePatchType, []byte(`{}`))
			note(err)
			note(c.Delete(ctx, configMaps, "default", "a", metav1.DeleteOptions{}))
			_, err = c.Watch(ctx, configMaps, "default", metav1.ListOptions{})
			note(err)
			note(c.(federation.HealthChecker).Healthy(ctx))
			_, err = c.(federation.VersionGetter).ServerVersion(ctx)
			note(err)

			// The token, or the password in any form the request carried it.
			leaks := []string{canary, base64.StdEncoding.EncodeToString([]byte("admin:" + canary))}
			clean := func(what, s string) {
				t.Helper()
				for _, l := range leaks {
					require.NotContains(t, s, l, what)
				}
			}
			for _, err := range errs {
				clean("error", err.Error())
				clean("error", fmt.Sprintf("%+v", err))
				// What callers dig out of the chain is clean too.
				for e := err; e != nil; e = errors.Unwrap(e) {
					clean("wrapped error", e.Error())
				}
			}
			// A cached reader's informer lists the member too; its failures reach the logs.
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- set.Run(runCtx) }()
			require.Eventually(t, func() bool {
				r, err := set.CachedReader("eu", configMaps)
				if err != nil {
					return false
				}
				rctx, rcancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer rcancel()
				_, err = r.Get(rctx, configMaps, "default", "a")
				require.Error(t, err)
				clean("cached read", err.Error())
				return strings.Contains(logs.String(), "you sent")
			}, 10*time.Second, 10*time.Millisecond, "the informer's failure, quoting the member, is logged")
			cancel()
			require.NoError(t, <-done)

			clean("logs", logs.String())
			if msg := errs[0].Error(); strings.Contains(msg, "you sent") {
				require.Contains(t, msg, "[redacted]", "the member's answer is kept, its credential is not")
			}
		})
	}
}
