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
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

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
