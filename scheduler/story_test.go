package scheduler_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/storytest"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/scheduler"
)

// TestStories runs the stories in testdata/stories: the scheduler's decisions over time, one
// Decide after another, each given the schedule the one before wrote, while clusters go and
// come back and the members run what was scheduled. A story is blocks separated by blank
// lines; a block is commands, then "----" and what its decide commands printed. The state
// carries over from block to block. Lines starting with # before a block are comments.
//
//	clusters a b c            Ready clusters (with room for anything)
//	object replicas=N         a new FederatedDeployment default/web, placed by clusterSelector {}
//	placement YAML            its spec.placement (flow YAML, the rest of the line)
//	rsp YAML                  its ReplicaSchedulingPreference's spec ("none": no preference)
//	disruption threshold=F window=D   scheduler.Input.Disruption
//	down a b [taint=NoSchedule|NoExecute|none]   Ready turns False now; the cluster monitor's
//	                          not-ready and unreachable taints at that effect (none: not set)
//	up a b                    Ready turns True now (Failover Recovered); the monitor's taints go
//	taint a key:Effect        a user taint, timeAdded now; untaint a key removes it
//	block a Reason            sync cannot write in a: every run gives its entry the
//	                          propagation Reason and no copy there; unblock a ends it
//	wait D                    time passes
//	run [a=N ...]             sync and the members caught up with the last schedule: each
//	                          scheduled, Ready, unblocked cluster runs its count with all
//	                          available (or N available), observed now; a cluster not Ready
//	                          keeps what it ran, stale, ClusterNotReady; a Ready cluster no
//	                          longer scheduled runs nothing
//	decide [v]                Decide at now: the schedule, the evictions (each with its
//	                          state, federation.EvictionState, and deadline), the Scheduled
//	                          condition (and with v its message)
//
// go test ./scheduler -run TestStories -rewrite refreshes the expected output.
func TestStories(t *testing.T) {
	for _, file := range storytest.Files(t, "testdata/stories/*.txt") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			st := newStory()
			storytest.Run(t, file, *rewrite, func(b storytest.Block) string {
				var out strings.Builder
				for _, line := range b.Lines {
					if err := st.do(line, &out); err != nil {
						t.Fatalf("%s: %q: %v", file, line, err)
					}
				}
				return strings.TrimRight(out.String(), "\n")
			})
		})
	}
}

// story is the world a story's commands change.
type story struct {
	t0, now    time.Time
	clusters   []federation.Cluster
	fed        *federation.FederatedObject
	rsp        *federation.ReplicaSchedulingPreference
	prev       *federation.Schedule
	disruption placement.DisruptionOptions
	blocked    map[string]string
}

func newStory() *story {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	return &story{t0: t0, now: t0, blocked: map[string]string{}}
}

func (s *story) do(line string, out *strings.Builder) error {
	fields := strings.Fields(line)
	args := map[string]string{}
	var names []string
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		} else {
			names = append(names, f)
		}
	}
	rest := strings.TrimSpace(strings.TrimPrefix(line, fields[0]))
	switch fields[0] {
	case "clusters":
		for _, n := range names {
			c := federation.Cluster{}
			c.Name = n
			c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.NewTime(s.now.Add(-time.Hour))}}
			s.clusters = append(s.clusters, c)
		}
	case "object":
		n, err := strconv.ParseInt(args["replicas"], 10, 64)
		if err != nil {
			return err
		}
		s.fed = &federation.FederatedObject{}
		s.fed.Name, s.fed.Namespace, s.fed.Generation = "web", "default", 1
		s.fed.Spec.Template.Object = map[string]any{"spec": map[string]any{"replicas": n}}
		s.fed.Spec.Placement.ClusterSelector = &metav1.LabelSelector{}
		s.prev = nil // a new object
	case "placement":
		var p federation.Placement
		if err := yaml.UnmarshalStrict([]byte(rest), &p); err != nil {
			return err
		}
		s.fed.Spec.Placement = p
	case "rsp":
		if rest == "none" {
			s.rsp = nil
			return nil
		}
		s.rsp = &federation.ReplicaSchedulingPreference{}
		return yaml.UnmarshalStrict([]byte("{metadata: {name: web, namespace: default}, spec: "+rest+"}"), s.rsp)
	case "disruption":
		if v, ok := args["threshold"]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			s.disruption.Threshold = f
		}
		if v, ok := args["window"]; ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			s.disruption.Window = d
		}
	case "down", "up":
		return s.readiness(names, fields[0] == "up", args["taint"])
	case "taint", "untaint":
		if len(names) != 2 {
			return fmt.Errorf("want a cluster and a taint")
		}
		c := s.cluster(names[0])
		if c == nil {
			return fmt.Errorf("no cluster %q", names[0])
		}
		key, effect, _ := strings.Cut(names[1], ":")
		c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
		if fields[0] == "taint" {
			at := metav1.NewTime(s.now)
			c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffect(effect), TimeAdded: &at})
		}
	case "block":
		s.blocked[names[0]] = names[1]
	case "unblock":
		delete(s.blocked, names[0])
	case "wait":
		d, err := time.ParseDuration(names[0])
		if err != nil {
			return err
		}
		s.now = s.now.Add(d)
	case "run":
		return s.run(args)
	case "decide":
		return s.decide(out, slices.Contains(names, "v"))
	default:
		return fmt.Errorf("unknown command")
	}
	return nil
}

