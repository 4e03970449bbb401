// Package member embeds what fedkit's control plane needs in each member cluster: member.yaml
// (a Namespace, a ServiceAccount, its ClusterRole and ClusterRoleBinding) and secrets.yaml (a
// second ClusterRole and binding, for Secrets, for the members where FederatedSecrets go).
// `kubectl fed join` applies them, so the plugin and the installable files are one definition.
package member

import _ "embed"

var (
	//go:embed member.yaml
	manifest []byte
	//go:embed secrets.yaml
	secrets []byte
)

// Manifest returns member.yaml, a multi-document YAML stream (a copy: callers may change it).
func Manifest() []byte { return append([]byte(nil), manifest...) }

// SecretsManifest returns secrets.yaml, the ClusterRole and binding that grant the member's
// ServiceAccount the Secrets (a copy: callers may change it).
func SecretsManifest() []byte { return append([]byte(nil), secrets...) }
