package federation

import (
	"net/url"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateClusterConnection checks the fields of a Cluster's spec that say where and how to
// reach the member (apiEndpoint, proxyURL, secretRef) under path, the spec's path. It is the
// one rule for them: [ValidateCluster] applies it, and federation/kube refuses to build a
// client for a Cluster that fails it.
//
//   - spec.apiEndpoint is required and must be an https URL with a host, so credentials never
//     travel in clear text; it must not carry user information ("https://user:pass@host"),
//     a query or a fragment: credentials belong in the Secret, and anything else in the URL
//     ends up in logs.
//   - spec.proxyURL, when set, must be an http, https or socks5 URL with a host. It may carry
//     the proxy's user and password.
//   - spec.secretRef, when set, must name a Secret.
//
// Errors never contain user information, queries or fragments: they quote URLs reduced to
// scheme, host and path, and a value that does not parse as a URL not at all (the parser's
// message would quote it).
//
// A pull cluster (spec.mode Pull) is reached by no one: every one of these fields, caBundle
// and insecureSkipTLSVerify must be empty, so the host never holds a credential for it.
// spec.mode must be Push, Pull or empty.
func ValidateClusterConnection(spec *ClusterSpec, path *field.Path) field.ErrorList {
	switch spec.Mode {
	case "", ClusterModePush:
	case ClusterModePull:
		return validatePullConnection(spec, path)
	default:
		return field.ErrorList{field.NotSupported(path.Child("mode"), spec.Mode, []string{string(ClusterModePush), string(ClusterModePull)})}
	}
	var errs field.ErrorList
	ep := path.Child("apiEndpoint")
	if spec.APIEndpoint == "" {
		errs = append(errs, field.Required(ep, "the member API server's https URL"))
	} else if u, err := url.Parse(spec.APIEndpoint); err != nil || u.Host == "" {
		errs = append(errs, field.Invalid(ep, redactedURL(u, err), "must be an https URL with a host"))
	} else {
		if u.Scheme != "https" {
			errs = append(errs, field.Invalid(ep, redactedURL(u, nil), "must use https, so credentials never travel in clear text"))
		}
		if u.User != nil {
			errs = append(errs, field.Invalid(ep, redactedURL(u, nil), "must not contain user information; put credentials in the Secret"))
		}
		if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			errs = append(errs, field.Invalid(ep, redactedURL(u, nil), "must not have a query or a fragment"))
		}
	}
	if spec.ProxyURL != "" {
		px := path.Child("proxyURL")
		u, err := url.Parse(spec.ProxyURL)
		switch {
		case err != nil || u.Host == "":
			errs = append(errs, field.Invalid(px, redactedURL(u, err), "must be a URL with a host"))
		case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5":
			errs = append(errs, field.NotSupported(px.Child("scheme"), u.Scheme, []string{"http", "https", "socks5"}))
		}
	}
	if r := spec.SecretRef; r != nil && r.Name == "" {
		errs = append(errs, field.Required(path.Child("secretRef", "name"), "the Secret holding the credentials"))
	}
	return errs
}

// redactedURL is what errors may quote of a URL: its scheme, host and path, never its user
// information, query or fragment, and nothing of a URL that does not parse or has no host
// ("user:pass@host" parses as scheme "user").
func redactedURL(u *url.URL, err error) string {
	if err != nil || u == nil || u.Host == "" {
		return "(not quoted)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// validatePullConnection checks that a pull cluster's spec says nothing of how to reach it.
func validatePullConnection(spec *ClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, name string) {
		if set {
			errs = append(errs, field.Forbidden(path.Child(name), "a pull cluster is reached by its agent, never by the host: leave it empty"))
		}
	}
	forbid(spec.APIEndpoint != "", "apiEndpoint")
	forbid(len(spec.CABundle) > 0, "caBundle")
	forbid(spec.SecretRef != nil, "secretRef")
	forbid(spec.ProxyURL != "", "proxyURL")
	forbid(spec.InsecureSkipTLSVerify, "insecureSkipTLSVerify")
	return errs
}

// validatePullName checks that a pull cluster's name gives a valid namespace name
// ([PullNamespace]).
func validatePullName(name string) field.ErrorList {
	ns := PullNamespace(name)
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(ns) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, "a pull cluster's namespace on the host, "+ns+", is not a valid namespace name: "+msg))
	}
	return errs
}
