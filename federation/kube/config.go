package kube

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/fedkit/fedkit/federation"
)

// Keys of a cluster's Secret. "token" wins when both are present.
const (
	// TokenKey holds a bearer token, e.g. a service account's.
	TokenKey = "token"
	// KubeconfigKey holds a kubeconfig; only the credentials of its current context are used.
	KubeconfigKey = "kubeconfig"
)

// RESTConfig returns the rest.Config that reaches cluster with the credentials in secret, as
// ClusterSet builds it. It is exported for embedders that need another kind of client (a typed
// clientset, a controller-runtime client) for a registered cluster.
//
// The Cluster's spec is authoritative for where and how to connect, and must pass
// federation.ValidateClusterConnection:
//
//   - spec.apiEndpoint is the server; it must be an https URL, so credentials never travel in
//     clear text, without user information, query or fragment.
//   - spec.caBundle verifies the server's certificate. When it is empty, a kubeconfig's
//     certificate-authority-data is used, and then the system's roots. TLS verification is
//     always on unless spec.insecureSkipTLSVerify is true, the explicit opt-out for throw-away
//     test clusters (a kubeconfig's insecure-skip-tls-verify is ignored).
//   - spec.proxyURL, when set, routes every request through an http, https or socks5 proxy
//     (a kubeconfig's proxy-url is ignored).
//
// The Secret supplies credentials: the "token" key (a bearer token), or the "kubeconfig" key,
// whose current context's user may carry a token, a client certificate and key (inline data),
// basic auth or impersonation, and whose cluster entry may carry certificate-authority-data and
// tls-server-name. A kubeconfig in a Secret may not run exec plugins, use auth providers or
// name files (tokenFile, client-certificate, client-key, certificate-authority): those would
// run commands or read files on the controller's machine on behalf of whoever can write the
// Secret. Such a kubeconfig is an error wrapping ErrInvalidCredentials.
//
// Errors never contain credentials: not the token, not the kubeconfig, not the password of a
// proxy URL. That is why a kubeconfig that does not parse is reported without the parser's
// message, which may quote the text around the error.
func RESTConfig(cluster *federation.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if cluster == nil || secret == nil {
		return nil, fmt.Errorf("%w: nil Cluster or Secret", ErrInvalidConfig)
	}
	cfg, err := endpointConfig(cluster)
	if err != nil {
		return nil, err
	}
	ref := secret.Namespace + "/" + secret.Name
	switch {
	case len(secret.Data[TokenKey]) > 0:
		cfg.BearerToken = strings.TrimSpace(string(secret.Data[TokenKey]))
		if cfg.BearerToken == "" {
			return nil, fmt.Errorf("%w: Secret %s: key %q is blank", ErrInvalidCredentials, ref, TokenKey)
		}
	case len(secret.Data[KubeconfigKey]) > 0:
		if err := applyKubeconfig(cfg, secret.Data[KubeconfigKey], len(cluster.Spec.CABundle) > 0); err != nil {
			return nil, fmt.Errorf("%w: Secret %s: key %q: %v", ErrInvalidCredentials, ref, KubeconfigKey, err)
		}
	default:
		return nil, fmt.Errorf("%w: Secret %s has neither a %q nor a %q key", ErrInvalidCredentials, ref, TokenKey, KubeconfigKey)
	}
	if cfg.Insecure {
		// client-go refuses a CA together with the insecure flag.
		cfg.CAData = nil
	}
	return cfg, nil
}

// endpointConfig turns the connection fields of a Cluster's spec into a rest.Config without
// credentials. The fields are checked by federation.ValidateClusterConnection, the rule every
// fedkit package applies to them, whose errors never quote credentials.
func endpointConfig(cluster *federation.Cluster) (*rest.Config, error) {
	spec := cluster.Spec
	if errs := federation.ValidateClusterConnection(&spec, field.NewPath("spec")); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, errs.ToAggregate())
	}
	u, err := url.Parse(spec.APIEndpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: spec.apiEndpoint is not a URL", ErrInvalidConfig) // not quoted: see above
	}
	cfg := &rest.Config{Host: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()}
	if len(spec.CABundle) > 0 {
		if !x509.NewCertPool().AppendCertsFromPEM(spec.CABundle) {
			return nil, fmt.Errorf("%w: spec.caBundle holds no PEM certificate", ErrInvalidConfig)
		}
		cfg.CAData = append([]byte(nil), spec.CABundle...)
	}
	cfg.Insecure = spec.InsecureSkipTLSVerify
	if spec.ProxyURL != "" {
		p, err := url.Parse(spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("%w: spec.proxyURL is not a URL", ErrInvalidConfig)
		}
		cfg.Proxy = http.ProxyURL(p)
	}
	return cfg, nil
}

