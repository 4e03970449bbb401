package kubectlfed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// DefaultUnjoinTimeout is how long unjoin waits for the Cluster to be gone (--timeout): longer
// than sync's default deletion timeout (10 minutes), after which sync lets a cluster it cannot
// clean up go.
const DefaultUnjoinTimeout = 15 * time.Minute

type unjoinOptions struct {
	joinOptions
	wait    bool
	timeout time.Duration
	force   bool
}

func unjoinCommand(g *globals) *cobra.Command {
	o := &unjoinOptions{}
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER --cluster-context CTX",
		Short: "Remove a member cluster from the federation",
		Long: `unjoin undoes join. It deletes the Cluster CLUSTER on the host and waits until it is gone:
sync holds it with its finalizers until it has cleaned up the member (by default it orphans
its objects there, without fedkit's labels). Only then does it revoke the member's
credentials: the Cluster's Secret on the host (only when it is labelled
` + federation.SecretClusterLabel + `=CLUSTER), then this federation's and Cluster's
ClusterRoleBindings, ClusterRoles and ServiceAccount in the member. Other Clusters' accounts
and the member's namespace stay. A pull cluster's (join --mode Pull) are on the host only: its
agent's RoleBinding, Role and ServiceAccount, then its namespace there; the member is not
reached.

When the Cluster is not gone within --timeout, unjoin fails and keeps the credentials, so sync
can still finish: run it again, or give --force to revoke them anyway (what sync has not
cleaned up then stays in the member). --wait=false deletes the Cluster and returns at once;
the credentials stay until a later unjoin finds it gone. What is already gone is skipped:
running unjoin again changes nothing.`,
		Example: "  kubectl fed unjoin aws --cluster-context aws-admin\n  kubectl fed unjoin aws --cluster-context aws-admin --timeout 2m --force",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			return g.unjoin(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&o.wait, "wait", true, "wait for the Cluster to be gone (sync's clean-up done) before revoking the credentials")
	cmd.Flags().DurationVar(&o.timeout, "timeout", DefaultUnjoinTimeout, "how long to wait for the Cluster to be gone")
	cmd.Flags().BoolVar(&o.force, "force", false, "revoke the credentials even when the Cluster is not gone (after --timeout, or at once with --wait=false)")
	return cmd
}

func (g *globals) unjoin(ctx context.Context, out io.Writer, o *unjoinOptions) error {
	hostCfg, host, err := g.host()
	if err != nil {
		return err
	}
	h, err := newApplier(hostCfg)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	pull := pullCluster(ctx, host, o.cluster)
	secretName, err := g.removeCluster(ctx, out, host, h, o)
	switch {
	case errors.Is(err, errClusterStays) && o.force:
		fmt.Fprintf(out, "--force: revoking the credentials of Cluster %s before it is gone: what sync has not cleaned up stays in the member\n", o.cluster)
	case errors.Is(err, errClusterStays) && !o.wait:
		fmt.Fprintf(out, "host: Cluster %s is being deleted; credentials kept until it is gone: run unjoin again then (or --force)\n", o.cluster)
		return nil
	case err != nil:
		return err
	}
	if pull {
		if err := revokeAgent(ctx, out, h, o.cluster); err != nil {
			return err
		}
		fmt.Fprintf(out, "cluster %q unjoined\n", o.cluster)
		return nil
	}
	if err := g.revokeHost(ctx, out, host, h, o, secretName); err != nil {
		return err
	}
	if err := g.revokeMember(ctx, out, host, h, o); err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster %q unjoined\n", o.cluster)
	return nil
}

// errClusterStays is removeCluster's error for a Cluster that is not gone (yet).
var errClusterStays = errors.New("the Cluster is still there")

// removeCluster deletes the Cluster and, with --wait, waits until it is gone. It returns the
// name of the Cluster's Secret; an error wrapping errClusterStays when it is not gone.
func (g *globals) removeCluster(ctx context.Context, out io.Writer, host *kube.Client, h *applier, o *unjoinOptions) (string, error) {
	c, err := host.Get(ctx, federation.ClusterGVR, "", o.cluster)
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(out, "host: no Cluster %s\n", o.cluster)
		return o.cluster, nil
	case err != nil:
		return "", fmt.Errorf("host: Cluster %s: %w", o.cluster, err)
	}
	secretName := o.cluster
	if n, _, _ := unstructured.NestedString(c.Object, "spec", "secretRef", "name"); n != "" {
		secretName = n
	}
	if c.GetDeletionTimestamp() == nil {
		if _, err := h.remove(ctx, c); err != nil {
			return "", fmt.Errorf("host: %w", err)
		}
	}
	if !o.wait {
		return secretName, fmt.Errorf("host: Cluster %s: %w", o.cluster, errClusterStays)
	}
	waited := false
	var last *unstructured.Unstructured
	err = wait.PollUntilContextTimeout(ctx, g.opts.PollInterval, o.timeout, true, func(ctx context.Context) (bool, error) {
		u, err := host.Get(ctx, federation.ClusterGVR, "", o.cluster)
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, err
		case !waited:
			fmt.Fprintf(out, "host: Cluster %s deleted; waiting for it to be gone (finalizers: %s)\n", o.cluster, strings.Join(u.GetFinalizers(), ", "))
			waited = true
		}
		last = u
		return false, nil
	})
	switch {
	case err == nil && waited:
		fmt.Fprintf(out, "host: Cluster %s gone\n", o.cluster)
		return secretName, nil
	case err == nil:
		fmt.Fprintf(out, "host: Cluster %s deleted\n", o.cluster)
		return secretName, nil
	case last != nil && wait.Interrupted(err) && ctx.Err() == nil:
		err = fmt.Errorf("host: Cluster %s is still there after %s (finalizers: %s): %w; credentials kept, so its clean-up can finish: run unjoin again, or give --force to revoke them anyway",
			o.cluster, o.timeout, strings.Join(last.GetFinalizers(), ", "), errClusterStays)
		if o.force {
			fmt.Fprintln(out, err)
		}
		return secretName, err
	}
	return "", fmt.Errorf("host: waiting for Cluster %s to be gone: %w", o.cluster, err)
}

// revokeHost deletes the Cluster's Secret on the host, when it is labelled for the Cluster.
func (g *globals) revokeHost(ctx context.Context, out io.Writer, host *kube.Client, h *applier, o *unjoinOptions, secretName string) error {
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
	return nil
}

// revokeMember deletes the member account of this federation and Cluster; its token stops
// working with its ServiceAccount.
func (g *globals) revokeMember(ctx context.Context, out io.Writer, host *kube.Client, h *applier, o *unjoinOptions) error {
	fed, err := federationID(ctx, h, host, o.namespace, false)
	if err != nil {
		return err
	}
	acct, err := newAccount(o.cluster, fed)
	if err != nil {
		return err
	}
	memberCfg, err := g.restConfig(o.memberContext())
	if err != nil {
		return err
	}
	m, err := newApplier(memberCfg)
	if err != nil {
		return fmt.Errorf("member %s: %w", o.memberContext(), err)
	}
	todo := acct.revocable()
	removed := 0
	for _, u := range todo {
		gone, err := m.remove(ctx, u)
		if err != nil {
			return fmt.Errorf("member %s: %w", o.memberContext(), err)
		}
		if gone {
			removed++
		}
	}
	fmt.Fprintf(out, "member %s: %d of %d objects deleted (the rest were gone): ServiceAccount %s/%s and its roles; the namespace stays\n",
		o.memberContext(), removed, len(todo), acct.namespace, acct.name)
	return nil
}
