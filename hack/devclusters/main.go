// Command devclusters starts a federation's worth of real API servers on this machine (one
// etcd, one kube-apiserver per cluster, from internal/testenv) and writes a kubeconfig with a
// context per cluster, for trying fedkit against real clusters without containers:
//
//	hack/dev-clusters.sh                       # host, member1, member2; Ctrl-C stops them
//	go run ./examples/realclusters -kubeconfig dev-clusters.kubeconfig \
//	    -host-context host -contexts member1,member2 -install-crds -demo
//
// The servers have no controller-manager, scheduler or kubelet: the API works (CRDs, RBAC,
// admission), but Deployments never get pods. hack/dev-clusters.sh builds the binaries first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fedkit/fedkit/internal/testenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dev-clusters:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "dev-clusters.kubeconfig", "where to write the kubeconfig")
	clusters := flag.String("clusters", "host,member1,member2", "comma-separated cluster names; the first is the current context")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env, err := testenv.Start(ctx, testenv.Options{
		Clusters: strings.Split(*clusters, ","),
		Logf:     func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) },
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "dev-clusters:", err)
		}
	}()
	kc, err := env.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*kubeconfig, kc, 0o600); err != nil {
		return err
	}
	fmt.Printf("%d clusters running; kubeconfig: %s (contexts %s)\n", len(env.Names()), *kubeconfig, strings.Join(env.Names(), ", "))
	fmt.Printf("  kubectl --kubeconfig %s --context %s get namespaces\n", *kubeconfig, env.Names()[0])
	fmt.Println("Ctrl-C stops them.")
	<-ctx.Done()
	return nil
}
