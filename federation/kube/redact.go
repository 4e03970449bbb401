package kube

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/fedkit/fedkit/federation"
)

// minSecretLen is the shortest credential the transport redacts: shorter ones (a two-letter
// password) would turn ordinary words of a message into "[redacted]" and hide nothing a
// reader could not guess.
const minSecretLen = 6

// redacted replaces a credential in what a member answered.
var redacted = []byte("[redacted]")

// maxErrorBody bounds how much of an error answer is read to be redacted; the rest is
// dropped. client-go quotes an error body in its errors, and a real API server's are a few
// hundred bytes.
const maxErrorBody = 1 << 20

// redactCredentials wraps the transport of cfg so that the body of every error answer
// (status 400 and above) and the Warning headers of every answer have the credentials cfg
// sends (its bearer token, its basic-auth password and header) replaced by "[redacted]"
// before client-go reads them. It also sets cfg's warning handler to one that logs through
// the request's context logger, as client-go's default does, after cutting the same
// credentials out: a Warning header reaches the log on answers that succeed too.
//
// Why: client-go puts the text of an error answer into the error it returns (a Status's
// message, or "an error on the server (\"...\")"), and the loops copy errors into status
// conditions, events and logs on the host, which far more people can read than the
// cluster's Secret. A member, or a proxy in front of it, that quotes the request's
// Authorization header back (a debugging proxy, a misconfigured authenticator) would
// otherwise publish the federation's credentials for that cluster. Successful answers
// (objects, lists, watch streams) are passed through untouched.
func redactCredentials(cfg *rest.Config) {
	var secrets [][]byte
	add := func(s string) {
		if len(s) >= minSecretLen {
			secrets = append(secrets, []byte(s))
		}
	}
	add(cfg.BearerToken)
	add(cfg.Password)
	if cfg.Password != "" {
		add(base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password)))
	}
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = redactingWarnings{secrets: secrets}
	if len(secrets) == 0 {
		return
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &redactingTransport{next: rt, secrets: secrets}
	})
}

// redactingWarnings logs the Warning headers of answers (code 299, as client-go's
// WarningLogger does) through the context's logger, with the credentials cut out, and hands
// them to the request's warning handler (federation.WithWarningHandler). It is set
// on every rest.Config fedkit builds, so no Warning reaches client-go's process-wide default
// handler.
type redactingWarnings struct {
	secrets [][]byte
}

func (w redactingWarnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, message string) {
	if code != 299 || message == "" {
		return
	}
	for _, s := range w.secrets {
		message = strings.ReplaceAll(message, string(s), string(redacted))
	}
	klog.FromContext(ctx).Info("Warning: " + message)
	federation.HandleWarning(ctx, message)
}

// redactingTransport removes secrets from the bodies of error answers.
type redactingTransport struct {
	next    http.RoundTripper
	secrets [][]byte
}

func (t *redactingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	t.redactWarnings(resp.Header)
	if resp.StatusCode < http.StatusBadRequest || resp.Body == nil {
		return resp, nil
	}
	// A body cut short is returned as far as it was read: client-go reports the status.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	for _, s := range t.secrets {
		body = bytes.ReplaceAll(body, s, redacted)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// redactWarnings cuts the secrets out of the Warning headers of h, which client-go hands to
// the warning handler of every answer, successful or not.
func (t *redactingTransport) redactWarnings(h http.Header) {
	values := h.Values("Warning")
	if len(values) == 0 {
		return
	}
	out := make([]string, len(values))
	for i, v := range values {
		b := []byte(v)
		for _, s := range t.secrets {
			b = bytes.ReplaceAll(b, s, redacted)
		}
		out[i] = string(b)
	}
	h["Warning"] = out
}

// WrappedRoundTripper returns the transport underneath, as client-go's wrappers do.
func (t *redactingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }
