// Command kubectl-fed is the kubectl plugin `kubectl fed`: join and unjoin member clusters,
// clusters, status, rollback, preview, migrate and version. Install it with
// `go install ./cmd/kubectl-fed`; kubectl finds it on PATH. Its logic is in
// cmd/kubectl-fed/internal/kubectlfed.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/fedkit/fedkit/cmd/kubectl-fed/internal/kubectlfed"
)

// version is the plugin's version, set by the linker (go build -ldflags "-X
// main.version=v0.4.0"); `kubectl fed version` prints it, else the build information's.
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := kubectlfed.Main(ctx, os.Args[1:], kubectlfed.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Version: version})
	stop()
	os.Exit(code)
}
