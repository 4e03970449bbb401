package main

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

// hostConfig is how the process reaches the host, and where that came from (for the log).
type hostConfig struct {
	rest *rest.Config
	// source is "--kubeconfig PATH", "KUBECONFIG", "in-cluster" or "~/.kube/config".
	source string
	// namespace is the pod's namespace with the in-cluster configuration, "" otherwise.
	namespace string
}

// loadConfig finds the host's configuration the way client-go's users do, in
// controller-runtime's order (its config.GetConfig):
//
//  1. --kubeconfig;
//  2. the KUBECONFIG environment variable (a list of files, merged as kubectl merges them);
//  3. the in-cluster configuration, when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT
//     are set (every pod has them): the ServiceAccount's token, CA and namespace under
//     --serviceaccount-dir;
//  4. ~/.kube/config.
//
// --host-context picks a kubeconfig context (1, 2, 4); it is an error with the in-cluster
// configuration, which has none. getenv is os.Getenv but in tests.
func loadConfig(f *flags, getenv func(string) string) (hostConfig, error) {
	var rules *clientcmd.ClientConfigLoadingRules
	var source string
	switch {
	case f.kubeconfig != "":
		rules, source = &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig}, "--kubeconfig "+f.kubeconfig
	case getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		paths := filepath.SplitList(getenv(clientcmd.RecommendedConfigPathEnvVar))
		rules, source = &clientcmd.ClientConfigLoadingRules{Precedence: paths}, clientcmd.RecommendedConfigPathEnvVar
	case getenv("KUBERNETES_SERVICE_HOST") != "" && getenv("KUBERNETES_SERVICE_PORT") != "":
		if f.hostContext != "" {
			return hostConfig{}, fmt.Errorf("--host-context %q: the in-cluster configuration has no contexts; give --kubeconfig too", f.hostContext)
		}
		return inCluster(f.serviceAccountDir, getenv)
	default:
		home := filepath.Join(getenv("HOME"), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		if _, err := os.Stat(home); getenv("HOME") == "" || err != nil {
			return hostConfig{}, errors.New("no configuration for the host: give --kubeconfig, set KUBECONFIG, run in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT), or write ~/.kube/config")
		}
		rules, source = &clientcmd.ClientConfigLoadingRules{Precedence: []string{home}}, "~/.kube/config"
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.hostContext}).ClientConfig()
	if err != nil {
		return hostConfig{}, fmt.Errorf("kubeconfig (%s): %w", source, err)
	}
	if f.hostContext != "" {
		source += ", context " + f.hostContext
	}
	return hostConfig{rest: cfg, source: source}, nil
}

// inCluster is client-go's rest.InClusterConfig with its files under dir instead of the
// fixed /var/run/secrets/kubernetes.io/serviceaccount, so a test can hand the process a
// ServiceAccount's credentials as a pod has them: the API server at
// https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, the token in dir/token (re-read
// as the kubelet rotates it), the CA in dir/ca.crt, the pod's namespace in dir/namespace.
func inCluster(dir string, getenv func(string) string) (hostConfig, error) {
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return hostConfig{}, fmt.Errorf("in-cluster configuration: %w", err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(caFile); err != nil {
		return hostConfig{}, fmt.Errorf("in-cluster configuration: %w", err)
	}
	cfg := &rest.Config{
		Host:            "https://" + net.JoinHostPort(getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		BearerToken:     string(token),
		BearerTokenFile: tokenFile,
	}
	ns, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return hostConfig{}, fmt.Errorf("in-cluster configuration: %w", err)
	}
	return hostConfig{rest: cfg, source: "in-cluster (" + dir + ")", namespace: strings.TrimSpace(string(ns))}, nil
}
