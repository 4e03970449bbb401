package process

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultServiceAccountDir is where every pod has its ServiceAccount's credentials.
const DefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Source says where a program may find a cluster's configuration.
type Source struct {
	// Kubeconfig is the --kubeconfig flag; "" to look further.
	Kubeconfig string
	// Context is the kubeconfig context to use; "" for the current one.
	Context string
	// ContextFlag names the context's flag in errors ("--context" when "").
	ContextFlag string
	// ServiceAccountDir holds the in-cluster credentials: token, ca.crt, namespace.
	ServiceAccountDir string
	// Getenv is os.Getenv but in tests.
	Getenv func(string) string
}

// Config is how the process reaches a cluster, and where that came from (for the log).
type Config struct {
	Rest *rest.Config
	// Source is "--kubeconfig PATH", "KUBECONFIG", "in-cluster (DIR)" or "~/.kube/config",
	// with ", context NAME" when a context was chosen.
	Source string
	// Namespace is the pod's namespace with the in-cluster configuration, "" otherwise.
	Namespace string
}

// Load finds a cluster's configuration the way client-go's users do, in controller-runtime's
// order (its config.GetConfig):
//
//  1. Source.Kubeconfig;
//  2. the KUBECONFIG environment variable (a list of files, merged as kubectl merges them);
//  3. the in-cluster configuration, when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT
//     are set (every pod has them): the ServiceAccount's token, CA and namespace under
//     Source.ServiceAccountDir;
//  4. ~/.kube/config.
//
// Source.Context picks a kubeconfig context (1, 2, 4); it is an error with the in-cluster
// configuration, which has none.
func Load(s Source) (Config, error) {
	getenv, contextFlag := s.Getenv, s.ContextFlag
	if getenv == nil {
		getenv = os.Getenv
	}
	if contextFlag == "" {
		contextFlag = "--context"
	}
	var rules *clientcmd.ClientConfigLoadingRules
	var source string
	switch {
	case s.Kubeconfig != "":
		rules, source = &clientcmd.ClientConfigLoadingRules{ExplicitPath: s.Kubeconfig}, "--kubeconfig "+s.Kubeconfig
	case getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		paths := filepath.SplitList(getenv(clientcmd.RecommendedConfigPathEnvVar))
		rules, source = &clientcmd.ClientConfigLoadingRules{Precedence: paths}, clientcmd.RecommendedConfigPathEnvVar
	case getenv("KUBERNETES_SERVICE_HOST") != "" && getenv("KUBERNETES_SERVICE_PORT") != "":
		if s.Context != "" {
			return Config{}, fmt.Errorf("%s %q: the in-cluster configuration has no contexts; give --kubeconfig too", contextFlag, s.Context)
		}
		return inCluster(s.ServiceAccountDir, getenv)
	default:
		home := filepath.Join(getenv("HOME"), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		if _, err := os.Stat(home); getenv("HOME") == "" || err != nil {
			return Config{}, errors.New("no configuration: give --kubeconfig, set KUBECONFIG, run in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT), or write ~/.kube/config")
		}
		rules, source = &clientcmd.ClientConfigLoadingRules{Precedence: []string{home}}, "~/.kube/config"
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: s.Context}).ClientConfig()
	if err != nil {
		return Config{}, fmt.Errorf("kubeconfig (%s): %w", source, err)
	}
	if s.Context != "" {
		source += ", context " + s.Context
	}
	return Config{Rest: cfg, Source: source}, nil
}

// inCluster is client-go's rest.InClusterConfig with its files under dir instead of the
// fixed /var/run/secrets/kubernetes.io/serviceaccount, so a test can hand the process a
// ServiceAccount's credentials as a pod has them: the API server at
// https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, the token in dir/token (re-read
// as the kubelet rotates it), the CA in dir/ca.crt, the pod's namespace in dir/namespace.
func inCluster(dir string, getenv func(string) string) (Config, error) {
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return Config{}, fmt.Errorf("in-cluster configuration: %w", err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(caFile); err != nil {
		return Config{}, fmt.Errorf("in-cluster configuration: %w", err)
	}
	cfg := &rest.Config{
		Host:            "https://" + net.JoinHostPort(getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		BearerToken:     string(token),
		BearerTokenFile: tokenFile,
	}
	ns, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Config{}, fmt.Errorf("in-cluster configuration: %w", err)
	}
	return Config{Rest: cfg, Source: "in-cluster (" + dir + ")", Namespace: strings.TrimSpace(string(ns))}, nil
}
