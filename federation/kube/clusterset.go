package kube

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// ClusterSet is a federation.ClusterSet of real member clusters. It keeps one Client per
// Cluster object on the host, built from the Cluster's spec and the Secret its
// spec.secretRef names (see RESTConfig for what is read from each).
//
// Reconcile(ctx, key) is the primitive: one pass over one Cluster that builds its client,
// rebuilds it when the spec's connection fields or the Secret's credentials changed, or
// releases it when the Cluster is gone. Run drives Reconcile from watches of Clusters and
// Secrets on the host; embedders with their own controller machinery may call Reconcile
// instead. Run also hosts the informers behind CachedReader.
//
// Readiness here means only "a client could be built". Whether the member answers is the
// cluster monitor's business: it needs a client precisely to find that out, so Client does not
// look at the Cluster's Ready condition.
//
// A ClusterSet is safe for concurrent use.
type ClusterSet struct {
	host federation.ClusterClient // nil for a set built from a kubeconfig
	opts ClusterSetOptions

	// locks serializes Reconcile per cluster: read, compare and install are one step, so a
	// Reconcile that read an older Secret cannot install after one that read a newer one.
	locks keyedMutex

	mu       sync.Mutex
	members  map[string]*member
	run      *runState // non-nil while Run runs
	handlers memberHandlers
}

var _ federation.ClusterSet = (*ClusterSet)(nil)

// member is what the set knows about one cluster. Exactly one of client and notReady is set.
type member struct {
	client   *Client
	notReady error
	fp       [sha256.Size]byte // of the spec and Secret the member was built from
	caches   *memberCaches     // informers of CachedReader; nil until the first is asked for

	// clusterVersion and secretVersion are the resourceVersions of the Cluster and Secret the
	// member was built from, for logs; secretVersion, secretName and endpointFP (the
	// fingerprint of the Cluster's connection fields alone) also tell Run that neither changed,
	// so it need not read the Secret again.
	clusterVersion, secretVersion string
	secretName                    string
	endpointFP                    [sha256.Size]byte

	// endpoint is the API server's URL of a member of a static set, for Register.
	endpoint string
}

// NewClusterSet returns a ClusterSet that reads Cluster objects and their Secrets through host.
// It starts nothing: the set is empty until Reconcile or Run fills it.
func NewClusterSet(host federation.ClusterClient, opts ClusterSetOptions) (*ClusterSet, error) {
	if host == nil {
		return nil, fmt.Errorf("kube: new cluster set: %w: nil host client", ErrInvalidConfig)
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("kube: new cluster set: %w", err)
	}
	return &ClusterSet{host: host, opts: opts, members: map[string]*member{}}, nil
}

// Client returns the client of the named cluster. The error wraps
// federation.ErrClusterNotFound when no Cluster of that name has been reconciled (or it was
// deleted), and federation.ErrClusterNotReady, together with the reason (for example
// ErrInvalidCredentials), when its client cannot be built.
func (s *ClusterSet) Client(name string) (federation.ClusterClient, error) {
	c, err := s.client(name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s *ClusterSet) client(name string) (*Client, error) {
	s.mu.Lock()
	m := s.members[name]
	s.mu.Unlock()
	switch {
	case m == nil:
		return nil, fmt.Errorf("kube: cluster %q: %w", name, federation.ErrClusterNotFound)
	case m.client == nil:
		return nil, fmt.Errorf("kube: cluster %q: %w: %w", name, federation.ErrClusterNotReady, m.notReady)
	}
	return m.client, nil
}

// Names returns the names of the clusters the set knows, ready or not, sorted.
func (s *ClusterSet) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.members))
	for n := range s.members {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Reconcile brings the named cluster's client (key.Name; key.Namespace is ignored) in line with
// its Cluster object and Secret on the host:
//
//   - Cluster gone: the client and its informers are released.
//   - Connection fields of the spec (apiEndpoint, caBundle, proxyURL, insecureSkipTLSVerify,
//     secretRef) or the Secret's credentials changed: a new client replaces the old one, whose
//     informers stop. Nothing else (labels, region, status) causes a rebuild.
//   - A Cluster that is being deleted keeps its client until it is gone, so loops can clean up
//     member objects behind a finalizer.
//
// A Cluster that cannot get a client (no secretRef, missing Secret, bad credentials, bad spec)
// stays known but not ready, and Reconcile returns the reason marked with federation.Terminal:
// retrying cannot help until the Cluster or its Secret changes, which Run notices. Errors
// reading the host are returned unmarked, to be retried. The Result is always zero. A set
// built by ClusterSetFromKubeconfig has no host, and Reconcile does nothing.
//
// Reconcile may be called concurrently: calls for the same cluster run one after the other,
// each reading the Cluster and its Secret afresh, so the last one installs what it read last.
// Reconcile reads both from the API server; within Run, the Cluster comes from Run's cache.
func (s *ClusterSet) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return s.reconcile(ctx, s.host, nil, key)
}

