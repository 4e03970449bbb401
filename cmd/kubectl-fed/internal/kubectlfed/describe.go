package kubectlfed

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/fedkit/fedkit/federation"
)

func describeCommand(g *globals) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "describe KIND/NAME",
		Short: "Describe a federated object across its members: conditions, each member's copy, events",
		Long: `describe prints what get prints, at length: the federated object's conditions, then for
each cluster its schedule, sync's propagation and message, and the member's copy read live
(revision, generation, replica counts, readiness as the status collector judges it, and the
member object's own conditions), then the Events recorded on the federated object on the
host, oldest first. It writes nothing.`,
		Example: "  kubectl fed describe federateddeployment/web -n shop",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fed, typ, members, err := g.readMembers(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			events, err := eventsOf(cmd.Context(), host, fed)
			if err != nil {
				return err
			}
			return printDescribe(cmd.OutOrStdout(), fed, typ, members, events, g.opts.Clock.Now())
		},
	}
	o.flags(cmd)
	return cmd
}

// eventsOf lists the Events on fed (by uid) in its namespace, oldest first.
func eventsOf(ctx context.Context, host federation.ClusterClient, fed *federation.FederatedObject) ([]corev1.Event, error) {
	ns := fed.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	list, err := host.List(ctx, corev1.SchemeGroupVersion.WithResource("events"), ns, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("events of %s %s: %w", fed.Kind, fed.Name, err)
	}
	var out []corev1.Event
	for i := range list.Items {
		var e corev1.Event
		if err := federation.FromUnstructured(&list.Items[i], &e); err != nil {
			continue
		}
		if e.InvolvedObject.UID == fed.UID || (e.InvolvedObject.UID == "" && e.InvolvedObject.Kind == fed.Kind && e.InvolvedObject.Name == fed.Name) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	return out, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// printDescribe is describe's output: pure, so its test needs no server.
func printDescribe(out io.Writer, fed *federation.FederatedObject, typ federation.TypeConfig, members []memberCopy, events []corev1.Event, now time.Time) error {
	p := func(format string, args ...any) { fmt.Fprintf(out, format, args...) }
	p("Name:             %s\n", fed.Name)
	if fed.Namespace != "" {
		p("Namespace:        %s\n", fed.Namespace)
	}
	p("Kind:             %s (federates %s %s)\n", typ.Federated.Kind, typ.Target.GroupVersion().String(), typ.Target.Kind)
	p("Generation:       %d (observed %d)\n", fed.Generation, fed.Status.ObservedGeneration)
	p("Synced revision:  %d\n", fed.Status.SyncedRevision)
	p("Orphaning deletion: %t\n", fed.Annotations[federation.OrphanAnnotation] == "true")
	p("Conditions:\n")
	if len(fed.Status.Conditions) == 0 {
		p("  <none>\n")
	} else {
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tMESSAGE")
		for _, c := range fed.Status.Conditions {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, oneLine(c.Message))
		}
		w.Flush()
	}
	p("Members:\n")
	if len(members) == 0 {
		p("  <none>\n")
	}
	for _, m := range members {
		describeMember(out, m)
	}
	p("Events:\n")
	if len(events) == 0 {
		p("  <none>\n")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  TYPE\tREASON\tAGE\tFROM\tMESSAGE")
	for _, e := range events {
		age := "<unknown>"
		if t := eventTime(e); !t.IsZero() {
			age = duration.HumanDuration(now.Sub(t))
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", e.Type, e.Reason, age, e.Source.Component, oneLine(e.Message))
	}
	return w.Flush()
}

func describeMember(out io.Writer, m memberCopy) {
	p := func(format string, args ...any) { fmt.Fprintf(out, format, args...) }
	p("  %s:\n", m.Cluster)
	p("    Scheduled:    %s\n", dash(m.Scheduled))
	p("    Propagation:  %s", m.propagation())
	if m.Status != nil && m.Status.Message != "" {
		p(" (%s)", oneLine(m.Status.Message))
	}
	p("\n")
	switch {
	case m.Err != nil:
		p("    Object:       unreadable: %s\n", oneLine(m.Err.Error()))
		return
	case m.NotFound:
		p("    Object:       none in the cluster\n")
		return
	}
	managed := orDash(m.Object.GetLabels()[federation.ManagedByLabel])
	p("    Object:       uid %s, managed by %s, revision %s, generation %s\n", m.Object.GetUID(), managed, m.revision(), m.generation())
	if m.Observed.Replicas != nil {
		p("    Replicas:     %d desired, %s ready, %s up to date, %s available\n", *m.Observed.Replicas, m.count(m.Observed.ReadyReplicas), m.count(m.Observed.UpdatedReplicas), m.count(m.Observed.AvailableReplicas))
	}
	p("    Ready:        %s", m.ready())
	if msg := m.message(); msg != "" {
		p(" (%s)", msg)
	}
	p("\n")
	conds := memberConditions(m)
	if len(conds) == 0 {
		return
	}
	p("    Conditions:\n")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "      TYPE\tSTATUS\tREASON\tMESSAGE")
	for _, c := range conds {
		fmt.Fprintf(w, "      %s\t%s\t%s\t%s\n", c["type"], c["status"], c["reason"], oneLine(c["message"]))
	}
	w.Flush()
}

// memberConditions are the member object's status.conditions, as strings.
func memberConditions(m memberCopy) []map[string]string {
	raw, _, _ := unstructured.NestedSlice(m.Object.Object, "status", "conditions")
	var out []map[string]string
	for _, it := range raw {
		c, ok := it.(map[string]any)
		if !ok {
			continue
		}
		row := map[string]string{}
		for _, k := range []string{"type", "status", "reason", "message"} {
			s, _ := c[k].(string)
			row[k] = s
		}
		if strings.TrimSpace(row["type"]) != "" {
			out = append(out, row)
		}
	}
	return out
}
