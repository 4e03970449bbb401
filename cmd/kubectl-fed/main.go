// Command kubectl-fed is the kubectl plugin `kubectl fed`: join and unjoin member clusters,
// status, rollback, preview and migrate. Install it with `go install ./cmd/kubectl-fed`;
// kubectl finds it on PATH. Its logic is in internal/kubectlfed.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/fedkit/fedkit/internal/kubectlfed"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := kubectlfed.Main(ctx, os.Args[1:], kubectlfed.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