// trimmedSecrets reads a Secret from Run's informer, which keeps it without its data
// (dropSecretData); ok is false when the informer cannot serve it.
type trimmedSecrets func(namespace, name string) (u *unstructured.Unstructured, ok bool, err error)

// reconcile is Reconcile reading the Cluster through r (the host, or Run's cache) and the
// Secret through secrets (Run's informer; nil: the host). A cached Secret has no data: when
// its resourceVersion is not the one the member was built from, it is read again from the
// host, credentials and all.
func (s *ClusterSet) reconcile(ctx context.Context, r federation.Reader, secrets trimmedSecrets, key federation.Key) (federation.Result, error) {
	if s.host == nil {
		return federation.Result{}, nil
	}
	name := key.Name
	unlock, err := s.locks.lock(ctx, name)
	if err != nil {
		return federation.Result{}, fmt.Errorf("kube: reconcile cluster %q: %w", name, err)
	}
	defer unlock()
	u, err := r.Get(ctx, federation.ClusterGVR, "", name)
	if apierrors.IsNotFound(err) {
		if s.release(name) {
			s.opts.Logger.Info("Released the client of a deleted Cluster", "cluster", name)
		}
		return federation.Result{}, nil
	}
	if err != nil {
		return federation.Result{}, fmt.Errorf("kube: reconcile cluster %q: %w", name, err)
	}
	cluster, err := loop.DecodeCluster(r, u) // shared with the other loops: read only
	if err != nil {
		return federation.Result{}, s.notReady(name, &member{notReady: err})
	}
	if cluster.Spec.Pull() {
		// Reached by its agent, never from here: no client, no credential (package agent).
		if s.release(name) {
			s.opts.Logger.Info("Released the client of a Cluster now in pull mode", "cluster", name)
		}
		return federation.Result{}, nil
	}
	ref := cluster.Spec.SecretRef
	if ref == nil || ref.Name == "" {
		return federation.Result{}, s.notReady(name, &member{
			fp:       fingerprint(cluster, nil),
			notReady: fmt.Errorf("%w: spec.secretRef is not set", ErrInvalidCredentials),
		})
	}
	endpointFP := fingerprint(cluster, nil)
	var su *unstructured.Unstructured
	cached := false
	if secrets != nil {
		su, cached, err = secrets(s.opts.Namespace, ref.Name)
	}
	if !cached {
		su, err = s.host.Get(ctx, federation.SecretGVR, s.opts.Namespace, ref.Name)
	}
	if err == nil {
		err = bound(su, s.opts.Namespace, name)
	}
	if err == nil {
		if same, err := s.unchanged(name, endpointFP, su); same {
			return federation.Result{}, err
		}
		if cached {
			su, err = s.host.Get(ctx, federation.SecretGVR, s.opts.Namespace, ref.Name)
			if err == nil {
				err = bound(su, s.opts.Namespace, name) // the label may have changed meanwhile
			}
		}
	}
	var secret *corev1.Secret
	if err == nil {
		secret, err = s.decodeSecret(su)
	}
	if apierrors.IsNotFound(err) {
		err = fmt.Errorf("%w: Secret %s/%s does not exist", ErrInvalidCredentials, s.opts.Namespace, ref.Name)
	}
	if errors.Is(err, ErrInvalidCredentials) {
		m := &member{fp: endpointFP, notReady: err, endpointFP: endpointFP}
		if su != nil {
			m.secretName, m.secretVersion = su.GetName(), su.GetResourceVersion()
		}
		return federation.Result{}, s.notReady(name, m)
	}
	if err != nil {
		return federation.Result{}, fmt.Errorf("kube: reconcile cluster %q: %w", name, err)
	}

	fp := fingerprint(cluster, secret)
	s.mu.Lock()
	old := s.members[name]
	if old != nil && old.client != nil && old.fp == fp {
		// Same credentials under a new resourceVersion (a label or annotation changed).
		old.secretName, old.secretVersion = secret.Name, secret.ResourceVersion
		s.mu.Unlock()
		return federation.Result{}, nil
	}
	s.mu.Unlock()
	m := &member{fp: fp, clusterVersion: cluster.ResourceVersion, secretVersion: secret.ResourceVersion,
		secretName: secret.Name, endpointFP: endpointFP}
	cfg, err := RESTConfig(cluster, secret)
	if err == nil {
		m.client, err = New(cfg, s.opts.Client)
	}
	if err != nil {
		m.notReady = err
		return federation.Result{}, s.notReady(name, m)
	}
	s.install(name, m)
	log := s.opts.Logger.WithValues("cluster", name, "apiEndpoint", cfg.Host,
		"clusterResourceVersion", m.clusterVersion, "secretResourceVersion", m.secretVersion)
	if cluster.Spec.InsecureSkipTLSVerify {
		log.Info("TLS verification is OFF for this cluster (spec.insecureSkipTLSVerify); use it only for test clusters")
	}
	if old == nil || old.client == nil {
		log.Info("Built the cluster's client")
	} else {
		log.Info("Rebuilt the cluster's client: its connection settings or credentials changed")
	}
	return federation.Result{}, nil
}