func (s *story) cluster(name string) *federation.Cluster {
	for i := range s.clusters {
		if s.clusters[i].Name == name {
			return &s.clusters[i]
		}
	}
	return nil
}

// readiness turns the clusters Ready (up) or not (down, with the monitor's taints at effect).
func (s *story) readiness(names []string, up bool, effect string) error {
	if effect == "" {
		effect = string(corev1.TaintEffectNoSchedule)
	}
	for _, n := range names {
		c := s.cluster(n)
		if c == nil {
			return fmt.Errorf("no cluster %q", n)
		}
		c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == federation.TaintClusterNotReady || t.Key == federation.TaintClusterUnreachable
		})
		cond := metav1.Condition{Type: federation.ConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.NewTime(s.now)}
		// The cluster monitor's Failover condition: Recovered once back.
		stage := metav1.Condition{Type: federation.ConditionFailover, Status: metav1.ConditionFalse, Reason: "Recovered", LastTransitionTime: metav1.NewTime(s.now)}
		if !up {
			stage.Status, stage.Reason = metav1.ConditionTrue, "NoSchedule"
			cond.Status, cond.Reason = metav1.ConditionFalse, "ClusterUnreachable"
			if effect != "none" {
				at := metav1.NewTime(s.now)
				for _, k := range []string{federation.TaintClusterNotReady, federation.TaintClusterUnreachable} {
					c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: k, Effect: corev1.TaintEffect(effect), TimeAdded: &at})
				}
			}
		}
		c.Status.Conditions = []metav1.Condition{cond, stage}
	}
	return nil
}

// run makes the status what sync and the collector would write once the members run the last
// schedule (see TestStories).
func (s *story) run(args map[string]string) error {
	if s.prev == nil {
		return fmt.Errorf("run before any decide")
	}
	at := metav1.NewTime(s.now)
	entries := map[string]federation.MemberStatus{}
	for _, m := range s.fed.Status.Clusters {
		entries[m.Name] = m
	}
	scheduled := map[string]int64{}
	for _, c := range s.prev.Clusters {
		scheduled[c.Name] = c.Replicas
	}
	for _, c := range s.clusters {
		m, had := entries[c.Name]
		n, placed := scheduled[c.Name]
		ready := meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady)
		switch {
		case !ready && (had || placed):
			if !had {
				m = federation.MemberStatus{Name: c.Name} // never written there: no copy
			}
			m.Stale, m.Propagation = true, federation.PropagationClusterNotReady
			entries[c.Name] = m
		case !placed:
			delete(entries, c.Name)
		case s.blocked[c.Name] != "":
			m.Propagation, m.Message, m.LastObserved = s.blocked[c.Name], "sync cannot write there", &at
			m.Name, m.Stale = c.Name, false
			entries[c.Name] = m // what ran there before, if anything, still does
		default:
			avail := n
			if v, ok := args[c.Name]; ok {
				a, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return err
				}
				avail = a
			}
			r := n
			entries[c.Name] = federation.MemberStatus{Name: c.Name, Revision: 1, ObservedRevision: 1, Replicas: &r, AvailableReplicas: &avail, LastObserved: &at}
		}
	}
	s.fed.Status.Clusters = nil
	for _, n := range slices.Sorted(mapKeysOf(entries)) {
		s.fed.Status.Clusters = append(s.fed.Status.Clusters, entries[n])
	}
	return nil
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// decide runs Decide and prints what it wrote; its schedule is the next decision's Previous.
func (s *story) decide(out *strings.Builder, verbose bool) error {
	d, err := scheduler.Decide(scheduler.Input{
		Type: federation.DeploymentType, Object: s.fed, Preference: s.rsp, Clusters: s.clusters,
		Previous: s.prev, Now: s.now, Disruption: s.disruption,
	})
	if d.Schedule == nil {
		return fmt.Errorf("no schedule: %v", err)
	}
	s.prev = d.Schedule
	var parts []string
	for _, c := range d.Schedule.Clusters {
		parts = append(parts, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
	}
	fmt.Fprintf(out, "%s schedule: %s\n", s.now.Sub(s.t0), strings.Join(parts, " "))
	for _, e := range d.Schedule.Evictions {
		state := e.State().String()
		if e.Deadline != nil {
			state += " until +" + e.Deadline.Sub(s.t0).String()
		}
		fmt.Fprintf(out, "  evicting %s (%s): keeps %d, to %d, %s\n", e.Cluster, e.Reason, e.Keep, e.Replicas, state)
	}
	fmt.Fprintf(out, "  Scheduled=%s %s\n", d.Condition.Status, d.Condition.Reason)
	if verbose {
		fmt.Fprintf(out, "  %s\n", d.Message)
	}
	return nil
}
