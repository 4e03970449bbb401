// Command devclusters starts a federation's worth of real API servers on this machine (one
// etcd, one kube-apiserver per cluster, from internal/testenv) and writes a kubeconfig with a
// context per cluster, for trying fedkit against real clusters without containers:
//
//	hack/dev-clusters.sh                       # host, member1, member2; Ctrl-C stops them
//	go run ./examples/realclusters -kubeconfig dev-clusters.kubeconfig \
//	    -host-context host -contexts member1,member2 -install-crds -demo
//
// The servers have no controller-manager, scheduler or kubelet: the API works (CRDs, RBAC,
// admission), but Deployments never get pods. One thing kube-controller-manager does is done
// here: its token controller's filling of ServiceAccount token Secrets, so that
// `kubectl fed join` gets the member's token as on a real cluster. hack/dev-clusters.sh builds
// the binaries first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
	for _, name := range env.Names() {
		cs, err := kubernetes.NewForConfig(env.Config(name))
		if err != nil {
			return err
		}
		go fillTokens(ctx, cs)
	}
	fmt.Printf("%d clusters running; kubeconfig: %s (contexts %s)\n", len(env.Names()), *kubeconfig, strings.Join(env.Names(), ", "))
	fmt.Printf("  kubectl --kubeconfig %s --context %s get namespaces\n", *kubeconfig, env.Names()[0])
	fmt.Println("Ctrl-C stops them.")
	<-ctx.Done()
	return nil
}

// fillTokens does what kube-controller-manager's token controller does, which these servers
// lack, until ctx is done: every half second it fills the ServiceAccount token Secrets
// (type kubernetes.io/service-account-token) that have no token yet, with a token of their
// ServiceAccount from the TokenRequest API, valid for 30 days (the API server may cap it).
func fillTokens(ctx context.Context, cs kubernetes.Interface) {
	days30 := int64(30 * 24 * 3600)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		secrets, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeServiceAccountToken)})
		if err != nil {
			continue
		}
		for i := range secrets.Items {
			s := &secrets.Items[i]
			sa := s.Annotations[corev1.ServiceAccountNameKey]
			if sa == "" || len(s.Data[corev1.ServiceAccountTokenKey]) > 0 {
				continue
			}
			tr, err := cs.CoreV1().ServiceAccounts(s.Namespace).CreateToken(ctx, sa,
				&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &days30}}, metav1.CreateOptions{})
			if err != nil {
				continue // the ServiceAccount is not there yet
			}
			s.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tr.Status.Token), "namespace": []byte(s.Namespace)}
			_, _ = cs.CoreV1().Secrets(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
		}
	}
}
