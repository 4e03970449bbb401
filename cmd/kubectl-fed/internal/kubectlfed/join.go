package kubectlfed

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// FieldManager is the server-side apply field manager of every object the plugin writes.
const FieldManager = "kubectl-fed"

// DefaultTokenLifetime is the lifetime join asks of the member's token (--token-lifetime).
const DefaultTokenLifetime = 365 * 24 * time.Hour

// minTokenLifetime is the shortest lifetime the TokenRequest API grants.
const minTokenLifetime = 10 * time.Minute

type joinOptions struct {
	cluster        string
	clusterContext string
	namespace      string // the host namespace of Cluster Secrets
	lifetime       time.Duration
	secrets        bool
	mode           string // Push or Pull
	agentConfig    string // pull: where the agent's kubeconfig for the host is written
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

In the member (--cluster-context): config/rbac/member's Namespace, and a ServiceAccount,
ClusterRole and ClusterRoleBinding of this federation and Cluster only (fedkit-CLUSTER-HASH),
with config/rbac/member/secrets.yaml's role for Secrets when --secrets is given. Then a token
of that ServiceAccount from the member's TokenRequest API, valid for --token-lifetime (the
member's API server may grant less; join says when it expires). No token controller is needed.
On the host: a Secret labelled ` + federation.SecretClusterLabel + `=CLUSTER holding the token,
and the Cluster CLUSTER (the member's API endpoint and CA from the kubeconfig).

The token expires: the cluster monitor warns ahead (the Cluster's condition
CredentialsExpiring, and kubectl fed status). Running join again renews it; everything else
is written with server-side apply and stays as it is.`,
		Example: "  kubectl fed join aws --cluster-context aws-admin --context host\n  kubectl fed join aws --cluster-context aws-admin --secrets --token-lifetime 2160h",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			return g.join(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	o.flags(cmd)
	cmd.Flags().DurationVar(&o.lifetime, "token-lifetime", DefaultTokenLifetime, "how long the member's token is valid (at least 10m; the member's API server may grant less)")
	cmd.Flags().BoolVar(&o.secrets, "secrets", false, "grant the member's Secrets too (config/rbac/member/secrets.yaml), for FederatedSecrets and workloads' Secrets; without it, join takes that grant away")
	cmd.Flags().StringVar(&o.mode, "mode", string(federation.ClusterModePush), "Push: the control plane reaches the member; Pull: an agent in the member reaches the host (package agent), and the host holds no credential for the member")
	cmd.Flags().StringVar(&o.agentConfig, "agent-kubeconfig", "", "with --mode Pull: the file to write the agent's kubeconfig for the host to (mode 0600; its token is the agent's, confined to the cluster's namespace)")
	cmd.Flags().Duration("token-timeout", 0, "")
	_ = cmd.Flags().MarkDeprecated("token-timeout", "join requests its token through the TokenRequest API and waits for no token controller")
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

func (o *joinOptions) memberContext() string { return orDefault(o.clusterContext, o.cluster) }

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func (g *globals) join(ctx context.Context, out io.Writer, o *joinOptions) error {
	if errs := validation.IsDNS1123Subdomain(o.cluster); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %s", o.cluster, errs[0])
	}
	if o.lifetime < minTokenLifetime {
		return fmt.Errorf("--token-lifetime %s: the TokenRequest API grants no less than %s", o.lifetime, minTokenLifetime)
	}
	switch federation.ClusterMode(o.mode) {
	case federation.ClusterModePush:
	case federation.ClusterModePull:
		return g.joinPull(ctx, out, o)
	default:
		return fmt.Errorf("--mode %q: want Push or Pull", o.mode)
	}
	hostCfg, host, err := g.host()
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
	h, err := newApplier(hostCfg)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	fed, err := federationID(ctx, h, host, o.namespace, true)
	if err != nil {
		return err
	}

	// The member: the account of this federation and Cluster, then its token.
	acct, err := newAccount(o.cluster, fed)
	if err != nil {
		return err
	}
	token, err := g.grant(ctx, out, memberCfg, acct, o)
	if err != nil {
		return fmt.Errorf("member %s: %w", o.memberContext(), err)
	}

	// The host: the Secret, then the Cluster that names it.
	secret := &unstructured.Unstructured{}
	secret.SetAPIVersion("v1")
	secret.SetKind("Secret")
	secret.SetName(o.cluster)
	secret.SetNamespace(o.namespace)
	secret.SetLabels(map[string]string{federation.SecretClusterLabel: o.cluster})
	secret.Object["type"] = string(corev1.SecretTypeOpaque)
	secret.Object["data"] = map[string]any{kube.TokenKey: encode([]byte(token))}
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
	for _, u := range []*unstructured.Unstructured{secret, cluster} {
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

// grant applies the member account's objects (and takes its Secrets role away without
// --secrets), then requests its token from the TokenRequest API.
func (g *globals) grant(ctx context.Context, out io.Writer, cfg *rest.Config, acct account, o *joinOptions) (string, error) {
	m, err := newApplier(cfg)
	if err != nil {
		return "", err
	}
	apply, remove := acct.base, acct.secrets
	if o.secrets {
		apply, remove = append(slices.Clip(apply), acct.secrets...), nil
	}
	for _, u := range apply {
		if err := m.apply(ctx, u); err != nil {
			return "", err
		}
	}
	for _, u := range remove {
		if _, err := m.remove(ctx, u); err != nil {
			return "", err
		}
	}
	what := "its ClusterRole and binding (config/rbac/member)"
	if o.secrets {
		what += ", and " + acct.name + "-secrets for Secrets (config/rbac/member/secrets.yaml)"
	}
	fmt.Fprintf(out, "member %s: ServiceAccount %s/%s, %s\n", o.memberContext(), acct.namespace, acct.name, what)

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	secs := int64(o.lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(acct.namespace).CreateToken(ctx, acct.name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token of ServiceAccount %s/%s (TokenRequest API): %w", acct.namespace, acct.name, err)
	}
	exp := tr.Status.ExpirationTimestamp.UTC()
	granted := ""
	if got := exp.Sub(g.opts.Clock.Now()); got < o.lifetime-time.Minute {
		granted = fmt.Sprintf(" (asked for %s; the member's API server granted about %s)", o.lifetime, got.Round(time.Minute))
	}
	fmt.Fprintf(out, "member %s: token of ServiceAccount %s/%s expires at %s%s: run join again before then to renew it (the cluster monitor warns ahead: condition CredentialsExpiring)\n",
		o.memberContext(), acct.namespace, acct.name, exp.Format(time.RFC3339), granted)
	return tr.Status.Token, nil
}

func encode(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
