package plan

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/labelselector"
)

// FinalStageName names the implicit last stage of a rollout: the placed clusters that no
// stage of spec.rollout selects.
const FinalStageName = "remaining"

// RolloutStage is one stage of a rollout laid over the placed clusters: the clusters that
// start running a new revision when the stage starts, and what must hold before the next
// one does.
type RolloutStage struct {
	// Name is the stage's name (spec.rollout.stages[].name, defaulted), FinalStageName for
	// the implicit last stage.
	Name string
	// Clusters are the placed clusters the stage adds, in name order. A stage may be
	// empty (its clusters are not placed, or earlier stages have them): it then passes at
	// once.
	Clusters []string
	// MinReady is how long every cluster of the stage must report the new revision ready
	// before the next stage starts; Deadline how long the stage may take to get there.
	MinReady, Deadline time.Duration
}

// RolloutStages lays the stages of r over the placed clusters: which clusters start running
// a new revision in which stage. It is pure, and what a preview shows of a rollout.
//
// Every stage of r gives one RolloutStage, in order, and one more comes last, named
// FinalStageName, with every placed cluster no stage selected; it is left out when the
// declared stages take every placed cluster (a last stage of 100% does), so "stage 2 of 2"
// means what the user wrote. A stage
// adds the placed clusters that no earlier stage has and that it names (Clusters), that
// match its selector (ClusterSelector, against the Cluster's labels), or, for a percentage,
// the first ones in name order until ceil(percentage × placed / 100) clusters are in this
// or earlier stages. Names of clusters that are not placed are ignored. An invalid selector
// is an error naming the stage's field (validation rejects it first).
func RolloutStages(r *federation.Rollout, placed []string, clusters []federation.Cluster) ([]RolloutStage, error) {
	names := slices.Clone(placed)
	slices.Sort(names)
	names = slices.Compact(names)
	var stages []federation.RolloutStage
	if r != nil {
		stages = r.Stages
	}
	var labelsOf map[string]map[string]string // only for selectors
	if slices.ContainsFunc(stages, func(s federation.RolloutStage) bool { return s.ClusterSelector != nil }) {
		labelsOf = make(map[string]map[string]string, len(clusters))
		for i := range clusters {
			labelsOf[clusters[i].Name] = clusters[i].Labels
		}
	}
	taken := make(map[string]bool, len(names))
	out := make([]RolloutStage, 0, len(stages)+1)
	for i, st := range stages {
		s := RolloutStage{Name: st.Name, MinReady: seconds(st.MinReadySeconds), Deadline: deadlineOf(st)}
		if s.Name == "" {
			s.Name = fmt.Sprintf("stage-%d", i+1)
		}
		var sel labels.Selector
		if st.ClusterSelector != nil {
			var err error
			path := field.NewPath("spec", "rollout", "stages").Index(i).Child("clusterSelector")
			if sel, err = labelselector.Parse(st.ClusterSelector, path); err != nil {
				return nil, err
			}
		}
		want := 0 // for a percentage: how many clusters are in this or earlier stages afterwards
		if p := st.Percentage; p != nil {
			want = (int(*p)*len(names) + 99) / 100
		}
		for _, n := range names {
			if taken[n] {
				continue
			}
			var add bool
			switch {
			case len(st.Clusters) > 0:
				add = slices.Contains(st.Clusters, n)
			case sel != nil:
				add = sel.Matches(labels.Set(labelsOf[n]))
			case st.Percentage != nil:
				add = len(taken) < want
			}
			if add {
				taken[n] = true
				s.Clusters = append(s.Clusters, n)
			}
		}
		out = append(out, s)
	}
	final := RolloutStage{Name: FinalStageName, Deadline: seconds(federation.DefaultProgressDeadlineSeconds)}
	for _, n := range names {
		if !taken[n] {
			final.Clusters = append(final.Clusters, n)
		}
	}
	if len(final.Clusters) == 0 && len(out) > 0 {
		return out, nil // the declared stages cover every placed cluster
	}
	return append(out, final), nil
}

func deadlineOf(st federation.RolloutStage) time.Duration {
	if st.ProgressDeadlineSeconds != nil {
		return seconds(*st.ProgressDeadlineSeconds)
	}
	return seconds(federation.DefaultProgressDeadlineSeconds)
}

func seconds(n int32) time.Duration { return time.Duration(max(n, 0)) * time.Second }

// stageOf returns, for every cluster of stages, the 1-based number of its stage.
func stageOf(stages []RolloutStage) map[string]int {
	out := map[string]int{}
	for i, s := range stages {
		for _, c := range s.Clusters {
			out[c] = i + 1
		}
	}
	return out
}
