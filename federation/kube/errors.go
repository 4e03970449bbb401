package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fedkit/fedkit/federation"
)

// Sentinel errors of package kube. The federation sentinels (federation.ErrUnreachable,
// federation.ErrClusterNotFound, federation.ErrClusterNotReady) are wrapped where they apply.
var (
	// ErrNoDiscovery is returned by Healthy, ServerVersion and RESTMapping of a Client built
	// on Options.Dynamic: a bare dynamic.Interface has no discovery client. It wraps
	// errors.ErrUnsupported, so callers that do not import this package (a cluster monitor
	// written against federation.HealthChecker) can fall back to another probe.
	ErrNoDiscovery = fmt.Errorf("kube: no discovery client: %w", errors.ErrUnsupported)

	// ErrInvalidCredentials is wrapped by errors about a cluster's Secret or kubeconfig: the
	// Secret lacks a "token" or "kubeconfig" key, the kubeconfig does not parse, or it asks for
	// something a Secret may not (exec plugins, auth providers, files on the controller's disk).
	// Such errors never contain the credentials themselves.
	ErrInvalidCredentials = errors.New("kube: invalid cluster credentials")

	// ErrInvalidConfig is wrapped by errors about a Cluster's spec or a rest.Config that cannot
	// be turned into a client: a malformed apiEndpoint or proxyURL, a CA bundle that does not
	// parse.
	ErrInvalidConfig = errors.New("kube: invalid client configuration")

	// ErrNotRunning is returned by the cached readers of a ClusterSet whose Run is not
	// running: the informers behind them live only as long as Run.
	ErrNotRunning = errors.New("kube: cluster set is not running")
)

// wrapErr prefixes err with "kube: " and the operation, and adds federation.ErrUnreachable when
// the failure came from the network rather than from the API. The original error stays in the
// chain, so apierrors.IsNotFound, IsConflict and friends keep working, as do errors.Is(err,
// context.Canceled) and errors.As(err, **url.Error).
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if isUnreachable(err) {
		return fmt.Errorf("kube: %s: %w: %w", op, federation.ErrUnreachable, err)
	}
	return fmt.Errorf("kube: %s: %w", op, err)
}

// redactedError is an error whose message had credentials cut out. It unwraps to the
// original, so errors.Is and the apierrors predicates keep working; only its text changes.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns err with every occurrence of the secrets cut out of its message. An API
// server never quotes a request's credentials, but a misconfigured proxy or a hostile
// endpoint may, and errors travel to logs and to status on the host, which far more people
// read than the Secret that holds the credentials.
func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// isUnreachable reports whether err means "the API server could not be reached or did not
// answer", as opposed to "the API server answered no".
//
// Why these rules: a cluster monitor marks a cluster offline on ErrUnreachable and placement
// moves work away from it, so the test must not fire on ordinary API answers (NotFound,
// Conflict, Forbidden, Invalid) nor on the caller's own cancellation. It fires on:
//
//   - transport failures: refused or reset connections, DNS failures, dial and TLS handshake
//     timeouts, certificate verification failures (a cluster whose certificate we cannot
//     trust is one we cannot reach), and connections dropped mid-response;
//   - a caller's deadline that expired while waiting for the server (a hung server or a
//     partition that drops packets looks exactly like this);
//   - 502, 503 and 504 answers, which come from proxies in front of the server or from a
//     server that is not ready or cannot reach its storage.
func isUnreachable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch status.Status().Code {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ETIMEDOUT, syscall.EPIPE} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var (
		urlErr   *url.Error
		netErr   net.Error
		dnsErr   *net.DNSError
		opErr    *net.OpError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	// client-go reports every transport failure as a *url.Error; everything below it is the
	// network or TLS.
	return errors.As(err, &urlErr) || errors.As(err, &dnsErr) || errors.As(err, &opErr) ||
		errors.As(err, &netErr) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid)
}
