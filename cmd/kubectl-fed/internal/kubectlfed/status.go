package kubectlfed

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

func statusCommand(g *globals) *cobra.Command {
	var kind string
	cmd := &cobra.Command{
		Use:   "status KIND/NAME",
		Short: "Say why each cluster has what it has, from the federated object's status",
		Long: `status reads a federated object on the host and prints, for each cluster, what the loops
recorded: the replicas the scheduler gave it (status.schedule), whether sync propagated the
current revision (status.clusters[].propagation and message), the member's readiness and
replicas (the status collector), and where a staged rollout is (status.rollout). Then a
warning for each of those clusters whose credentials expire soon or have expired (the
Cluster's CredentialsExpiring condition, from the cluster monitor). It writes nothing. KIND
is a federated or target kind: FederatedDeployment, deployment, ...`,
		Example: "  kubectl fed status federateddeployment/web -n shop\n  kubectl fed status web --kind deployment",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := kindAndName(args[0], kind); err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			typ, key, err := g.typeAndKeyIn(cmd.Context(), host, args[0], kind)
			if err != nil {
				return err
			}
			fed, err := getFederated(cmd.Context(), host, typ, key)
			if err != nil {
				return err
			}
			clusters, err := clustersOf(cmd.Context(), host, fed)
			if err != nil {
				return err
			}
			return printStatus(cmd.OutOrStdout(), fed, clusters)
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "FederatedDeployment", "the kind when the argument is a bare NAME")
	return cmd
}

func getFederated(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key) (*federation.FederatedObject, error) {
	u, err := host.Get(ctx, typ.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", typ.Federated.Kind, key, err)
	}
	fed := &federation.FederatedObject{}
	if err := federation.FromUnstructured(u, fed); err != nil {
		return nil, fmt.Errorf("%s %s: %w", typ.Federated.Kind, key, err)
	}
	return fed, nil
}

// clustersOf reads the Clusters fed's status names (those that exist).
func clustersOf(ctx context.Context, host federation.ClusterClient, fed *federation.FederatedObject) ([]federation.Cluster, error) {
	var out []federation.Cluster
	for _, name := range clusterNames(fed) {
		u, err := host.Get(ctx, federation.ClusterGVR, "", name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("host: Cluster %s: %w", name, err)
		}
		c, err := federation.ClusterFromUnstructured(u)
		if err != nil {
			return nil, fmt.Errorf("host: Cluster %s: %w", name, err)
		}
		out = append(out, *c)
	}
	return out, nil
}

