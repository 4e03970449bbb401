package autoscale_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/storytest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of autoscale/testdata/*.txt")

// t0 is when every story starts.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// TestStories runs testdata/*.txt: the fleet's recommendation, stabilization, decisions and
// bound splits, told as stories. Blocks carry their state over. Times are relative to now
// ("-2m": two minutes ago). The commands:
//
//	autoscale YAML        spec.autoscale (flow YAML), defaulted as the loop defaults it
//	options cpu-init=D readiness-delay=D stale-after=D   Input's periods
//	current N             the fleet's total
//	cluster NAME [notready] [read=-D|never] [replicas=N] [failed=KEY:WHY]   a member's sample,
//	                      read now by default; replicas defaults to its pods' count
//	pod NAME [req=cpu:1,memory:1Gi] [use=cpu:300m|none] [ready=True|False|none] [since=-D]
//	    [started=-D|none] [phase=P] [deleting] [sampled=-D] [window=D] [v.KEY=MILLI]
//	                      a pod of the last cluster, one container "app": Running, Ready
//	                      since -10m, started -10m, sampled now over 1m by default
//	container NAME [req=...] [use=...]   another container of the last pod
//	value KEY MILLI       an Object or External value of the last cluster
//	clear                 no clusters
//	load cpu:600m         every pod's container "app" uses that now (sampled now)
//	wait D                time passes; the samples are read again now
//	recommend             Recommend: the total or why it holds, and each metric
//	history [since=-D] [rec=N@-D,...] [up=N@-D,...] [down=N@-D,...]   the memory
//	stabilize min=N max=N current=N desired=N   Stabilize with the autoscale's behavior
//	decide                Decide: the message and conditions; the total and memory follow
//	split min=N max=N clusters=a,b [rsp=YAML]   SplitBounds with the preference's clusters
//
// go test ./autoscale -run TestStories -rewrite refreshes the expected output.
func TestStories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no stories: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			st := &story{now: t0, in: autoscale.Input{StaleAfter: time.Minute}}
			st.setAutoscale("{maxReplicas: 1000}")
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
	now     time.Time
	in      autoscale.Input
	history autoscale.History
}

func (st *story) do(line string, out *strings.Builder) error {
	cmd, rest, _ := strings.Cut(line, " ")
	args := fields(rest)
	switch cmd {
	case "autoscale":
		return st.setAutoscale(rest)
	case "options":
		st.in.CPUInitializationPeriod = dur(args["cpu-init"])
		st.in.InitialReadinessDelay = dur(args["readiness-delay"])
		if s, ok := args["stale-after"]; ok {
			st.in.StaleAfter = dur(s)
		}
	case "current":
		st.in.Current = int32(num(rest))
	case "cluster":
		return st.cluster(strings.Fields(rest)[0], args)
	case "pod":
		return st.pod(strings.Fields(rest)[0], args)
	case "container":
		return st.container(strings.Fields(rest)[0], args)
	case "value":
		f := strings.Fields(rest)
		s := st.last()
		if s.Values == nil {
			s.Values = map[string]autoscale.Value{}
		}
		s.Values[f[0]] = autoscale.Value{Milli: num(f[1]), Timestamp: st.now}
	case "clear":
		st.in.Samples = nil
	case "load":
		st.load(quantities(rest))
	case "wait":
		st.now = st.now.Add(dur(rest))
		for i := range st.in.Samples {
			if !st.in.Samples[i].Read.IsZero() {
				st.in.Samples[i].Read = st.now
			}
		}
	case "recommend":
		st.in.Now = st.now
		printRecommendation(out, autoscale.Recommend(st.in))
	case "history":
		return st.setHistory(args)
	case "stabilize":
		st.stabilize(args, out)
	case "decide":
		st.decide(out)
	case "split":
		return st.split(args, rest, out)
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}

func (st *story) setAutoscale(doc string) error {
	var a federation.Autoscale
	if err := yaml.UnmarshalStrict([]byte(doc), &a); err != nil {
		return err
	}
	federation.DefaultAutoscale(&a)
	st.in.Autoscale = a
	return nil
}

func (st *story) last() *autoscale.Sample { return &st.in.Samples[len(st.in.Samples)-1] }

func (st *story) cluster(name string, args map[string]string) error {
	s := autoscale.Sample{Cluster: name, ClusterReady: !has(args, "notready"), Read: st.now, Replicas: -1}
	switch r := args["read"]; r {
	case "":
	case "never":
		s.Read = time.Time{}
	default:
		s.Read = st.now.Add(dur(r))
	}
	if r, ok := args["replicas"]; ok {
		s.Replicas = int32(num(r))
	}
	if f, ok := args["failed"]; ok {
		k, why, _ := strings.Cut(f, ":")
		s.Failed = map[string]string{k: why}
	}
	st.in.Samples = append(st.in.Samples, s)
	return nil
}

func (st *story) pod(name string, args map[string]string) error {
	s := st.last()
	p := autoscale.Pod{
		Name: name, Phase: corev1.PodRunning, Ready: corev1.ConditionTrue,
		ReadySince: st.now.Add(-10 * time.Minute), Started: st.now.Add(-10 * time.Minute),
		Containers: []autoscale.Container{{Name: "app", Requests: quantities(args["req"])}},
	}
	if r, ok := args["ready"]; ok {
		p.Ready = corev1.ConditionStatus(strings.TrimPrefix(r, "none"))
	}
	if v, ok := args["since"]; ok {
		p.ReadySince = st.now.Add(dur(v))
	}
	switch v := args["started"]; v {
	case "":
	case "none":
		p.Started = time.Time{}
	default:
		p.Started = st.now.Add(dur(v))
	}
	if v, ok := args["phase"]; ok {
		p.Phase = corev1.PodPhase(v)
	}
	p.Deleting = has(args, "deleting")
	if u := args["use"]; u != "none" {
		p.Usage = &autoscale.Usage{Timestamp: st.now, Window: time.Minute, Containers: map[string]map[corev1.ResourceName]int64{"app": quantities(u)}}
		if v, ok := args["sampled"]; ok {
			p.Usage.Timestamp = st.now.Add(dur(v))
		}
		if v, ok := args["window"]; ok {
			p.Usage.Window = dur(v)
		}
	}
	for k, v := range args {
		if key, ok := strings.CutPrefix(k, "v."); ok {
			if p.Values == nil {
				p.Values = map[string]int64{}
			}
			p.Values[key] = num(v)
		}
	}
	s.Pods = append(s.Pods, p)
	if _, ok := args["replicas"]; !ok {
		s.Replicas = int32(countRunning(s.Pods))
	}
	return nil
}

// countRunning is what a workload's status.replicas counts: its pods not being deleted.
func countRunning(pods []autoscale.Pod) int {
	n := 0
	for _, p := range pods {
		if !p.Deleting && p.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

func (st *story) container(name string, args map[string]string) error {
	s := st.last()
	p := &s.Pods[len(s.Pods)-1]
	p.Containers = append(p.Containers, autoscale.Container{Name: name, Requests: quantities(args["req"])})
	if u, ok := args["use"]; ok && p.Usage != nil {
		p.Usage.Containers[name] = quantities(u)
	}
	return nil
}

func (st *story) load(usage map[corev1.ResourceName]int64) {
	for i := range st.in.Samples {
		for j := range st.in.Samples[i].Pods {
			st.in.Samples[i].Pods[j].Usage = &autoscale.Usage{Timestamp: st.now, Window: time.Minute,
				Containers: map[string]map[corev1.ResourceName]int64{"app": usage}}
		}
	}
}

func (st *story) setHistory(args map[string]string) error {
	h := autoscale.History{}
	if v, ok := args["since"]; ok {
		h.Since = st.now.Add(dur(v))
	}
	for _, r := range list(args["rec"]) {
		n, at := event(r, st.now)
		h.Recommendations = append(h.Recommendations, autoscale.Recommended{Replicas: n, At: at})
	}
	for _, r := range list(args["up"]) {
		n, at := event(r, st.now)
		h.ScaleUps = append(h.ScaleUps, autoscale.ScaleEvent{Change: n, At: at})
	}
	for _, r := range list(args["down"]) {
		n, at := event(r, st.now)
		h.ScaleDowns = append(h.ScaleDowns, autoscale.ScaleEvent{Change: n, At: at})
	}
	st.history = h
	return nil
}

func (st *story) stabilize(args map[string]string, out *strings.Builder) {
	s := autoscale.Stabilize(autoscale.StabilizeInput{
		Behavior: *st.in.Autoscale.Behavior, Min: int32(num(args["min"])), Max: int32(num(args["max"])),
		Current: int32(num(args["current"])), Recommended: int32(num(args["desired"])),
		History: st.history, Now: st.now,
	})
	fmt.Fprintf(out, "%d (stabilized %d, %s, %s)\n", s.Replicas, s.Stabilized, s.AbleReason, s.LimitReason)
	st.history = s.History
}

func (st *story) decide(out *strings.Builder) {
	st.in.Now = st.now
	d := autoscale.Decide(autoscale.DecideInput{Input: st.in, History: st.history})
	fmt.Fprintf(out, "%s: %s\n", st.now.Sub(t0), d.Message)
	for _, c := range d.Conditions {
		fmt.Fprintf(out, "  %s=%s %s\n", c.Type, c.Status, c.Reason)
	}
	st.in.Current, st.history = d.Desired, d.History
}

func (st *story) split(args map[string]string, rest string, out *strings.Builder) error {
	var prefs map[string]federation.ClusterPreferences
	if _, doc, ok := strings.Cut(rest, "rsp="); ok {
		rsp := &federation.ReplicaSchedulingPreference{}
		if err := yaml.UnmarshalStrict([]byte(doc), &rsp.Spec); err != nil {
			return err
		}
		federation.DefaultReplicaSchedulingPreference(rsp)
		prefs = rsp.Spec.Clusters
	}
	s, err := autoscale.SplitBounds(autoscale.SplitInput{
		Key: "shop/web", Min: int32(num(args["min"])), Max: int32(num(args["max"])),
		Clusters: list(args["clusters"]), Preferences: prefs,
	})
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return nil
	}
	for _, b := range s.Clusters {
		fmt.Fprintf(out, "%s: %d..%d\n", b.Cluster, b.Min, b.Max)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	return nil
}

func printRecommendation(out *strings.Builder, r autoscale.Recommendation) {
	if r.Active {
		fmt.Fprintf(out, "%d: %s\n", r.Replicas, r.Message)
	} else {
		fmt.Fprintf(out, "holds (%s): %s\n", r.Reason, r.Message)
	}
	if len(r.Metrics) < 2 && r.Active {
		return
	}
	for _, m := range r.Metrics {
		if m.Err != "" {
			fmt.Fprintf(out, "  %s: %s\n", m.Name, m.Err)
			continue
		}
		fmt.Fprintf(out, "  %s: %d (%s)\n", m.Name, m.Replicas, m.Summary)
	}
}

// fields parses "k=v" words (a word without "=" is a flag, "k" -> "").
func fields(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		out[k] = v
	}
	return out
}

func has(args map[string]string, k string) bool { _, ok := args[k]; return ok }

func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// event parses "N@-D".
func event(s string, now time.Time) (int32, time.Time) {
	n, at, _ := strings.Cut(s, "@")
	return int32(num(n)), now.Add(dur(at))
}

// quantities parses "cpu:1,memory:1Gi" into milli-values.
func quantities(s string) map[corev1.ResourceName]int64 {
	if s == "" {
		return nil
	}
	out := map[corev1.ResourceName]int64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, ":")
		q := resource.MustParse(v)
		out[corev1.ResourceName(k)] = q.MilliValue()
	}
	return out
}

func num(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("not a number: %q", s))
	}
	return n
}

func dur(s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("not a duration: %q", s))
	}
	return d
}
