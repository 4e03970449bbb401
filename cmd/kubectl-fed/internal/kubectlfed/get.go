package kubectlfed

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/status"
)

// memberCopy is what get and describe read of one cluster's copy of a federated object.
type memberCopy struct {
	Cluster string
	// Scheduled is the scheduler's replicas for the cluster (nil: not in the schedule).
	Scheduled *int64
	// Status is the federated object's status.clusters[] entry (nil: sync lists none).
	Status *federation.MemberStatus
	// Object is the member's copy as its API server returns it now; nil with Err, or when
	// NotFound.
	Object   *unstructured.Unstructured
	NotFound bool
	Err      error
	// Observed is the member object's own status, read by the kind's extractor (the status
	// collector's); ObserveErr when its status does not read.
	Observed   status.Observation
	ObserveErr error
}

type getOptions struct {
	kind, output, clusterNamespace string
}

func getCommand(g *globals) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get KIND/NAME",
		Short: "Show what each member cluster runs of a federated object, with the member's own status",
		Long: `get reads a federated object on the host and its copy in every cluster its schedule or
status names, live from each member's API server, and prints one row per cluster: the
replicas the scheduler gave it, sync's propagation, the revision the member runs
(federation.k8s.io/revision), the member's own generation and observedGeneration, its replica
counts, and whether it is ready as the status collector judges the kind (its extractor, or
the kind's rules). A member that cannot be reached says why in its row. -o yaml prints the
member objects. It writes nothing.`,
		Example: "  kubectl fed get federateddeployment/web -n shop\n  kubectl fed get widget/blue -n shop -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fed, typ, members, err := g.readMembers(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			if o.output == "yaml" {
				for _, m := range members {
					if m.Object != nil {
						if err := printYAML(cmd.OutOrStdout(), m.Object); err != nil {
							return err
						}
					}
				}
				return nil
			}
			return printGet(cmd.OutOrStdout(), fed, typ, members)
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "yaml: print the member objects")
	return cmd
}

func (o *getOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.kind, "kind", "", "the kind when the argument is a bare NAME")
	cmd.Flags().StringVar(&o.clusterNamespace, "federation-namespace", kube.DefaultNamespace, "the host namespace of the Clusters' Secrets (the control plane's)")
}

// readMembers reads the federated object arg names and every member's copy of it.
func (g *globals) readMembers(ctx context.Context, arg string, o *getOptions) (*federation.FederatedObject, federation.TypeConfig, []memberCopy, error) {
	host, err := g.hostClient()
	if err != nil {
		return nil, federation.TypeConfig{}, nil, err
	}
	typ, key, err := g.typeAndKeyIn(ctx, host, arg, o.kind)
	if err != nil {
		return nil, typ, nil, err
	}
	fed, err := getFederated(ctx, host, typ, key)
	if err != nil {
		return nil, typ, nil, err
	}
	names := clusterNames(fed)
	set, err := g.members(ctx, host, o.clusterNamespace, names)
	if err != nil {
		return nil, typ, nil, err
	}
	extract := g.extractor(typ)
	out := make([]memberCopy, 0, len(names))
	for _, n := range names {
		out = append(out, readMember(ctx, fed, typ, set, n, extract))
	}
	return fed, typ, out, nil
}

// extractor is the status collector's extractor of typ's kind: its Go code, or its rules.
func (g *globals) extractor(typ federation.TypeConfig) status.Extractor {
	return status.KindExtractor(typ)
}

func readMember(ctx context.Context, fed *federation.FederatedObject, typ federation.TypeConfig, set federation.ClusterSet, name string, extract status.Extractor) memberCopy {
	m := memberCopy{Cluster: name}
	if s := fed.Status.Schedule; s != nil {
		for _, c := range s.Clusters {
			if c.Name == name {
				m.Scheduled = &c.Replicas
			}
		}
	}
	for i := range fed.Status.Clusters {
		if fed.Status.Clusters[i].Name == name {
			m.Status = &fed.Status.Clusters[i]
		}
	}
	c, err := set.Client(name)
	if err != nil {
		m.Err = err
		return m
	}
	ns := ""
	if typ.Namespaced {
		ns = fed.Namespace
	}
	obj, err := c.Get(ctx, typ.TargetGVR(), ns, fed.Name)
	switch {
	case apierrors.IsNotFound(err):
		m.NotFound = true
	case err != nil:
		m.Err = err
	default:
		m.Object = obj
		m.Observed, m.ObserveErr = extract(obj)
	}
	return m
}

// printGet prints one row per member.
func printGet(out io.Writer, fed *federation.FederatedObject, typ federation.TypeConfig, members []memberCopy) error {
	fmt.Fprintf(out, "%s %s: generation %d, synced revision %d\n", typ.Federated.Kind, federation.Key{Namespace: fed.Namespace, Name: fed.Name}, fed.Generation, fed.Status.SyncedRevision)
	if len(members) == 0 {
		_, err := fmt.Fprintln(out, "No cluster: nothing scheduled or propagated yet (kubectl fed status says why).")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tSCHEDULED\tPROPAGATION\tREVISION\tGENERATION\tREADY\tUP-TO-DATE\tAVAILABLE\tMEMBER READY\tMESSAGE")
	for _, m := range members {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Cluster, dash(m.Scheduled), m.propagation(), m.revision(), m.generation(),
			m.readyCount(), m.count(m.Observed.UpdatedReplicas), m.count(m.Observed.AvailableReplicas), m.ready(), m.message())
	}
	return w.Flush()
}

func (m memberCopy) propagation() string {
	switch {
	case m.Status == nil:
		return "-"
	case m.Status.Propagation == "":
		return "OK"
	}
	return m.Status.Propagation
}

func (m memberCopy) revision() string {
	if m.Object == nil {
		return "-"
	}
	return orDash(m.Object.GetAnnotations()[federation.RevisionAnnotation])
}

// generation is the member's generation/observedGeneration.
func (m memberCopy) generation() string {
	if m.Object == nil {
		return "-"
	}
	g := strconv.FormatInt(m.Object.GetGeneration(), 10)
	if m.Observed.ObservedGeneration != nil {
		g += "/" + strconv.FormatInt(*m.Observed.ObservedGeneration, 10)
	}
	return g
}

// readyCount is kubectl's READY ready/desired, or "-" for a kind without replicas.
func (m memberCopy) readyCount() string {
	if m.Object == nil || m.Observed.Replicas == nil {
		return "-"
	}
	return dash(m.Observed.ReadyReplicas) + "/" + strconv.FormatInt(*m.Observed.Replicas, 10)
}

// dash is n, "-" when nil.
func dash(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

// count is a member's count, "-" when it has none or could not be read.
func (m memberCopy) count(n *int64) string {
	if m.Object == nil || n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

func (m memberCopy) ready() string {
	switch {
	case m.Object == nil || m.ObserveErr != nil:
		return "-"
	case m.Observed.Ready:
		return "True"
	}
	return "False"
}

// message says why a member is not ready, or what went wrong reading it.
func (m memberCopy) message() string {
	switch {
	case m.Err != nil:
		return oneLine(m.Err.Error())
	case m.NotFound:
		return "no copy in the cluster"
	case m.ObserveErr != nil:
		return oneLine(m.ObserveErr.Error())
	case m.Object.GetLabels()[federation.ManagedByLabel] == "":
		return "not managed by the federation (label " + federation.ManagedByLabel + " absent)"
	}
	return oneLine(m.Observed.Message)
}
