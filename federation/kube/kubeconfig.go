package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ClusterSetFromKubeconfig returns a ClusterSet with one member per named context of the
// kubeconfig file at path, each named after its context; with no contexts given, every context
// of the file is a member. It is for embedders that know their clusters up front (a CLI, a
// test harness, a control plane configured by file) and do not keep Cluster objects on a host.
//
// The kubeconfig is the embedder's own file, trusted like the program itself: unlike a
// kubeconfig in a cluster Secret (see RESTConfig), it may use exec plugins, auth providers and
// file references, and its own TLS and proxy settings apply. opts.Client sets the rate limit of
// each member; opts.Namespace and opts.Workers do not apply.
//
// The set is static: Reconcile does nothing, and Run only hosts the informers of CachedReader.
// No member is contacted until it is used. The loops still read Cluster objects on the host
// (placement, the cluster monitor): [ClusterSet.Register] writes one per member.
func ClusterSetFromKubeconfig(path string, opts ClusterSetOptions, contexts ...string) (*ClusterSet, error) {
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("kube: cluster set from kubeconfig: %w", err)
	}
	kc, err := loadKubeconfig(path)
	if err != nil {
		return nil, fmt.Errorf("kube: cluster set from kubeconfig: %w", err)
	}
	return setFromContexts(kc, path, opts, contexts)
}

// ConfigFromKubeconfig returns the rest.Config of one context of a kubeconfig, as kubectl
// --kubeconfig path --context context would use it. An empty path follows kubectl's loading
// rules ($KUBECONFIG, else ~/.kube/config); an empty context is the file's current context.
//
// Like ClusterSetFromKubeconfig, it trusts the file as the program itself: exec plugins, auth
// providers and file references work. A file that does not parse is reported without the
// parser's message, which may quote credentials; the error wraps ErrInvalidCredentials. An
// unknown context, or no current context when context is empty, wraps ErrInvalidConfig.
func ConfigFromKubeconfig(path, context string) (*rest.Config, error) {
	kc, err := loadKubeconfig(path)
	if err != nil {
		return nil, fmt.Errorf("kube: config from kubeconfig: %w", err)
	}
	if context == "" {
		context = kc.CurrentContext
		if context == "" {
			return nil, fmt.Errorf("kube: config from kubeconfig %s: %w: no context named and no current-context", describePath(path), ErrInvalidConfig)
		}
	}
	return contextConfig(kc, path, context)
}

// loadKubeconfig reads the kubeconfig at path, or the files of kubectl's loading rules when
// path is empty. A missing file keeps its *fs.PathError; anything else is withheld.
func loadKubeconfig(path string) (*clientcmdapi.Config, error) {
	var kc *clientcmdapi.Config
	var err error
	if path != "" {
		kc, err = clientcmd.LoadFromFile(path)
	} else {
		kc, err = clientcmd.NewDefaultClientConfigLoadingRules().Load()
	}
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, err
		}
		// The parser's message can quote the file's content around a syntax error.
		return nil, fmt.Errorf("%s: %w: %w", describePath(path), ErrInvalidCredentials, errNoParse)
	}
	return kc, nil
}

// contextConfig builds the rest.Config of the named context of kc, read from path.
func contextConfig(kc *clientcmdapi.Config, path, name string) (*rest.Config, error) {
	if _, ok := kc.Contexts[name]; !ok {
		return nil, fmt.Errorf("kube: kubeconfig %s: %w: no context %q", describePath(path), ErrInvalidConfig, name)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kube: kubeconfig %s: context %q: %w: %w", describePath(path), name, ErrInvalidConfig, err)
	}
	return cfg, nil
}

// setFromContexts is a set of one member per context of kc (every context when contexts is empty).
func setFromContexts(kc *clientcmdapi.Config, path string, opts ClusterSetOptions, contexts []string) (*ClusterSet, error) {
	if len(contexts) == 0 {
		for name := range kc.Contexts {
			contexts = append(contexts, name)
		}
		slices.Sort(contexts)
	}
	if len(contexts) == 0 {
		return nil, fmt.Errorf("kube: cluster set from kubeconfig %s: %w: no contexts", describePath(path), ErrInvalidConfig)
	}
	s := &ClusterSet{opts: opts, members: map[string]*member{}}
	var errs []error
	for _, name := range contexts {
		cfg, err := contextConfig(kc, path, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c, err := New(cfg, opts.Client)
		if err != nil {
			errs = append(errs, fmt.Errorf("kube: cluster set from kubeconfig %s: context %q: %w", describePath(path), name, err))
			continue
		}
		s.members[name] = &member{client: c, endpoint: cfg.Host}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// describePath names a kubeconfig in errors.
func describePath(path string) string {
	if path == "" {
		return "(default loading rules)"
	}
	return path
}
