// Package processtest helps test fedkit's programs: kubeconfig files without a server
// behind, and a taken port.
//
//	path := processtest.Kubeconfig(t, "host", "other") // current context: host
//	addr := processtest.Listen(t)                        // taken until the test ends
package processtest

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// Kubeconfig writes a kubeconfig with contexts of the given names, the first one current,
// each cluster at https://NAME.invalid (no server behind) with the token "x".
func Kubeconfig(t testing.TB, names ...string) string {
	t.Helper()
	var clusters, contexts string
	for _, name := range names {
		clusters += "- {name: " + name + ", cluster: {server: \"https://" + name + ".invalid\"}}\n"
		contexts += "- {name: " + name + ", context: {cluster: " + name + ", user: u}}\n"
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := "apiVersion: v1\nkind: Config\ncurrent-context: " + names[0] + "\nclusters:\n" + clusters + "users: [{name: u, user: {token: x}}]\ncontexts:\n" + contexts
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Listen holds a port on 127.0.0.1 until the test ends and returns its address.
func Listen(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}