// clusterNames are the clusters of fed's schedule and status.clusters, sorted.
func clusterNames(fed *federation.FederatedObject) []string {
	var names []string
	if s := fed.Status.Schedule; s != nil {
		for _, c := range s.Clusters {
			names = append(names, c.Name)
		}
	}
	for _, c := range fed.Status.Clusters {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// printStatus is the status command's output: pure, so its tests need no server. clusters
// are the Clusters of the object's clusters, for their credentials' warnings.
func printStatus(out io.Writer, fed *federation.FederatedObject, clusters []federation.Cluster) error {
	if err := printMembers(out, fed); err != nil {
		return err
	}
	for i := range clusters {
		c := meta.FindStatusCondition(clusters[i].Status.Conditions, federation.ConditionCredentialsExpiring)
		if c != nil && c.Status == metav1.ConditionTrue {
			fmt.Fprintf(out, "warning: cluster %s: %s (%s)\n", clusters[i].Name, oneLine(c.Message), c.Reason)
		}
	}
	return nil
}

// printMembers prints fed's conditions, rollout and one row per cluster.
func printMembers(out io.Writer, fed *federation.FederatedObject) error {
	st := &fed.Status
	key := federation.Key{Namespace: fed.Namespace, Name: fed.Name}
	fmt.Fprintf(out, "%s %s: generation %d (observed %d), synced revision %d\n", fed.Kind, key, fed.Generation, st.ObservedGeneration, st.SyncedRevision)
	if len(st.Conditions) > 0 {
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "CONDITION\tSTATUS\tREASON\tMESSAGE")
		for _, c := range st.Conditions {
			stale := ""
			if c.ObservedGeneration != 0 && c.ObservedGeneration < fed.Generation {
				stale = fmt.Sprintf(" (for generation %d)", c.ObservedGeneration)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s%s\n", c.Type, c.Status, c.Reason, oneLine(c.Message), stale)
		}
		w.Flush()
	}
	if r := st.Rollout; r != nil {
		fmt.Fprintf(out, "Rollout: revision %d, phase %s, stage %d/%d %s, stable revision %d\n", r.Revision, orDash(r.Phase), r.Stage, r.Stages, r.StageName, r.StableRevision)
	}

	scheduled := map[string]int64{}
	if st.Schedule != nil {
		for _, c := range st.Schedule.Clusters {
			scheduled[c.Name] = c.Replicas
		}
	}
	members := map[string]*federation.MemberStatus{}
	for i := range st.Clusters {
		members[st.Clusters[i].Name] = &st.Clusters[i]
	}
	names := clusterNames(fed)
	if len(names) == 0 {
		fmt.Fprintln(out, "No cluster: nothing scheduled or propagated yet (see the conditions).")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tSCHEDULED\tPROPAGATION\tREVISION\tREADY\tREPLICAS\tWHY")
	for _, n := range names {
		sched := "-"
		if v, ok := scheduled[n]; ok {
			sched = fmt.Sprint(v)
		}
		m := members[n]
		prop, rev, ready, reps := "-", "-", "-", "-"
		if m != nil {
			prop = "OK"
			if m.Propagation != "" {
				prop = m.Propagation
			}
			if m.Revision != 0 {
				rev = fmt.Sprint(m.Revision)
			}
			if m.Ready != nil {
				ready = fmt.Sprint(*m.Ready)
			}
			if m.Replicas != nil {
				reps = fmt.Sprintf("%s/%d", ptr(m.ReadyReplicas), *m.Replicas)
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n, sched, prop, rev, ready, reps, why(fed, n, m, scheduled))
	}
	return w.Flush()
}

// why explains one cluster's row from the status fields the loops wrote.
func why(fed *federation.FederatedObject, name string, m *federation.MemberStatus, scheduled map[string]int64) string {
	st := &fed.Status
	var parts []string
	_, isScheduled := scheduled[name]
	if st.Schedule != nil && slices.Contains(st.Schedule.NotReady, name) {
		parts = append(parts, "cluster was not ready when scheduled")
	}
	switch {
	case m == nil && isScheduled:
		parts = append(parts, "scheduled; sync has not listed it yet")
	case m == nil:
	case m.Propagation != "":
		parts = append(parts, oneLine(m.Message))
	case st.Schedule != nil && !isScheduled:
		parts = append(parts, "not in the schedule: sync removes its member object")
	}
	if r := st.Rollout; r != nil && isScheduled && m != nil && m.Revision != 0 && m.Revision < r.Revision {
		parts = append(parts, fmt.Sprintf("at revision %d: rollout of %d waits (stage %d/%d %s)", m.Revision, r.Revision, r.Stage, r.Stages, r.StageName))
	}
	if m != nil {
		if m.Stale {
			parts = append(parts, "status is stale: the member was not observed lately")
		}
		if m.Ready != nil && !*m.Ready {
			parts = append(parts, "member not ready")
		}
		if m.ObservedRevision != 0 && m.Revision != 0 && m.ObservedRevision != m.Revision {
			parts = append(parts, fmt.Sprintf("member runs revision %d", m.ObservedRevision))
		}
	}
	if len(parts) == 0 {
		if m != nil && m.Propagation == "" {
			return "up to date"
		}
		return "-"
	}
	return strings.Join(parts, "; ")
}

func ptr(p *int64) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
