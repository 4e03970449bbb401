package kubectlfed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// ErrProblems is wrapped by the error of a command whose output was printed but found
// problems: preview errors (or warnings with --strict). Main exits 1 for it, 2 otherwise.
var ErrProblems = errors.New("problems found")

// Options are what Main's commands need besides their arguments. The zero value is the
// default: the real clock, standard streams supplied by the caller.
type Options struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Clock is the time preview evaluates at and rollback's Event carries.
	Clock clock.PassiveClock
	// PollInterval is how often join looks for the member's token (default 500ms).
	PollInterval time.Duration
	// Version is the plugin's version, for `kubectl fed version` (cmd/kubectl-fed's linked
	// main.version). Empty: the build information's.
	Version string
	// Host and Clusters, when set, are the host and the member clusters the operator verbs
	// (federate, promote, cordon, taint, get, describe, orphaning-deletion, enable, disable)
	// act on, instead of the kubeconfig's host and the members its Clusters and Secrets
	// name: a fake fleet in tests, an embedder's own clients.
	Host     federation.ClusterClient
	Clusters federation.ClusterSet
	// OpenAPI, when set, reads the host's OpenAPI v3 document at a path
	// (/openapi/v3/apis/apps/v1), for enable's built-in kinds; nil: the kubeconfig's host.
	OpenAPI func(ctx context.Context, path string) ([]byte, error)
}

// Main runs `kubectl fed` with args (without the program name) and returns the exit status:
// 0, 1 when the command found problems (ErrProblems), 2 for any other error.
func Main(ctx context.Context, args []string, opts Options) int {
	cmd := NewCommand(opts)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrProblems):
		fmt.Fprintln(cmd.ErrOrStderr(), "error:", err)
		return 1
	default:
		fmt.Fprintln(cmd.ErrOrStderr(), "error:", err)
		return 2
	}
}

// globals are the flags every command shares.
type globals struct {
	opts        Options
	kubeconfig  string
	context     string
	hostContext string
	namespace   string
}

