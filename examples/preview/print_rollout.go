package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

// printRollout prints an object's staged rollout: what happens to its revision, then a
// table of the stages in the order sync goes through them, each with the clusters it moves
// to the new revision and its gate, then where the rollout stood when sync last wrote
// status.rollout.
func printRollout(w io.Writer, ro *preview.Rollout) error {
	fmt.Fprintf(w, "\n  Rollout: %s\n", ro.Note)
	flags := "autoRollback: off (a failed rollout stops where it is)"
	if ro.AutoRollback {
		flags = "autoRollback: on (a failed rollout restores the stable revision)"
	}
	if ro.Paused {
		flags += "; paused (" + federation.RolloutPausedAnnotation + ")"
	}
	fmt.Fprintf(w, "  %s\n\n", flags)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STAGE\tCLUSTERS\tMIN READY\tDEADLINE")
	for i, s := range ro.Stages {
		name := s.Name
		if s.Implicit {
			name += " (implicit)"
		}
		fmt.Fprintf(tw, "  %d %s\t%s\t%s\t%s\n", i+1, name, stageClusters(s),
			seconds(s.MinReadySeconds), seconds(s.ProgressDeadlineSeconds))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st := ro.Status; st != nil {
		fmt.Fprintf(w, "\n  status.rollout: revision %d %s (%s): %s\n", st.Revision, st.Phase, st.Reason, st.Message)
	}
	return nil
}

// stageClusters names a stage's clusters: those the revision changes as they are, the
// others with what holds for them; "-" for none.
func stageClusters(s preview.RolloutStage) string {
	names := append([]string(nil), s.Clusters...)
	for _, c := range s.Unchanged {
		names = append(names, c+" (unchanged)")
	}
	for _, c := range s.Blocked {
		names = append(names, c+" (blocked)")
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

func seconds(n int32) string { return (time.Duration(n) * time.Second).String() }
