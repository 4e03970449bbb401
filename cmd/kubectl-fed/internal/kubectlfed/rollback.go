package kubectlfed

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// ReasonRollbackRequested is the reason of the Event rollback records on the federated object.
const ReasonRollbackRequested = "RollbackRequested"

type rollbackOptions struct {
	kind             string
	revision         int64
	restorePlacement bool
	historyNamespace string
}

func rollbackCommand(g *globals) *cobra.Command {
	o := &rollbackOptions{}
	cmd := &cobra.Command{
		Use:   "rollback KIND/NAME --to-revision N",
		Short: "Restore a revision of a federated object's template and overrides",
		Long: `rollback restores revision N of a federated object from its revision history (the
ControllerRevisions sync writes): its template, overrides and retainReplicas; --to-revision 0
is the revision before the current one. The placement and the replica count stay unless
--restore-placement. The object is updated on the host like any edit and sync propagates it;
an Event (reason ` + ReasonRollbackRequested + `) on the object records who asked for which revision.
A federated object a propagation policy generated is rewritten from its native object: the
revision's template is restored into that object instead, and a revision whose overrides (or,
with --restore-placement, placement) differ is refused, naming the policy to edit.`,
		Example: "  kubectl fed rollback federateddeployment/web --to-revision 3 -n shop",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			typ, key, err := g.typeAndKey(args[0], o.kind)
			if err != nil {
				return err
			}
			cfg, host, err := g.host()
			if err != nil {
				return err
			}
			return g.rollback(cmd.Context(), cmd.OutOrStdout(), cfg, host, typ, key, o)
		},
	}
	cmd.Flags().StringVar(&o.kind, "kind", "FederatedDeployment", "the kind when the argument is a bare NAME")
	cmd.Flags().Int64Var(&o.revision, "to-revision", 0, "the revision to restore (0: the one before the current)")
	cmd.Flags().BoolVar(&o.restorePlacement, "restore-placement", false, "restore the revision's spec.placement too")
	cmd.Flags().StringVar(&o.historyNamespace, "history-namespace", "", "the Syncer's Options.HistoryNamespace, for cluster-scoped federated objects (default: sync's default)")
	return cmd
}

// rollbackTo is the plugin's one call of sync's rollback.
func rollbackTo(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key, o *rollbackOptions) error {
	opts := []fedsync.RollbackOption{fedsync.HistoryNamespace(o.historyNamespace)}
	if o.restorePlacement {
		opts = append(opts, fedsync.RestorePlacement())
	}
	return fedsync.Rollback(ctx, host, typ, key, o.revision, opts...)
}

func (g *globals) rollback(ctx context.Context, out io.Writer, cfg *rest.Config, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key, o *rollbackOptions) error {
	if err := rollbackTo(ctx, host, typ, key, o); err != nil {
		return err
	}
	fed, err := getFederated(ctx, host, typ, key)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	who := whoAmI(ctx, cs)
	what := fmt.Sprintf("revision %d", o.revision)
	if o.revision == 0 {
		what = "the previous revision"
	}
	msg := fmt.Sprintf("kubectl fed rollback by %s to %s (restore placement: %v); now generation %d", who, what, o.restorePlacement, fed.Generation)
	ns := fed.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	now := metav1.NewTime(g.opts.Clock.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: fed.Name + ".", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: typ.Federated.GroupVersion().String(), Kind: typ.Federated.Kind,
			Namespace: fed.Namespace, Name: fed.Name, UID: fed.UID, ResourceVersion: fed.ResourceVersion,
		},
		Reason: ReasonRollbackRequested, Message: msg, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: FieldManager},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "fedkit.io/kubectl-fed", ReportingInstance: who,
	}
	if _, err := cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		fmt.Fprintf(out, "warning: the rollback is done, but its Event was not recorded: %v\n", err)
	}
	fmt.Fprintln(out, rollbackReport(typ, key, fed, what))
	return nil
}

// rollbackReport is the line rollback prints once fedsync.Rollback succeeded: what was
// rolled back, and who takes it from there. A generated Federated<Kind> (a policy's) is not
// rolled back itself: Rollback restored the native object it is generated from.
func rollbackReport(typ federation.TypeConfig, key federation.Key, fed *federation.FederatedObject, what string) string {
	if by := fed.Labels[federation.GeneratedByLabel]; by != "" {
		from := "the " + by + " loop"
		if p := fed.Annotations[federation.PolicyAnnotation]; p != "" {
			from = "policy " + p
		}
		return fmt.Sprintf("%s %s rolled back to %s: %s generates %s %s from it, and sync propagates that", typ.Target.Kind, key, what, from, typ.Federated.Kind, key)
	}
	return fmt.Sprintf("%s %s rolled back to %s: generation %d; sync propagates it", typ.Federated.Kind, key, what, fed.Generation)
}

// whoAmI is the user the host authenticates the plugin as (a SelfSubjectReview, as
// `kubectl auth whoami`), or "an unknown user".
func whoAmI(ctx context.Context, cs kubernetes.Interface) string {
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		return "an unknown user"
	}
	return r.Status.UserInfo.Username
}
