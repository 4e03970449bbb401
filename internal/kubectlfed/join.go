package kubectlfed

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/fedkit/fedkit/config/rbac/member"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/manifest"
)

// FieldManager is the server-side apply field manager of every object the plugin writes.
const FieldManager = "kubectl-fed"

// TokenSecretName is the member's long-lived token Secret of the ServiceAccount of
// config/rbac/member, which join creates (as kubefedctl join does) and unjoin deletes.
const TokenSecretName = "fedkit-member-token"

type joinOptions struct {
	cluster        string
	clusterContext string
	namespace      string // the host namespace of Cluster Secrets
	timeout        time.Duration
}

func (o *joinOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.clusterContext, "cluster-context", "", "the member cluster's kubeconfig context (default: CLUSTER)")
	cmd.Flags().StringVar(&o.namespace, "federation-namespace", kube.DefaultNamespace, "the host namespace the control plane reads Cluster Secrets from (its ClusterSet's Namespace)")
}

func joinCommand(g *globals) *cobra.Command {
	o := &joinOptions{}
	cmd := &cobra.Command{
		Use:   "join CLUSTER --cluster-context CTX",
		Short: "Add a member cluster to the federation",
		Long: `join makes CLUSTER a member of the federation on the host context, as kubefedctl join does:

In the member (--cluster-context): config/rbac/member's Namespace, ServiceAccount, ClusterRole
and ClusterRoleBinding, and a token Secret of that ServiceAccount (` + TokenSecretName + `).
On the host: a Secret labelled ` + federation.SecretClusterLabel + `=CLUSTER holding the token,
and the Cluster CLUSTER (the member's API endpoint and CA from the kubeconfig).

Objects are written with server-side apply: running join again changes nothing.`,
		Example: "  kubectl fed join aws --cluster-context aws-admin --context host",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			return g.join(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	o.flags(cmd)
	cmd.Flags().DurationVar(&o.timeout, "token-timeout", time.Minute, "how long to wait for the member's token controller to fill the token Secret")
	return cmd
}

func unjoinCommand(g *globals) *cobra.Command {
	o := &joinOptions{}
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER --cluster-context CTX",
		Short: "Remove a member cluster from the federation",
		Long: `unjoin undoes join: the Cluster CLUSTER and its Secret on the host (the Secret only when it
is labelled ` + federation.SecretClusterLabel + `=CLUSTER), then the member's token Secret,
ClusterRoleBinding, ClusterRole and ServiceAccount. The member's namespace stays. What is
already gone is skipped: running unjoin again changes nothing.`,
		Example: "  kubectl fed unjoin aws --cluster-context aws-admin",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			return g.unjoin(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	o.flags(cmd)
	return cmd
}

// applier writes objects of one cluster with server-side apply.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(cfg *rest.Config) (*applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDiscoveryRESTMapper(groups)}, nil
}

func (a *applier) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

func (a *applier) apply(ctx context.Context, u *unstructured.Unstructured) error {
	r, err := a.resource(u)
	if err != nil {
		return err
	}
	if _, err := r.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("apply %s %s: %w", u.GetKind(), name(u), err)
	}
	return nil
}

// remove deletes u; one that is already gone is not an error.
func (a *applier) remove(ctx context.Context, u *unstructured.Unstructured) (bool, error) {
	r, err := a.resource(u)
	if err != nil {
		return false, err
	}
	err = r.Delete(ctx, u.GetName(), metav1.DeleteOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete %s %s: %w", u.GetKind(), name(u), err)
	}
	return true, nil
}

func name(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// memberObjects are config/rbac/member's objects and the ServiceAccount's token Secret.
func memberObjects() (objs []*unstructured.Unstructured, sa *unstructured.Unstructured, token *unstructured.Unstructured, err error) {
	docs, err := manifest.Split(member.Manifest())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("config/rbac/member: %w", err)
	}
	for _, d := range docs {
		u := d.Object
		if u.GetKind() == "ServiceAccount" {
			sa = u
		}
		objs = append(objs, u)
	}
	if sa == nil {
		return nil, nil, nil, errors.New("config/rbac/member has no ServiceAccount")
	}
	sec := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: TokenSecretName, Namespace: sa.GetNamespace(), Labels: sa.GetLabels(),
			Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.GetName()}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sec)
	if err != nil {
		return nil, nil, nil, err
	}
	return objs, sa, &unstructured.Unstructured{Object: m}, nil
}

func (o *joinOptions) memberContext() string {
	if o.clusterContext != "" {
		return o.clusterContext
	}
	return o.cluster
}

