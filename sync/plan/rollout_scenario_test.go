package plan_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/storytest"
	"github.com/fedkit/fedkit/sync/plan"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of sync/plan/testdata/*/*.txt from Decide's, DecideRollout's and Report's decisions")

// TestRolloutScenarios replays each story under testdata/rollout: a staged rollout told as
// commands that change the object's revision, the clusters, the status the Collector
// reports and the clock, with DecideRollout's decisions written after each "decide". The
// story applies every decision as the Syncer would (status.rollout, and each cluster's
// status.clusters[].revision from Assign), so the next decision starts from it.
//
// A file is blocks of package internal/storytest's format, one command each, its input (the
// rollout command's YAML) on the lines after it. Commands:
//
//	clusters a b c [label=k:v]  Clusters, Ready, with a label
//	cluster a ready=false       a Cluster's Ready condition
//	rollout                     spec.rollout from the YAML input (no input: none)
//	revision image=v2 [place=a,b] [replicas=3]
//	                            a new spec (the next revision number; a snapshot that is
//	                            already in the history comes back under the next number,
//	                            as the Syncer renumbers its ControllerRevision)
//	rollback                    the Syncer restores the stable revision's template (autoRollback)
//	observe a b [ready=false] [stale=true] [observed=N]
//	                            the Collector: what the clusters run (observed, default
//	                            the revision sync rendered there) and whether it is ready
//	propagation a Reason        sync cannot bring a to its revision ("" clears)
//	pause true|false            federation.RolloutPausedAnnotation
//	tick 30s                    the clock moves
//	decide                      DecideRollout; prints the decision and applies it
//
// go test ./sync/plan -run TestRolloutScenarios -rewrite rewrites the expected outputs.
func TestRolloutScenarios(t *testing.T) {
	for _, file := range storytest.Files(t, filepath.Join("testdata", "rollout", "*.txt")) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			s := newStory()
			storytest.Run(t, file, *rewrite, func(b storytest.Block) string {
				got, err := s.run(b)
				if err != nil {
					return "error: " + err.Error()
				}
				return got
			})
		})
	}
}

// story is the world a rollout story changes: the object, its history, the clusters, the
// clock.
type story struct {
	obj      *federation.FederatedObject
	history  []plan.Revision
	revision int64
	clusters []federation.Cluster
	now      time.Time
	start    time.Time
	image    string
	replicas int64
	place    []string
}

func newStory() *story {
	obj := &federation.FederatedObject{}
	obj.APIVersion, obj.Kind = federation.DeploymentType.FederatedGVR().GroupVersion().String(), federation.DeploymentType.Federated.Kind
	obj.Name, obj.Namespace = key.Name, key.Namespace
	return &story{obj: obj, now: now, start: now, replicas: 3}
}

func (s *story) run(b storytest.Block) (string, error) {
	fields := strings.Fields(b.Command())
	args, opts := []string{}, map[string]string{}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			opts[k] = v
		} else {
			args = append(args, f)
		}
	}
	switch fields[0] {
	case "clusters":
		labels := map[string]string{}
		if l, ok := opts["label"]; ok {
			k, v, _ := strings.Cut(l, ":")
			labels[k] = v
		}
		for _, n := range args {
			c := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}
			c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
			s.clusters = append(s.clusters, c)
		}
		return "", nil
	case "cluster":
		c := s.cluster(args)
		if c == nil {
			return "", fmt.Errorf("cluster %v: no such cluster", args)
		}
		st := metav1.ConditionTrue
		if opts["ready"] == "false" {
			st = metav1.ConditionFalse
		}
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: st}}
		return "", nil
	case "rollout":
		s.obj.Spec.Rollout = nil
		if b.Input() != "" {
			r := &federation.Rollout{}
			if err := yaml.UnmarshalStrict([]byte(b.Input()), r); err != nil {
				return "", err
			}
			s.obj.Spec.Rollout = r
		}
		return "", nil
	case "revision":
		if v, ok := opts["image"]; ok {
			s.image = v
		}
		if v, ok := opts["place"]; ok {
			s.place = strings.Split(v, ",")
		}
		if v, ok := opts["replicas"]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "", err
			}
			s.replicas = n
		}
		return s.newRevision(s.spec())
	case "rollback":
		st := s.obj.Status.Rollout
		if st == nil {
			return "", fmt.Errorf("rollback: no status.rollout")
		}
		for _, h := range s.history {
			if h.Name == st.StableRevisionName {
				spec := s.spec()
				spec.Template = *h.Spec.Template.DeepCopy()
				_ = setNested(spec.Template.Object, s.replicas, "spec", "replicas")
				s.image = imageOf(h.Spec)
				return s.newRevision(spec)
			}
		}
		return "", fmt.Errorf("rollback: the stable revision %q is not in the history", st.StableRevisionName)
	case "observe":
		ready := opts["ready"] != "false"
		for _, n := range args {
			e := s.entry(n)
			e.ObservedRevision = e.Revision
			if v, ok := opts["observed"]; ok {
				o, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return "", err
				}
				e.ObservedRevision = o
			}
			r := ready
			e.Ready = &r
			lo := metav1.NewTime(s.now)
			e.LastObserved = &lo
			e.Stale = opts["stale"] == "true"
		}
		return "", nil
	case "propagation":
		if len(args) < 1 {
			return "", fmt.Errorf("propagation: want a cluster and a reason")
		}
		reason := ""
		if len(args) > 1 {
			reason = args[1]
		}
		s.entry(args[0]).Propagation = reason
		return "", nil
	case "pause":
		if s.obj.Annotations == nil {
			s.obj.Annotations = map[string]string{}
		}
		s.obj.Annotations[federation.RolloutPausedAnnotation] = args[0]
		return "", nil
	case "tick":
		d, err := time.ParseDuration(args[0])
		if err != nil {
			return "", err
		}
		s.now = s.now.Add(d)
		return fmt.Sprintf("now %s", s.rel(s.now)), nil
	case "decide":
		return s.decide()
	}
	return "", fmt.Errorf("unknown command %q", fields[0])
}

func (s *story) cluster(args []string) *federation.Cluster {
	for i := range s.clusters {
		if len(args) > 0 && s.clusters[i].Name == args[0] {
			return &s.clusters[i]
		}
	}
	return nil
}

// entry returns the status.clusters[] entry of cluster n, adding it when absent.
func (s *story) entry(n string) *federation.MemberStatus {
	for i := range s.obj.Status.Clusters {
		if s.obj.Status.Clusters[i].Name == n {
			return &s.obj.Status.Clusters[i]
		}
	}
	s.obj.Status.Clusters = append(s.obj.Status.Clusters, federation.MemberStatus{Name: n})
	return &s.obj.Status.Clusters[len(s.obj.Status.Clusters)-1]
}

// spec is the object's spec from the story's image, replicas and placement.
func (s *story) spec() federation.FederatedSpec {
	spec := federation.FederatedSpec{Template: federation.RawObject{Object: map[string]any{"spec": map[string]any{
		"replicas": s.replicas,
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": s.image}}}}}}}}
	for _, n := range s.place {
		spec.Placement.Clusters = append(spec.Placement.Clusters, federation.ClusterReference{Name: n})
	}
	spec.Rollout = s.obj.Spec.Rollout
	return spec
}

func imageOf(spec federation.FederatedSpec) string {
	b, _ := json.Marshal(spec.Template.Object)
	var t struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Image string } `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(b, &t)
	if len(t.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return t.Spec.Template.Spec.Containers[0].Image
}

func setNested(obj map[string]any, v int64, path ...string) error {
	m := obj
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return fmt.Errorf("no %s", p)
		}
		m = next
	}
	m[path[len(path)-1]] = v
	return nil
}

// newRevision makes spec the object's spec under the next revision number. Its snapshot is
// named as the Syncer names its ControllerRevisions: one already in the history is
// renumbered, not added.
func (s *story) newRevision(spec federation.FederatedSpec) (string, error) {
	s.revision++
	s.obj.Spec = spec
	s.obj.Generation++
	federation.DefaultFederatedObject(s.obj)
	data, err := plan.SnapshotOf(s.obj)
	if err != nil {
		return "", err
	}
	name := plan.RevisionName(s.obj.GroupVersionKind().GroupKind(), s.obj.Name, data)
	rev := plan.Revision{Number: s.revision, Name: name, Spec: *s.obj.Spec.DeepCopy()}
	for i, h := range s.history {
		if h.Name == name {
			s.history[i].Number = s.revision
			return fmt.Sprintf("revision %d (%s, the snapshot of revision %d renumbered)", s.revision, s.image, h.Number), nil
		}
	}
	s.history = append(s.history, rev)
	return fmt.Sprintf("revision %d (%s)", s.revision, s.image), nil
}

// placed are the placement's clusters that exist, ready or not.
func (s *story) placed() []string {
	var out []string
	for _, c := range s.clusters {
		if len(s.place) == 0 || slices.Contains(s.place, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

func (s *story) rel(t time.Time) string { return "t+" + t.Sub(s.start).String() }

func (s *story) relp(t *metav1.Time) string {
	if t == nil {
		return "-"
	}
	return s.rel(t.Time)
}

// decide runs DecideRollout, prints the decision and applies it as the Syncer does.
func (s *story) decide() (string, error) {
	placed := s.placed()
	d, err := plan.DecideRollout(plan.RolloutInput{
		Object: s.obj.DeepCopy(), Revision: s.revision, History: s.history, Placed: placed,
		Clusters: s.clusters, Now: s.now, Type: federation.DeploymentType,
	})
	if err != nil {
		return "", err
	}
	var out strings.Builder
	if st := d.Status; st != nil {
		fmt.Fprintf(&out, "phase %s reason %s stage %d/%d (%s) revision %d stable %d\n", st.Phase, st.Reason, st.Stage, st.Stages, st.StageName, st.Revision, st.StableRevision)
		fmt.Fprintf(&out, "clocks start %s readySince %s notReadySince %s deadlinePausedSince %s\n",
			s.relp(st.StageStartTime), s.relp(st.ReadySince), s.relp(st.NotReadySince), s.relp(st.DeadlinePausedSince))
		if st.Message != "" {
			fmt.Fprintf(&out, "message %s\n", st.Message)
		}
		if st.FailedRevision != 0 {
			fmt.Fprintf(&out, "failedRevision %d\n", st.FailedRevision)
		}
	} else {
		out.WriteString("no rollout status\n")
	}
	var assign []string
	for _, c := range placed {
		assign = append(assign, fmt.Sprintf("%s=%d", c, d.Assign[c]))
	}
	fmt.Fprintf(&out, "assign %s\n", strings.Join(assign, " "))
	var flags []string
	if d.Continues {
		flags = append(flags, "continues")
	}
	if d.Failed {
		flags = append(flags, fmt.Sprintf("failed %v", d.FailedClusters))
	}
	if d.Rollback {
		flags = append(flags, "rollback")
	}
	if d.Stable != nil {
		flags = append(flags, fmt.Sprintf("holding back on %d", d.Stable.Number))
	}
	if d.RequeueAfter > 0 {
		flags = append(flags, fmt.Sprintf("requeue %s", d.RequeueAfter))
	}
	if len(flags) > 0 {
		fmt.Fprintf(&out, "%s\n", strings.Join(flags, ", "))
	}

	// The Syncer carries it out: status.rollout, and each placed cluster rendered at its
	// assigned revision. A cluster whose propagation is set keeps what it had.
	s.obj.Status.Rollout = d.Status
	for _, c := range placed {
		if e := s.entry(c); e.Propagation == "" {
			e.Revision = d.Assign[c]
		}
	}
	if d.Status != nil && d.Status.Phase == federation.RolloutComplete {
		s.obj.Status.SyncedRevision = s.revision
	}
	return out.String(), nil
}
