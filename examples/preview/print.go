package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/preview"
)

// printText prints the report for people: a table per object, its staged rollout, its
// warnings and errors, its DNS names, then every member manifest as YAML.
func printText(w io.Writer, rep preview.Report) error {
	for i, o := range rep.Objects {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := printObject(w, o, rep.Live); err != nil {
			return err
		}
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintln(w, "\nOther input:")
		for _, p := range rep.Problems {
			fmt.Fprintln(w, "  "+p.String())
		}
	}
	for _, o := range rep.Objects {
		for _, c := range o.Clusters {
			if c.Manifest == nil {
				continue
			}
			data, err := yaml.Marshal(c.Manifest.Object)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "---\n# %s %s/%s in cluster %s\n%s", o.Kind, o.Namespace, o.Name, c.Name, data)
		}
	}
	return nil
}

func printObject(w io.Writer, o preview.Object, live bool) error {
	fmt.Fprintf(w, "%s %s/%s (revision %d)\n", o.Kind, o.Namespace, o.Name, o.Revision)
	if o.Scheduled.Reason != "" {
		fmt.Fprintf(w, "  Scheduled: %s (%s): %s\n", o.Scheduled.Status, o.Scheduled.Reason, o.Scheduled.Message)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "  CLUSTER\tPLACED\tREPLICAS\t"
	if live {
		header += "CHANGE\t"
	}
	fmt.Fprintln(tw, header+"WHY")
	for _, c := range o.Clusters {
		placed, replicas, why := "no", "-", c.Rule+": "+c.Why
		if c.Selected {
			placed, why = "yes", strings.TrimPrefix(c.Explanation, c.Name+": ")
			replicas = c.ReplicasText()
		}
		if c.Rule == "" && !c.Selected {
			why = ""
		}
		row := fmt.Sprintf("  %s\t%s\t%s\t", c.Name, placed, replicas)
		if live {
			row += change(c.Change) + "\t"
		}
		fmt.Fprintln(tw, row+why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if live {
		for _, c := range o.Clusters {
			if c.Change == nil || (len(c.Change.Diff) == 0 && c.Change.Message == "") {
				continue
			}
			fmt.Fprintf(w, "\n  %s: %s\n", c.Name, change(c.Change))
			if c.Change.Message != "" {
				fmt.Fprintf(w, "    %s\n", c.Change.Message)
			}
			for _, d := range c.Change.Diff {
				fmt.Fprintf(w, "    %s\n", d)
			}
		}
	}
	if o.Rollout != nil {
		if err := printRollout(w, o.Rollout); err != nil {
			return err
		}
	}
	if len(o.Unknown) > 0 {
		fmt.Fprintf(w, "\n  Unknown clusters: %s\n", strings.Join(o.Unknown, ", "))
	}
	for _, d := range o.DNS {
		fmt.Fprintf(w, "\n  DNS (%s %s):\n", d.Kind, d.Name)
		for _, n := range d.Names {
			fmt.Fprintf(w, "    %s\n", n)
		}
		for _, ep := range d.Endpoints {
			fmt.Fprintf(w, "    %s %s %s\n", ep.DNSName, ep.RecordType, strings.Join(ep.Targets, ","))
		}
	}
	if len(o.Problems) > 0 {
		fmt.Fprintln(w)
		for _, p := range o.Problems {
			fmt.Fprintln(w, "  "+p.String())
		}
	}
	return nil
}

// change is a cluster's change in a word: the action, or the reason it cannot be made, "-"
// when the cluster was not read.
func change(c *preview.Change) string {
	switch {
	case c == nil:
		return "-"
	case c.Reason != "":
		return c.Action + " (" + c.Reason + ")"
	}
	return c.Action
}
