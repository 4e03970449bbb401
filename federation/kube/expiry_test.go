package kube_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/federation/kube"
)

// jwt returns an unsigned token with claims, shaped as the TokenRequest API's tokens.
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc([]byte(claims)) + ".c2lnbmF0dXJl"
}

// certificate returns a PEM client certificate and key that expire at notAfter.
func certificate(t *testing.T, notAfter time.Time) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fedkit"},
		NotBefore: notAfter.Add(-24 * time.Hour), NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// TestCredentialsExpiry: a Client knows when its credentials expire from a JWT's exp claim
// and a client certificate's NotAfter (the earlier of both), and says it cannot tell for an
// opaque token or a token file.
func TestCredentialsExpiry(t *testing.T) {
	exp := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	cert, key := certificate(t, exp.Add(-time.Hour))
	for _, tc := range []struct {
		name string
		cfg  rest.Config
		want time.Time
	}{
		{"ServiceAccount token", rest.Config{BearerToken: jwt(`{"aud":["https://kubernetes.default.svc"],"exp":1803902400,"iat":1772366400,"sub":"system:serviceaccount:fedkit-system:fedkit-member"}`)}, exp},
		{"token without exp", rest.Config{BearerToken: jwt(`{"sub":"legacy"}`)}, time.Time{}},
		{"opaque token", rest.Config{BearerToken: "abcdef0123456789abcdef0123456789"}, time.Time{}},
		{"token file", rest.Config{BearerToken: jwt(`{"exp":1803902400}`), BearerTokenFile: "/var/run/token"}, time.Time{}},
		{"client certificate", rest.Config{TLSClientConfig: rest.TLSClientConfig{CertData: cert, KeyData: key}}, exp.Add(-time.Hour)},
		{"both: the earlier", rest.Config{BearerToken: jwt(`{"exp":1803902400}`), TLSClientConfig: rest.TLSClientConfig{CertData: cert, KeyData: key}}, exp.Add(-time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Host = "https://member.example.com"
			c, err := kube.New(&cfg, kube.Options{})
			require.NoError(t, err)
			at, ok := c.CredentialsExpiry()
			require.Equal(t, !tc.want.IsZero(), ok)
			require.True(t, tc.want.Equal(at), "expiry %s; want %s", at, tc.want)
		})
	}
}
