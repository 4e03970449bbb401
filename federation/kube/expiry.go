package kube

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/federation"
)

var _ federation.CredentialsExpiryGetter = (*Client)(nil)

// CredentialsExpiry implements federation.CredentialsExpiryGetter: when the Client's
// credentials expire, as New read it from its rest.Config. That is the earlier of its bearer
// token's exp claim (a JWT, such as a ServiceAccount token from the TokenRequest API) and
// its client certificate's NotAfter. ok is false when neither says: an opaque token, basic
// auth, a token file (which may be renewed behind the Client's back), or a Client built on
// Options.Dynamic.
func (c *Client) CredentialsExpiry() (at time.Time, ok bool) {
	return c.expiry, !c.expiry.IsZero()
}

// credentialsExpiry is CredentialsExpiry for cfg; zero when unknown. The token is decoded, not
// verified (the member's API server verifies it), and nothing of it is kept or reported but
// its expiry.
func credentialsExpiry(cfg *rest.Config) time.Time {
	var out time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	if cfg.BearerTokenFile == "" {
		earlier(tokenExpiry(cfg.BearerToken))
	}
	earlier(certificateExpiry(cfg.CertData))
	return out
}

// tokenExpiry is the exp claim of a JWT; zero when token is not a JWT or has none.
func tokenExpiry(token string) time.Time {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return time.Time{}
	}
	exp, err := claims.Exp.Float64()
	if err != nil || exp <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(exp), 0).UTC()
}

// certificateExpiry is the NotAfter of the first certificate of PEM data; zero when none.
func certificateExpiry(data []byte) time.Time {
	for len(data) > 0 {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return time.Time{}
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return time.Time{}
		}
		return cert.NotAfter.UTC()
	}
	return time.Time{}
}
