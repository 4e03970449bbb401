// Package member embeds member.yaml: what fedkit's control plane needs in each member cluster
// (a Namespace, a ServiceAccount, its ClusterRole and ClusterRoleBinding). `kubectl fed join`
// applies it, so the plugin and the installable file are one definition.
package member

import _ "embed"

//go:embed member.yaml
var manifest []byte

// Manifest returns member.yaml, a multi-document YAML stream (a copy: callers may change it).
func Manifest() []byte { return append([]byte(nil), manifest...) }
