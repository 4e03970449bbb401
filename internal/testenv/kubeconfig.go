package testenv

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig returns a kubeconfig with one context per cluster of the environment, named after
// the cluster, each with the cluster's server, CA and the admin token of Config, and the first
// cluster's context current. It is how programs that take a kubeconfig (kubectl,
// examples/realclusters, hack/dev-clusters.sh) reach the environment.
func (e *Env) Kubeconfig() ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	for _, name := range e.names {
		cfg := e.Config(name)
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	if len(e.names) > 0 {
		kc.CurrentContext = e.names[0]
	}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("testenv: writing the kubeconfig: %w", err)
	}
	return data, nil
}
