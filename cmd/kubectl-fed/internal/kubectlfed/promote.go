package kubectlfed

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

type promoteOptions struct {
	writes
	kind, cluster, clusterNamespace string
}

func promoteCommand(g *globals) *cobra.Command {
	o := &promoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote KIND/NAME --cluster CLUSTER",
		Short: "Bring an object already running in a member under the federation, adopting it",
		Long: `promote reads an object that runs in a member cluster and no federation manages, and
creates its Federated<Kind> on the host, as karmadactl promote does: the member's object
without what its servers and controllers gave it as spec.template, placed in that cluster
(spec.placement.clusters), and annotated ` + federation.AdoptAnnotation + `: "true". Sync then
adopts the member's copy: it updates it in place (the same uid), labels it as managed, and
never deletes or recreates it. From then on, edit the Federated<Kind>: its placement may add
clusters, its overrides may change what each runs.

promote refuses an object a federation manages already, and one whose Federated<Kind>
exists. The namespace of a namespaced object must exist on the host (promote it first:
kubectl fed promote namespace/NAME --cluster CLUSTER).`,
		Example: `  kubectl fed promote deployment/web -n shop --cluster eu
  kubectl fed promote widget.example.com/blue -n shop --cluster eu --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.begin(cmd); err != nil {
				return err
			}
			if o.cluster == "" {
				return fmt.Errorf("--cluster is required: the member the object runs in")
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			typ, key, err := g.typeAndKeyIn(cmd.Context(), host, args[0], o.kind)
			if err != nil {
				return err
			}
			return o.promote(cmd.Context(), g, host, typ, key)
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.kind, "kind", "", "the kind when the argument is a bare NAME")
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "the member cluster the object runs in")
	cmd.Flags().StringVar(&o.clusterNamespace, "federation-namespace", kube.DefaultNamespace, "the host namespace of the Clusters' Secrets (the control plane's)")
	return cmd
}

func (o *promoteOptions) promote(ctx context.Context, g *globals, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key) error {
	set, err := g.members(ctx, host, o.clusterNamespace, []string{o.cluster})
	if err != nil {
		return err
	}
	member, err := set.Client(o.cluster)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", o.cluster, err)
	}
	obj, err := member.Get(ctx, typ.TargetGVR(), nativeNamespace(typ, key), key.Name)
	if err != nil {
		return fmt.Errorf("cluster %s: %s %s: %w", o.cluster, typ.Target.Kind, key, err)
	}
	if by := obj.GetLabels()[federation.ManagedByLabel]; by != "" {
		return fmt.Errorf("cluster %s: %s %s is managed by federation %q already (label %s): nothing to promote", o.cluster, typ.Target.Kind, key, by, federation.ManagedByLabel)
	}
	fed := Federated(typ, obj, map[string]any{"clusters": []any{map[string]any{"name": o.cluster}}})
	fed.SetAnnotations(map[string]string{federation.AdoptAnnotation: "true"})
	err = o.writes.create(ctx, host, typ.FederatedGVR(), fed)
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("%s %s exists already: the object is federated (kubectl fed get %s/%s)", typ.Federated.Kind, objectKey(fed), strings.ToLower(typ.Federated.Kind), fed.GetName())
	case apierrors.IsNotFound(err) && fed.GetNamespace() != "":
		return fmt.Errorf("%w (does namespace %s exist on the host? kubectl fed promote namespace/%s --cluster %s)", err, fed.GetNamespace(), fed.GetNamespace(), o.cluster)
	}
	return err
}
