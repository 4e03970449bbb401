package kubectlfed

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/fedkit/fedkit/federation"
)

func clustersCommand(g *globals) *cobra.Command {
	var selector string
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List the member clusters: readiness, taints, region, zones, version, capacity",
		Long: `clusters lists the Cluster objects on the host, as the cluster monitor last saw each one:
whether it is Ready (and why not), its taints (the monitor's not-ready and unreachable ones
among them), its region and zones (the spec's, else the ones discovered from its Nodes, else
its topology labels: what placement uses), its Kubernetes version, and its nodes' allocatable
CPU and memory with what running pods leave of it. It is kubectl get clusters -o wide with
the columns placement reads. It writes nothing.`,
		Example: "  kubectl fed clusters\n  kubectl fed clusters -l topology.kubernetes.io/region=eu-west-1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, host, err := g.host()
			if err != nil {
				return err
			}
			list, err := host.List(cmd.Context(), federation.ClusterGVR, "", metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				return fmt.Errorf("listing Clusters: %w", err)
			}
			clusters := make([]federation.Cluster, 0, len(list.Items))
			for i := range list.Items {
				c, err := federation.ClusterFromUnstructured(&list.Items[i])
				if err != nil {
					return fmt.Errorf("decoding the Cluster %s: %w", list.Items[i].GetName(), err)
				}
				clusters = append(clusters, *c)
			}
			return printClusters(cmd.OutOrStdout(), clusters, g.opts.Clock.Now())
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "a label selector of the Clusters to list")
	return cmd
}

// printClusters prints one row per Cluster, by name: pure, so its tests need no server.
func printClusters(out io.Writer, clusters []federation.Cluster, now time.Time) error {
	if len(clusters) == 0 {
		_, err := fmt.Fprintln(out, "No Clusters on the host: kubectl fed join CLUSTER --cluster-context CONTEXT adds one.")
		return err
	}
	slices.SortFunc(clusters, func(a, b federation.Cluster) int { return strings.Compare(a.Name, b.Name) })
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tREADY\tREASON\tREGION\tZONES\tVERSION\tTAINTS\tCPU\tMEMORY\tAGE")
	for _, c := range clusters {
		ready, reason := "Unknown", "-"
		if cond := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady); cond != nil {
			ready, reason = string(cond.Status), orDash(cond.Reason)
			if cond.Status == metav1.ConditionTrue {
				reason = "-"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, ready, reason, orDash(c.Region()),
			orDash(strings.Join(c.Zones(), ",")), orDash(c.Status.KubernetesVersion), taints(c.Spec.Taints),
			capacity(c.Status, corev1.ResourceCPU), capacity(c.Status, corev1.ResourceMemory), age(c.CreationTimestamp, now))
	}
	return w.Flush()
}

// taints are key=value:effect, comma-separated, as kubectl describe node shows them.
func taints(ts []corev1.Taint) string {
	var out []string
	for _, t := range ts {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+string(t.Effect))
	}
	return orDash(strings.Join(out, ","))
}

// capacity is the cluster's allocatable amount of r and what running pods leave of it:
// "available/capacity", "-" before the monitor measured it.
func capacity(st federation.ClusterStatus, r corev1.ResourceName) string {
	total, ok := st.Capacity[r]
	if !ok {
		return "-"
	}
	if avail, ok := st.Available[r]; ok {
		return avail.String() + "/" + total.String()
	}
	return total.String()
}

// age is kubectl's AGE column.
func age(created metav1.Time, now time.Time) string {
	if created.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(created.Time))
}
