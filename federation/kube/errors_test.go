package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/federation"
)

func TestIsUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"not found", apierrors.NewNotFound(gr, "x"), false},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("stale")), false},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("no")), false},
		{"internal error", apierrors.NewInternalError(errors.New("boom")), false},
		{"service unavailable", apierrors.NewServiceUnavailable("not ready"), true},
		{"gateway timeout", apierrors.NewTimeoutError("slow", 1), true},
		{"bad gateway", apierrors.NewGenericServerResponse(http.StatusBadGateway, "get", gr, "x", "", 0, false), true},
		{"caller canceled", fmt.Errorf("wrapped: %w", context.Canceled), false},
		{"caller canceled inside url.Error", &url.Error{Op: "Get", URL: "https://x", Err: context.Canceled}, false},
		{"deadline", context.DeadlineExceeded, true},
		{"connection refused", &url.Error{Op: "Get", URL: "https://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, true},
		{"bare errno", syscall.ECONNRESET, true},
		{"dns", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"unknown authority", x509.UnknownAuthorityError{}, true},
		{"plain error", errors.New("decode: bad json"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, isUnreachable(tt.err))
			wrapped := wrapErr("get configmaps default/x", tt.err)
			require.Equal(t, tt.want, errors.Is(wrapped, federation.ErrUnreachable))
			require.ErrorIs(t, wrapped, tt.err)
			require.Equal(t, apierrors.ReasonForError(tt.err), apierrors.ReasonForError(wrapped), "apierrors reason survives wrapping")
		})
	}
	require.NoError(t, wrapErr("x", nil))
}

// TestNetworkErrors drives a real Client against servers that fail in the ways networks do.
func TestNetworkErrors(t *testing.T) {
	// A port that was open and is now closed: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := l.Addr().String()
	require.NoError(t, l.Close())

	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close)

	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "etcd is down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(unavailable.Close)

	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"configmaps \"x\" not found"}`)
	}))
	t.Cleanup(notFound.Close)

	// A TLS server whose certificate the client does not trust (no CA given).
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(untrusted.Close)

	tests := []struct {
		name            string
		host            string
		timeout         time.Duration
		wantUnreachable bool
		wantNotFound    bool
	}{
		{name: "connection refused", host: "http://" + closedAddr, wantUnreachable: true},
		{name: "hanging server, caller deadline", host: hanging.URL, timeout: 200 * time.Millisecond, wantUnreachable: true},
		{name: "503 from the server", host: unavailable.URL, wantUnreachable: true},
		{name: "untrusted certificate", host: untrusted.URL, wantUnreachable: true},
		{name: "404 is an answer", host: notFound.URL, wantNotFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(&rest.Config{Host: tt.host}, Options{})
			require.NoError(t, err)
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			_, err = c.Get(ctx, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x")
			require.Error(t, err)
			require.Regexp(t, `^kube: get configmaps default/x: `, err.Error())
			require.Equal(t, tt.wantUnreachable, errors.Is(err, federation.ErrUnreachable), "unreachable: %v", err)
			require.Equal(t, tt.wantNotFound, apierrors.IsNotFound(err), "not found: %v", err)

			herr := c.Healthy(ctx)
			require.Error(t, herr)
			require.Equal(t, tt.wantUnreachable, errors.Is(herr, federation.ErrUnreachable), "health: %v", herr)
		})
	}

	t.Run("caller cancels", func(t *testing.T) {
		c, err := New(&rest.Config{Host: hanging.URL}, Options{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err = c.Get(ctx, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x")
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, federation.ErrUnreachable)
	})
}