// decodeSecret decodes a Secret read from the host.
func (s *ClusterSet) decodeSecret(u *unstructured.Unstructured) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, secret); err != nil {
		// The converter's message could quote data; name the Secret only.
		return nil, fmt.Errorf("%w: Secret %s/%s does not decode", ErrInvalidCredentials, s.opts.Namespace, u.GetName())
	}
	return secret, nil
}

// bound checks that the Secret u is bound to the Cluster called cluster by
// federation.SecretClusterLabel, so that whoever may write a Cluster cannot have another
// cluster's credentials sent to an apiEndpoint of their choosing.
func bound(u *unstructured.Unstructured, namespace, cluster string) error {
	got, ok := u.GetLabels()[federation.SecretClusterLabel]
	switch {
	case !ok:
		return fmt.Errorf("%w: Secret %s/%s has no label %s=%s: label the Secret with the one Cluster that may use it",
			ErrInvalidCredentials, namespace, u.GetName(), federation.SecretClusterLabel, cluster)
	case got != cluster:
		return fmt.Errorf("%w: Secret %s/%s is for Cluster %q, not %q (its label %s)",
			ErrInvalidCredentials, namespace, u.GetName(), got, cluster, federation.SecretClusterLabel)
	}
	return nil
}

// unchanged reports whether the member called name was built, or found not ready, from the
// same connection fields (endpointFP) and the same Secret resourceVersion as su, and if so
// what Reconcile returns: nil, or the same terminal reason.
func (s *ClusterSet) unchanged(name string, endpointFP [sha256.Size]byte, su *unstructured.Unstructured) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.members[name]
	if old == nil || old.endpointFP != endpointFP || old.secretName != su.GetName() ||
		old.secretVersion == "" || old.secretVersion != su.GetResourceVersion() {
		return false, nil
	}
	if old.client != nil {
		return true, nil
	}
	return true, federation.Terminal(fmt.Errorf("kube: cluster %q is not ready: %w", name, old.notReady))
}

// notReady records m (without a client) for name and returns the reason, marked terminal. It
// logs only when the reason is new, so a Cluster that stays broken does not flood the log.
func (s *ClusterSet) notReady(name string, m *member) error {
	err := fmt.Errorf("kube: cluster %q is not ready: %w", name, m.notReady)
	old := s.install(name, m)
	if old == nil || old.client != nil || old.fp != m.fp || old.notReady.Error() != m.notReady.Error() {
		s.opts.Logger.Info("Cluster is not ready", "cluster", name, "reason", m.notReady.Error())
	}
	return federation.Terminal(err)
}

// install makes m the member called name and stops the informers of the member it replaces,
// which it returns.
func (s *ClusterSet) install(name string, m *member) *member {
	s.mu.Lock()
	old := s.members[name]
	s.members[name] = m
	s.mu.Unlock()
	if old != nil {
		old.stopCaches()
	}
	return old
}

// release forgets the named cluster, stopping its informers. It reports whether it was known.
func (s *ClusterSet) release(name string) bool {
	s.mu.Lock()
	old := s.members[name]
	delete(s.members, name)
	s.mu.Unlock()
	if old == nil {
		return false
	}
	old.stopCaches()
	return true
}
