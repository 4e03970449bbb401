package kube

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/federation"
)

// Connect returns the two things every fedkit loop is built on, for the host that cfg reaches:
// the host's Client, and the ClusterSet of the member clusters registered on it (Cluster
// objects and their Secrets, see NewClusterSet), which must run (ClusterSet.Run, or
// controlplane.ControlPlane.Run, which runs it) to fill up. It does no I/O.
//
// opts.Client configures the host's client as well as each member's. cfg is typically
// rest.InClusterConfig() for a control plane deployed in the host cluster, or
// ConfigFromKubeconfig for one run from a workstation:
//
//	cfg, err := rest.InClusterConfig()
//	host, clusters, err := kube.Connect(cfg, kube.ClusterSetOptions{Logger: log})
//	cp, err := controlplane.New(host, clusters, controlplane.Options{Logger: log})
//	err = cp.Run(ctx)
func Connect(cfg *rest.Config, opts ClusterSetOptions) (*Client, *ClusterSet, error) {
	host, err := New(cfg, opts.Client)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: connect: host: %w", err)
	}
	set, err := NewClusterSet(host, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: connect: %w", err)
	}
	return host, set, nil
}

// ConnectKubeconfig is Connect for clusters named by the contexts of a kubeconfig: the host is
// hostContext of the file at path (see ConfigFromKubeconfig for empty path and context).
//
// Without memberContexts, the members are the Clusters registered on the host, as with
// Connect. With memberContexts, they are those contexts of the same file, named after them, as
// with ClusterSetFromKubeconfig: their credentials stay in the kubeconfig (exec plugins work)
// and nothing is stored on the host but the Cluster objects the loops read, which
// [ClusterSet.Register] writes. It does no I/O.
func ConnectKubeconfig(path, hostContext string, opts ClusterSetOptions, memberContexts ...string) (*Client, *ClusterSet, error) {
	cfg, err := ConfigFromKubeconfig(path, hostContext)
	if err != nil {
		return nil, nil, err
	}
	if len(memberContexts) == 0 {
		return Connect(cfg, opts)
	}
	if err := opts.complete(); err != nil {
		return nil, nil, fmt.Errorf("kube: connect: %w", err)
	}
	host, err := New(cfg, opts.Client)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: connect: host: %w", err)
	}
	kc, err := loadKubeconfig(path)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: connect: %w", err)
	}
	set, err := setFromContexts(kc, path, opts, memberContexts)
	if err != nil {
		return nil, nil, err
	}
	return host, set, nil
}

// Register writes a Cluster object to host for each member of a set built from a kubeconfig
// (ClusterSetFromKubeconfig, ConnectKubeconfig with member contexts), named after the member,
// with spec.apiEndpoint its API server. The loops find the clusters they place work in, probe
// and collect from among the Cluster objects on the host, so a static set needs them too.
//
// A Cluster that exists already is kept, labels, taints, region and status included; only a
// different spec.apiEndpoint is updated. No Secret is written: the members' credentials stay in
// the kubeconfig. A member's name must be a valid Cluster name (a DNS subdomain): contexts
// named like "arn:aws:eks:..." are refused by the host, and the error names the member.
//
// Register returns an error for a set built by NewClusterSet, whose members are the host's
// Clusters already.
func (s *ClusterSet) Register(ctx context.Context, host federation.ClusterClient) error {
	if s.host != nil {
		return fmt.Errorf("kube: register: %w: the set's clusters are the Cluster objects of its host already", ErrInvalidConfig)
	}
	if host == nil {
		return fmt.Errorf("kube: register: %w: nil host client", ErrInvalidConfig)
	}
	var errs []error
	for _, name := range s.Names() {
		s.mu.Lock()
		m := s.members[name]
		s.mu.Unlock()
		if err := registerCluster(ctx, host, name, m.endpoint); err != nil {
			errs = append(errs, fmt.Errorf("kube: register cluster %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// registerCluster creates the Cluster name, or sets its spec.apiEndpoint when it differs.
func registerCluster(ctx context.Context, host federation.ClusterClient, name, endpoint string) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": federation.ClusterGVK.GroupVersion().String(),
		"kind":       federation.ClusterGVK.Kind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"apiEndpoint": endpoint},
	}}
	_, err := host.Create(ctx, federation.ClusterGVR, u)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	stored, err := host.Get(ctx, federation.ClusterGVR, "", name)
	if err != nil {
		return err
	}
	if got, _, _ := unstructured.NestedString(stored.Object, "spec", "apiEndpoint"); got == endpoint {
		return nil
	}
	if err := unstructured.SetNestedField(stored.Object, endpoint, "spec", "apiEndpoint"); err != nil {
		return err
	}
	_, err = host.Update(ctx, federation.ClusterGVR, stored)
	return err
}