// NewCommand returns the root command with every subcommand.
func NewCommand(opts Options) *cobra.Command {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	g := &globals{opts: opts}
	root := &cobra.Command{
		Use:   "kubectl-fed",
		Short: "Manage a fedkit federation: join clusters, inspect and roll back federated objects",
		Long: `kubectl fed manages a fedkit federation from the host cluster's kubeconfig context.

  kubectl fed join CLUSTER --cluster-context CTX   add a member cluster
  kubectl fed unjoin CLUSTER --cluster-context CTX remove it
  kubectl fed clusters                             the member clusters: ready, taints, region, capacity
  kubectl fed status KIND/NAME                     why each cluster has what it has
  kubectl fed rollback KIND/NAME --to-revision N   restore a revision of the template
  kubectl fed preview -f FILE                      what the loops would do, touching nothing
  kubectl fed migrate -f kubefed.yaml              convert KubeFed v0.10 objects
  kubectl fed version                              the plugin's and the control plane's versions

  kubectl fed federate KIND/NAME                   a host object to its Federated<Kind>
  kubectl fed promote KIND/NAME --cluster C        a member's object under the federation, adopted
  kubectl fed get KIND/NAME                        what each member runs, with its own status
  kubectl fed describe KIND/NAME                   the same with conditions and events
  kubectl fed cordon|uncordon CLUSTER              no new placements in a cluster, or again
  kubectl fed taint CLUSTER KEY[=VALUE]:EFFECT     taint a cluster (KEY- removes)
  kubectl fed orphaning-deletion enable KIND/NAME  leave the member objects when it is deleted
  kubectl fed enable RESOURCE.GROUP                federate a type, custom resources included
  kubectl fed disable RESOURCE.GROUP               stop federating it, touching no member object`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if opts.Stdin != nil {
		root.SetIn(opts.Stdin)
	}
	if opts.Stdout != nil {
		root.SetOut(opts.Stdout)
	}
	if opts.Stderr != nil {
		root.SetErr(opts.Stderr)
	}
	f := root.PersistentFlags()
	f.StringVar(&g.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&g.context, "context", "", "the host cluster's kubeconfig context (default: the current context)")
	f.StringVar(&g.hostContext, "host-context", "", "the same as --context, as kubefedctl spells it")
	f.StringVarP(&g.namespace, "namespace", "n", "", "the namespace of the federated object (default: the context's namespace)")
	root.AddCommand(joinCommand(g), unjoinCommand(g), statusCommand(g), rollbackCommand(g), previewCommand(g), migrateCommand(g),
		clustersCommand(g), versionCommand(g), federateCommand(g), promoteCommand(g), getCommand(g), describeCommand(g),
		cordonCommand(g, true), cordonCommand(g, false), taintCommand(g), orphanCommand(g), enableCommand(g), disableCommand(g))
	return root
}

// loader is the kubeconfig as kubectl loads it, with context as the current context.
func (g *globals) loader(context string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
}

func (g *globals) hostContextName() (string, error) {
	if g.context != "" && g.hostContext != "" && g.context != g.hostContext {
		return "", fmt.Errorf("--context %q and --host-context %q disagree: give one", g.context, g.hostContext)
	}
	if g.hostContext != "" {
		return g.hostContext, nil
	}
	return g.context, nil
}

// restConfig is the rest.Config of a kubeconfig context ("" = the current one).
func (g *globals) restConfig(context string) (*rest.Config, error) {
	cfg, err := g.loader(context).ClientConfig()
	if err != nil {
		if context == "" {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return nil, fmt.Errorf("kubeconfig context %q: %w", context, err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-fed"
	return cfg, nil
}

// host is the host cluster's config and client.
func (g *globals) host() (*rest.Config, *kube.Client, error) {
	name, err := g.hostContextName()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := g.restConfig(name)
	if err != nil {
		return nil, nil, err
	}
	c, err := kube.New(cfg, kube.Options{})
	if err != nil {
		return nil, nil, err
	}
	return cfg, c, nil
}

// hostClient is Options.Host, else the kubeconfig's host.
func (g *globals) hostClient() (federation.ClusterClient, error) {
	if g.opts.Host != nil {
		return g.opts.Host, nil
	}
	_, c, err := g.host()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// members is Options.Clusters, else a ClusterSet of the members the host's Clusters and their
// Secrets name (in namespace, the control plane's), built for the named clusters only, as the
// control plane builds its own.
func (g *globals) members(ctx context.Context, host federation.ClusterClient, namespace string, names []string) (federation.ClusterSet, error) {
	if g.opts.Clusters != nil {
		return g.opts.Clusters, nil
	}
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Namespace: namespace, Client: kube.Options{UserAgent: "kubectl-fed"}})
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		// A cluster whose client cannot be built is reported by Client, per row.
		if _, err := set.Reconcile(ctx, federation.Key{Name: n}); err != nil && !errors.Is(err, federation.ErrTerminal) {
			return nil, fmt.Errorf("cluster %s: %w", n, err)
		}
	}
	return set, nil
}

// objectNamespace is -n, else the host context's namespace, else "default".
func (g *globals) objectNamespace() (string, error) {
	if g.namespace != "" {
		return g.namespace, nil
	}
	name, err := g.hostContextName()
	if err != nil {
		return "", err
	}
	ns, _, err := g.loader(name).Namespace()
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	return ns, nil
}

// typeAndKey parses KIND/NAME (KIND: a federated or target kind, any case, e.g.
// FederatedDeployment, deployment) or NAME with --kind, over the built-in types.
func (g *globals) typeAndKey(arg, kind string) (federation.TypeConfig, federation.Key, error) {
	return g.typeAndKeyOf(federation.BuiltinTypes(), arg, kind)
}

// typeAndKeyIn is typeAndKey over the types the host federates (see types).
func (g *globals) typeAndKeyIn(ctx context.Context, host federation.ClusterClient, arg, kind string) (federation.TypeConfig, federation.Key, error) {
	types, err := g.types(ctx, host)
	if err != nil {
		return federation.TypeConfig{}, federation.Key{}, err
	}
	return g.typeAndKeyOf(types, arg, kind)
}

// kindAndName splits KIND/NAME, or NAME with kind (--kind).
func kindAndName(arg, kind string) (string, string, error) {
	name := arg
	if k, n, ok := strings.Cut(arg, "/"); ok {
		kind, name = k, n
	}
	if name == "" || kind == "" {
		return "", "", fmt.Errorf("%q: want KIND/NAME or NAME with --kind", arg)
	}
	return kind, name, nil
}

func (g *globals) typeAndKeyOf(types []federation.TypeConfig, arg, kind string) (federation.TypeConfig, federation.Key, error) {
	kind, name, err := kindAndName(arg, kind)
	if err != nil {
		return federation.TypeConfig{}, federation.Key{}, err
	}
	typ, ok := typeIn(types, kind)
	if !ok {
		var kinds []string
		for _, t := range types {
			kinds = append(kinds, t.Federated.Kind)
		}
		return federation.TypeConfig{}, federation.Key{}, fmt.Errorf("kind %q is not a federated type (%s)", kind, strings.Join(kinds, ", "))
	}
	key := federation.Key{Name: name}
	if typ.FederatedNamespaced() {
		ns, err := g.objectNamespace()
		if err != nil {
			return federation.TypeConfig{}, federation.Key{}, err
		}
		key.Namespace = ns
		if !typ.Namespaced {
			key.Namespace = name // a FederatedNamespace lives in the namespace it federates
		}
	}
	return typ, key, nil
}

// types are the types the verbs know: the host's FederatedTypeConfigs (those that are valid),
// then the built-in types they do not configure.
func (g *globals) types(ctx context.Context, host federation.ClusterClient) ([]federation.TypeConfig, error) {
	var out []federation.TypeConfig
	list, err := host.List(ctx, federation.FederatedTypeConfigGVR, "", metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		// No configured types on this host, or none this user may read: the built-in ones.
	case err != nil:
		return nil, fmt.Errorf("FederatedTypeConfigs: %w", err)
	default:
		for i := range list.Items {
			ftc := &federation.FederatedTypeConfig{}
			if federation.FromUnstructured(&list.Items[i], ftc) != nil {
				continue
			}
			if t, err := ftc.TypeConfig(); err == nil {
				out = append(out, t)
			}
		}
	}
	for _, t := range federation.BuiltinTypes() {
		if !slices.ContainsFunc(out, func(c federation.TypeConfig) bool { return c.Federated.Kind == t.Federated.Kind }) {
			out = append(out, t)
		}
	}
	return out, nil
}

// typeIn finds kind among types: a federated or target kind, resource or group-qualified
// resource (deployments.apps), in any case, singular or plural.
func typeIn(types []federation.TypeConfig, kind string) (federation.TypeConfig, bool) {
	for _, t := range types {
		names := []string{t.Federated.Kind, t.Target.Kind, t.FederatedResource, t.TargetResource}
		if t.Target.Group != "" {
			names = append(names, t.TargetResource+"."+t.Target.Group, t.Target.Kind+"."+t.Target.Group)
		}
		for _, k := range names {
			if strings.EqualFold(k, kind) || strings.EqualFold(k+"s", kind) {
				return t, true
			}
		}
	}
	return federation.TypeConfig{}, false
}
