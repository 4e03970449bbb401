package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"k8s.io/client-go/tools/clientcmd"
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
// No member is contacted until it is used.
func ClusterSetFromKubeconfig(path string, opts ClusterSetOptions, contexts ...string) (*ClusterSet, error) {
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("kube: cluster set from kubeconfig: %w", err)
	}
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("kube: cluster set from kubeconfig: %w", err)
		}
		// The parser's message can quote the file's content around a syntax error.
		return nil, fmt.Errorf("kube: cluster set from kubeconfig %s: %w: %w", path, ErrInvalidCredentials, errNoParse)
	}
	if len(contexts) == 0 {
		for name := range kc.Contexts {
			contexts = append(contexts, name)
		}
		slices.Sort(contexts)
	}
	if len(contexts) == 0 {
		return nil, fmt.Errorf("kube: cluster set from kubeconfig %s: %w: no contexts", path, ErrInvalidConfig)
	}
	s := &ClusterSet{opts: opts, members: map[string]*member{}}
	var errs []error
	for _, name := range contexts {
		if _, ok := kc.Contexts[name]; !ok {
			errs = append(errs, fmt.Errorf("kube: cluster set from kubeconfig %s: %w: no context %q", path, ErrInvalidConfig, name))
			continue
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			errs = append(errs, fmt.Errorf("kube: cluster set from kubeconfig %s: context %q: %w: %w", path, name, ErrInvalidConfig, err))
			continue
		}
		c, err := New(cfg, opts.Client)
		if err != nil {
			errs = append(errs, fmt.Errorf("kube: cluster set from kubeconfig %s: context %q: %w", path, name, err))
			continue
		}
		s.members[name] = &member{client: c}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}