func (g *globals) join(ctx context.Context, out io.Writer, o *joinOptions) error {
	if errs := validation.IsDNS1123Subdomain(o.cluster); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %s", o.cluster, errs[0])
	}
	hostCfg, _, err := g.host()
	if err != nil {
		return err
	}
	memberCfg, err := g.restConfig(o.memberContext())
	if err != nil {
		return err
	}
	ca := memberCfg.CAData
	if len(ca) == 0 && memberCfg.CAFile != "" {
		if ca, err = os.ReadFile(memberCfg.CAFile); err != nil {
			return fmt.Errorf("member CA: %w", err)
		}
	}

	// The member: its role, then the token.
	m, err := newApplier(memberCfg)
	if err != nil {
		return fmt.Errorf("member %s: %w", o.memberContext(), err)
	}
	objs, sa, tokenSecret, err := memberObjects()
	if err != nil {
		return err
	}
	for _, u := range append(objs, tokenSecret) {
		if err := m.apply(ctx, u); err != nil {
			return fmt.Errorf("member %s: %w", o.memberContext(), err)
		}
	}
	fmt.Fprintf(out, "member %s: ServiceAccount %s, its ClusterRole and binding (config/rbac/member), token Secret %s\n", o.memberContext(), name(sa), TokenSecretName)
	token, err := g.waitForToken(ctx, m, tokenSecret, o.timeout)
	if err != nil {
		return fmt.Errorf("member %s: %w", o.memberContext(), err)
	}

	// The host: the Secret, then the Cluster that names it.
	h, err := newApplier(hostCfg)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(o.namespace)
	secret := &unstructured.Unstructured{}
	secret.SetAPIVersion("v1")
	secret.SetKind("Secret")
	secret.SetName(o.cluster)
	secret.SetNamespace(o.namespace)
	secret.SetLabels(map[string]string{federation.SecretClusterLabel: o.cluster})
	secret.Object["type"] = string(corev1.SecretTypeOpaque)
	secret.Object["data"] = map[string]any{kube.TokenKey: token}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": federation.CoreGroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": o.cluster},
		"spec": map[string]any{
			"apiEndpoint": memberCfg.Host,
			"secretRef":   map[string]any{"name": o.cluster},
		},
	}}
	if len(ca) > 0 {
		_ = unstructured.SetNestedField(cluster.Object, encode(ca), "spec", "caBundle")
	}
	if memberCfg.Insecure {
		_ = unstructured.SetNestedField(cluster.Object, true, "spec", "insecureSkipTLSVerify")
	}
	if memberCfg.Proxy != nil {
		fmt.Fprintf(out, "warning: the member context's proxy is a function, not a URL: set the Cluster's spec.proxyURL yourself\n")
	}
	for _, u := range []*unstructured.Unstructured{ns, secret, cluster} {
		if err := h.apply(ctx, u); err != nil {
			if meta.IsNoMatchError(err) {
				return fmt.Errorf("host: the Cluster CRD is not installed (config/crd): %w", err)
			}
			return fmt.Errorf("host: %w", err)
		}
	}
	fmt.Fprintf(out, "host: Secret %s/%s (label %s=%s), Cluster %s -> %s\n", o.namespace, o.cluster, federation.SecretClusterLabel, o.cluster, o.cluster, memberCfg.Host)
	fmt.Fprintf(out, "cluster %q joined\n", o.cluster)
	return nil
}

// waitForToken polls the token Secret until the member's token controller (in
// kube-controller-manager) has written its token, and returns it base64-encoded.
func (g *globals) waitForToken(ctx context.Context, m *applier, secret *unstructured.Unstructured, timeout time.Duration) (string, error) {
	r, err := m.resource(secret)
	if err != nil {
		return "", err
	}
	var token string
	err = wait.PollUntilContextTimeout(ctx, g.opts.PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := r.Get(ctx, secret.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token, _, _ = unstructured.NestedString(u.Object, "data", corev1.ServiceAccountTokenKey)
		return token != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("token Secret %s: no %q after %s (is kube-controller-manager's token controller running?): %w", name(secret), corev1.ServiceAccountTokenKey, timeout, err)
	}
	return token, nil
}

func (g *globals) unjoin(ctx context.Context, out io.Writer, o *joinOptions) error {
	hostCfg, host, err := g.host()
	if err != nil {
		return err
	}
	h, err := newApplier(hostCfg)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	secretName := o.cluster
	c, err := host.Get(ctx, federation.ClusterGVR, "", o.cluster)
	switch {
	case err == nil:
		if n, _, _ := unstructured.NestedString(c.Object, "spec", "secretRef", "name"); n != "" {
			secretName = n
		}
		if _, err := h.remove(ctx, c); err != nil {
			return fmt.Errorf("host: %w", err)
		}
		fmt.Fprintf(out, "host: Cluster %s deleted\n", o.cluster)
	case apierrors.IsNotFound(err):
		fmt.Fprintf(out, "host: no Cluster %s\n", o.cluster)
	default:
		return fmt.Errorf("host: Cluster %s: %w", o.cluster, err)
	}
	s, err := host.Get(ctx, federation.SecretGVR, o.namespace, secretName)
	switch {
	case err == nil && s.GetLabels()[federation.SecretClusterLabel] == o.cluster:
		if _, err := h.remove(ctx, s); err != nil {
			return fmt.Errorf("host: %w", err)
		}
		fmt.Fprintf(out, "host: Secret %s/%s deleted\n", o.namespace, secretName)
	case err == nil:
		fmt.Fprintf(out, "host: Secret %s/%s left: it is not labelled %s=%s\n", o.namespace, secretName, federation.SecretClusterLabel, o.cluster)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("host: Secret %s/%s: %w", o.namespace, secretName, err)
	}

	memberCfg, err := g.restConfig(o.memberContext())
	if err != nil {
		return err
	}
	m, err := newApplier(memberCfg)
	if err != nil {
		return fmt.Errorf("member %s: %w", o.memberContext(), err)
	}
	objs, _, tokenSecret, err := memberObjects()
	if err != nil {
		return err
	}
	removed := 0
	todo := []*unstructured.Unstructured{tokenSecret}
	for i := len(objs) - 1; i >= 0; i-- { // bindings before roles before the account
		if objs[i].GetKind() != "Namespace" {
			todo = append(todo, objs[i])
		}
	}
	for _, u := range todo {
		gone, err := m.remove(ctx, u)
		if err != nil {
			return fmt.Errorf("member %s: %w", o.memberContext(), err)
		}
		if gone {
			removed++
		}
	}
	fmt.Fprintf(out, "member %s: %d of %d objects deleted (the rest were gone); the namespace stays\n", o.memberContext(), removed, len(todo))
	fmt.Fprintf(out, "cluster %q unjoined\n", o.cluster)
	return nil
}

func encode(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
