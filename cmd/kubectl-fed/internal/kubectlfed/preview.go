package kubectlfed

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

type previewOptions struct {
	file   string
	strict bool
	output string
	down   []string
}

func previewCommand(g *globals) *cobra.Command {
	o := &previewOptions{}
	cmd := &cobra.Command{
		Use:   "preview -f FILE",
		Short: "Show what the loops would do with federated objects, touching no cluster",
		Long: `preview runs package preview on FILE (federated objects, their ReplicaSchedulingPreferences,
the Clusters, DNS records, propagation policies and native objects): for each native object,
the policy chosen and why the others lost; for each object, the clusters it goes to and why
the others were left out, the replicas per cluster, where its dependencies follow it
(spec.propagateDependencies), and every problem with its field path. It reads no
cluster. It exits 1 when the input has errors, and with --strict when it has warnings too.
-f - reads standard input.`,
		Example: "  kubectl fed preview -f app.yaml\n  kubectl fed preview -f app.yaml --strict -o yaml\n  kubectl fed preview -f app.yaml --down eu-1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readInput(cmd.InOrStdin(), o.file)
			if err != nil {
				return err
			}
			in, err := preview.Decode(data)
			if err != nil {
				return err
			}
			in.Now = g.opts.Clock.Now()
			in.Down = o.down
			rep, err := preview.Run(in)
			if err != nil {
				return err
			}
			if err := printPreview(cmd.OutOrStdout(), rep, o.output); err != nil {
				return err
			}
			return previewProblems(rep, o.strict)
		},
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "the file to preview (- for standard input)")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "fail on warnings as well as errors")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: text (default), yaml or json (the whole preview.Report)")
	cmd.Flags().StringSliceVar(&o.down, "down", nil, "preview these clusters as down (not Ready, NoExecute): where the replicas would go")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func readInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// previewProblems is the command's verdict: preview's own Report.Check, wrapped in
// ErrProblems so main exits 1.
func previewProblems(rep preview.Report, strict bool) error {
	if err := rep.Check(strict); err != nil {
		return fmt.Errorf("%w: %w", ErrProblems, err)
	}
	return nil
}

func printPreview(out io.Writer, rep preview.Report, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "yaml":
		b, err := yaml.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	case "", "text":
	default:
		return fmt.Errorf("-o %q: want text, yaml or json", format)
	}
	printNatives(out, rep.Natives)
	for _, o := range rep.Objects {
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + o.Name
		}
		fmt.Fprintf(out, "%s %s (revision %d): scheduled %s %s\n", o.Kind, name, o.Revision, o.Scheduled.Status, oneLine(o.Scheduled.Message))
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  CLUSTER\tSELECTED\tREPLICAS\tWHY")
		for _, c := range o.Clusters {
			reps := c.ReplicasText()
			why := c.Explanation
			if !c.Selected && c.Rule != "" {
				why = c.Rule + ": " + c.Why
			} else if !c.Selected {
				why = c.Why
			}
			if why == "" {
				why = "-"
			}
			fmt.Fprintf(w, "  %s\t%v\t%s\t%s\n", c.Name, c.Selected, reps, oneLine(why))
		}
		w.Flush()
		if f := o.Failover; f != nil {
			printFailover(out, f)
		}
		printDependencies(out, o.Dependencies)
		for _, p := range o.Problems {
			fmt.Fprintf(out, "  %s\n", p)
		}
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(out, p)
	}
	return nil
}

// printFailover prints an object's failover plan: what moves where, and each eviction by its
// state: the clusters that keep their copies until the replacements are ready (Waiting) or
// until they are back (Held), and those whose copies are released (purge mode Never).
func printFailover(out io.Writer, f *preview.Failover) {
	fmt.Fprintf(out, "  failover with %s down:", strings.Join(f.Down, ", "))
	if len(f.Moves) == 0 {
		fmt.Fprint(out, " nothing moves")
	}
	fmt.Fprintln(out)
	for _, m := range f.Moves {
		fmt.Fprintf(out, "    %s: %d -> %d replicas\n", m.Cluster, m.Before, m.After)
	}
	for _, e := range f.Evictions {
		switch e.State() {
		case federation.EvictionWaiting:
			fmt.Fprintf(out, "    %s keeps %d until the replacements are ready (%s)\n", e.Cluster, e.Keep, e.Reason)
		case federation.EvictionHeld:
			fmt.Fprintf(out, "    %s keeps %d until it is back, when the replacements are checked again (%s)\n", e.Cluster, e.Keep, e.Reason)
		case federation.EvictionReleased:
			fmt.Fprintf(out, "    %s: its copy is released, not deleted (purge mode Never; %s)\n", e.Cluster, e.Reason)
		}
	}
}

// printNatives prints what the propagation policies make of each native object: the policy
// chosen and how it selected it, the Federated<Kind> generated, the policies that lost and why.
func printNatives(out io.Writer, natives []preview.Native) {
	for _, n := range natives {
		name := n.Name
		if n.Namespace != "" {
			name = n.Namespace + "/" + n.Name
		}
		fmt.Fprintf(out, "%s %s %s: ", n.APIVersion, n.Kind, name)
		switch {
		case n.Policy == "":
			fmt.Fprint(out, "no policy selects it")
		case n.Selected != "":
			fmt.Fprintf(out, "policy %s (selected %s)", n.Policy, n.Selected)
		default:
			fmt.Fprintf(out, "policy %s", n.Policy)
		}
		switch {
		case n.Generated != "":
			fmt.Fprintf(out, " generates %s", n.Generated)
		case n.Problem != "":
			fmt.Fprintf(out, "; nothing generated: %s", oneLine(n.Problem))
		}
		fmt.Fprintln(out)
		for _, l := range n.Lost {
			fmt.Fprintf(out, "  lost: %s: %s\n", l.Policy, oneLine(l.Why))
		}
	}
}

// printDependencies prints a workload's dependencies: where each follows it, and how.
func printDependencies(out io.Writer, deps []preview.Dependency) {
	if len(deps) == 0 {
		return
	}
	fmt.Fprintln(out, "  dependencies:")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "    DEPENDENCY\tFEDERATED\tCLUSTERS")
	for _, d := range deps {
		name := d.Kind + "/" + d.Name
		if d.Optional {
			name += " (optional)"
		}
		clusters := strings.Join(d.Clusters, ",")
		if clusters == "" {
			clusters = "-"
		}
		fmt.Fprintf(w, "    %s\t%s\t%s\n", name, d.Federated, clusters)
	}
	w.Flush()
}