// errNoParse is reported instead of the kubeconfig parser's message, which may quote the
// credentials around the syntax error.
var errNoParse = errors.New("not a kubeconfig (the parser's message is withheld because it may quote credentials)")

// applyKubeconfig copies the credentials of data's current context into cfg. haveCA says the
// Cluster's spec already has a CA bundle, which wins over the kubeconfig's.
func applyKubeconfig(cfg *rest.Config, data []byte, haveCA bool) error {
	kc, err := clientcmd.Load(data)
	if err != nil {
		return errNoParse
	}
	name := kc.CurrentContext
	if name == "" && len(kc.Contexts) == 1 {
		for n := range kc.Contexts {
			name = n
		}
	}
	kctx := kc.Contexts[name]
	if kctx == nil {
		return fmt.Errorf("no current context")
	}
	ai := kc.AuthInfos[kctx.AuthInfo]
	if ai == nil {
		return fmt.Errorf("context %q names no user", name)
	}
	if err := checkAuthInfo(ai); err != nil {
		return err
	}
	if c := kc.Clusters[kctx.Cluster]; c != nil {
		if c.CertificateAuthority != "" {
			return fmt.Errorf("cluster %q names a certificate-authority file; use certificate-authority-data", kctx.Cluster)
		}
		if !haveCA && len(c.CertificateAuthorityData) > 0 {
			cfg.CAData = c.CertificateAuthorityData
		}
		cfg.ServerName = c.TLSServerName
	}
	cfg.BearerToken = ai.Token
	cfg.CertData, cfg.KeyData = ai.ClientCertificateData, ai.ClientKeyData
	cfg.Username, cfg.Password = ai.Username, ai.Password
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: ai.Impersonate, UID: ai.ImpersonateUID, Groups: ai.ImpersonateGroups, Extra: ai.ImpersonateUserExtra,
	}
	if cfg.BearerToken == "" && len(cfg.CertData) == 0 && cfg.Username == "" {
		return fmt.Errorf("user %q has no token, client certificate or basic auth", kctx.AuthInfo)
	}
	if (len(cfg.CertData) > 0) != (len(cfg.KeyData) > 0) {
		return fmt.Errorf("user %q needs both client-certificate-data and client-key-data", kctx.AuthInfo)
	}
	return nil
}

// checkAuthInfo refuses what a kubeconfig from a Secret may not do on the controller's machine.
func checkAuthInfo(ai *clientcmdapi.AuthInfo) error {
	switch {
	case ai.Exec != nil:
		return errors.New("exec credential plugins are not allowed in a Secret")
	case ai.AuthProvider != nil:
		return errors.New("auth providers are not allowed in a Secret")
	case ai.TokenFile != "", ai.ClientCertificate != "", ai.ClientKey != "":
		return errors.New("file references (tokenFile, client-certificate, client-key) are not allowed in a Secret; use inline data")
	}
	return nil
}

// fingerprint identifies everything a Cluster's client is built from, so a ClusterSet rebuilds
// the client exactly when one of them changes (and not, say, when only labels or status
// change). It is a hash: the credentials are never kept outside the rest.Config.
func fingerprint(cluster *federation.Cluster, secret *corev1.Secret) [sha256.Size]byte {
	h := sha256.New()
	field := func(b []byte) {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	s := cluster.Spec
	field([]byte(s.APIEndpoint))
	field(s.CABundle)
	field([]byte(s.ProxyURL))
	field([]byte(fmt.Sprint(s.InsecureSkipTLSVerify)))
	if secret != nil {
		field([]byte(secret.Namespace + "/" + secret.Name))
		field(secret.Data[TokenKey])
		field(secret.Data[KubeconfigKey])
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
