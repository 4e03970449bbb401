package plan_test

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/storytest"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestStories replays the stories under testdata/stories: sync's decision rules told as a
// fleet that changes, with plan.Decide's decision and plan.Report's result printed where the
// story asks. The story's "report" also carries the result out as the Syncer would (the
// status written, the member objects written, what the Syncer remembers), so the next
// decision starts from it: a story is the Syncer's passes without the I/O.
//
// A file is blocks of package internal/storytest's format. A block's lines are commands; the
// lines indented under a command are its YAML input. Commands:
//
//	type Deployment|ConfigMap|Namespace|PersistentVolumeClaim   the federated type
//	clusters a b c [label=k:v]  Clusters, Ready
//	cluster a [ready=false] [leaving] [label=k:v]
//	                            a Cluster's Ready condition, its deletion, a label
//	options [adopt=true] [identity=x] [waitForScheduler=true] [removal=Delete] [timeout=10m]
//	                            the Syncer's options as plan.Input has them
//	object [new]                the federated object from the YAML input (defaulted, uid
//	                            fed-1, made an hour before the story starts; again: its new
//	                            spec, the next generation, but with new: another object,
//	                            made now)
//	annotate k=v | annotate k-  the federated object's annotations
//	delete                      the federated object is deleted (deletionTimestamp now)
//	schedule a=N b=M [notReady=c] [release=d] [evicted=e]
//	                            the scheduler's status.schedule, Scheduled for the current
//	                            generation; "schedule refused Reason": Scheduled False, no
//	                            schedule; "schedule old": the last one observed the
//	                            generation before
//	propagated                  the Propagated condition is True (sync propagated before)
//	member a [rv=N]             cluster a's member object from the YAML input (rv: its
//	                            resourceVersion, default the next); "member a none": read,
//	                            absent; "member a err=E": the read failed (errors below);
//	                            "member a written": what the last decision wrote there
//	unread a b                  the member objects in a and b were not read
//	edit a k=v k-               a member object's field changes (a JSON pointer, a YAML value)
//	                            or goes
//	namespace a host|inuse=obj|err=E
//	                            what the driver found of the member Namespace in a
//	remember a [rv=N] [dropped=/p,/q]
//	                            what the Syncer remembers of a's member object: verified at
//	                            rv (default its current one) for a's key of the last decision
//	forget a                    the Syncer remembers nothing of a's member object (a restart)
//	version a                   only a's member object's version was read
//	history                     the object's current spec is recorded in its revision history
//	observe a b [ready=false]   the Collector's fresh data: the clusters run what sync
//	                            rendered there, ready or not
//	tick 5m                     the clock moves
//	decide [v] [read]           plan.Decide (read: without the member objects); prints the
//	                            decision (v: with the messages)
//	report [v] [a=fail:E] [a=warn:text] [a=remaining] [a=recheck:E] [a=governed:placed|other]
//	       [holds=a,b]          plan.Report of the last decision's changes carried out (each
//	                            one written but as its argument says; holds: clusters of
//	                            Decision.NotReady the driver could not show hold no copy);
//	                            prints the result, then carries it out
//
// Errors (E): Conflict, Forbidden, Invalid, NotFound, ServerError, Unreachable,
// TypeNotServed, ClusterNotFound, ClusterNotReady, Terminating.
//
// go test ./sync/plan -run TestStories -rewrite rewrites the expected outputs.
func TestStories(t *testing.T) {
	for _, file := range storytest.Files(t, filepath.Join("testdata", "stories", "*.txt")) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			w := newWorld()
			storytest.Run(t, file, *rewrite, func(b storytest.Block) string {
				var out strings.Builder
				for _, c := range commands(b.Lines) {
					if err := w.do(c, &out); err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
					}
				}
				return out.String()
			})
		})
	}
}

// command is one command of a block with its (dedented) input.
type command struct {
	name  string
	args  []string
	opts  map[string]string
	input string
}

func (c command) arg(i int) string {
	if i < len(c.args) {
		return c.args[i]
	}
	return ""
}

// commands splits a block's lines into commands: an indented line is input to the command
// before it.
func commands(lines []string) []command {
	var out []command
	for _, l := range lines {
		if strings.HasPrefix(l, " ") && len(out) > 0 {
			c := &out[len(out)-1]
			c.input += strings.TrimPrefix(l, "  ") + "\n"
			continue
		}
		f := strings.Fields(l)
		c := command{name: f[0], opts: map[string]string{}}
		for _, a := range f[1:] {
			if k, v, ok := strings.Cut(a, "="); ok {
				c.opts[k] = v
			} else {
				c.args = append(c.args, a)
			}
		}
		out = append(out, c)
	}
	return out
}

// world is what a story changes: the fleet, the federated object, what was read of the
// members, what the Syncer remembers, the clock, and the last decision.
type world struct {
	typ       federation.TypeConfig
	clusters  []federation.Cluster
	obj       *federation.FederatedObject
	members   map[string]plan.MemberState
	memory    memory
	rv        int
	in        plan.Input
	d         plan.Decision
	t0, now   time.Time
	history   []plan.Revision
	adopt     bool
	identity  string
	waitSched bool
	removal   bool
	timeout   time.Duration
}

// memory is what the Syncer remembers of the member objects (plan.Input.Memory).
type memory map[string]plan.Verified

func (m memory) Verified(cluster string) plan.Verified { return m[cluster] }

func newWorld() *world {
	return &world{typ: federation.DeploymentType, members: map[string]plan.MemberState{}, memory: memory{},
		t0: now, now: now, timeout: 10 * time.Minute}
}

func (w *world) do(c command, out *strings.Builder) error {
	if step, ok := worldCommands[c.name]; ok {
		return step(w, c)
	}
	switch c.name {
	case "decide":
		return w.decide(c, out)
	case "report":
		return w.report(c, out)
	}
	return fmt.Errorf("unknown command %q", c.name)
}

// worldCommands are the commands that change the world and print nothing.
var worldCommands = map[string]func(*world, command) error{
	"type":       (*world).setType,
	"clusters":   (*world).addClusters,
	"cluster":    (*world).setCluster,
	"options":    (*world).setOptions,
	"object":     (*world).setObject,
	"annotate":   (*world).annotate,
	"delete":     (*world).deleteObject,
	"schedule":   (*world).schedule,
	"propagated": (*world).propagated,
	"member":     (*world).setMember,
	"unread": func(w *world, c command) error {
		for _, n := range c.args {
			delete(w.members, n)
		}
		return nil
	},
	"edit":      (*world).edit,
	"namespace": (*world).namespace,
	"remember":  (*world).remember,
	"forget":    func(w *world, c command) error { delete(w.memory, c.arg(0)); return nil },
	"version":   (*world).version,
	"tick":      (*world).tick,
	"history":   (*world).record,
	"observe":   (*world).observe,
}

func (w *world) setType(c command) error {
	for _, t := range []federation.TypeConfig{federation.DeploymentType, federation.ConfigMapType, federation.NamespaceType, federation.PersistentVolumeClaimType} {
		if t.Target.Kind == c.arg(0) {
			w.typ = t
			return nil
		}
	}
	return fmt.Errorf("no type %q", c.arg(0))
}

func (w *world) addClusters(c command) error {
	for _, n := range c.args {
		cl := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n, UID: k8stypes.UID("uid-" + n)}}
		if l, ok := c.opts["label"]; ok {
			k, v, _ := strings.Cut(l, ":")
			cl.Labels = map[string]string{k: v}
		}
		cl.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(w.t0.Add(-time.Hour))}}
		w.clusters = append(w.clusters, cl)
	}
	return nil
}

func (w *world) cluster(n string) (*federation.Cluster, error) {
	for i := range w.clusters {
		if w.clusters[i].Name == n {
			return &w.clusters[i], nil
		}
	}
	return nil, fmt.Errorf("no cluster %q", n)
}

func (w *world) setCluster(c command) error {
	cl, err := w.cluster(c.arg(0))
	if err != nil {
		return err
	}
	if r, ok := c.opts["ready"]; ok {
		st := metav1.ConditionTrue
		if r == "false" {
			st = metav1.ConditionFalse
		}
		cl.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: st, LastTransitionTime: metav1.NewTime(w.now)}}
	}
	if slices.Contains(c.args, "leaving") {
		cl.DeletionTimestamp = &metav1.Time{Time: w.now}
	}
	if l, ok := c.opts["label"]; ok {
		k, v, _ := strings.Cut(l, ":")
		cl.Labels = map[string]string{k: v}
	}
	return nil
}

func (w *world) setOptions(c command) error {
	for k, v := range c.opts {
		switch k {
		case "adopt":
			w.adopt = v == "true"
		case "identity":
			w.identity = v
		case "waitForScheduler":
			w.waitSched = v == "true"
		case "removal":
			w.removal = v == "Delete"
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			w.timeout = d
		default:
			return fmt.Errorf("no option %q", k)
		}
	}
	return nil
}

func (w *world) setObject(c command) error {
	var obj federation.FederatedObject
	if err := yaml.UnmarshalStrict([]byte(c.input), &obj); err != nil {
		return err
	}
	obj.APIVersion, obj.Kind = w.typ.FederatedGVR().GroupVersion().String(), w.typ.Federated.Kind
	obj.UID, obj.Generation = "fed-1", 1
	obj.CreationTimestamp = metav1.NewTime(w.t0.Add(-time.Hour))
	if slices.Contains(c.args, "new") {
		obj.CreationTimestamp = metav1.NewTime(w.now) // made now
	}
	if w.obj != nil && !slices.Contains(c.args, "new") {
		obj.Status, obj.Generation = w.obj.Status, w.obj.Generation+1
		obj.Annotations = w.obj.Annotations
	}
	federation.DefaultFederatedObject(&obj)
	w.obj = &obj
	return nil
}

func (w *world) annotate(c command) error {
	if w.obj.Annotations == nil {
		w.obj.Annotations = map[string]string{}
	}
	for _, a := range c.args {
		delete(w.obj.Annotations, strings.TrimSuffix(a, "-"))
	}
	maps.Copy(w.obj.Annotations, c.opts)
	return nil
}

func (w *world) deleteObject(command) error {
	w.obj.DeletionTimestamp = &metav1.Time{Time: w.now}
	return nil
}

func (w *world) schedule(c command) error {
	cond := metav1.Condition{Type: federation.ConditionScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled", ObservedGeneration: w.obj.Generation}
	switch c.arg(0) {
	case "refused":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, c.arg(1), "the preference is invalid"
		w.obj.Status.Schedule = nil
		setCondition(w.obj, cond)
		return nil
	case "old":
		cond.ObservedGeneration = w.obj.Generation - 1
		setCondition(w.obj, cond)
		return nil
	}
	s := &federation.Schedule{}
	for _, n := range w.names(c.opts) {
		r, err := strconv.ParseInt(c.opts[n], 10, 64)
		if err != nil {
			return err
		}
		s.Clusters = append(s.Clusters, federation.ScheduledCluster{Name: n, Replicas: r})
	}
	if v, ok := c.opts["notReady"]; ok {
		s.NotReady = strings.Split(v, ",")
	}
	for _, k := range []string{"release", "evicted"} {
		if v, ok := c.opts[k]; ok {
			s.Evictions = append(s.Evictions, federation.Eviction{Cluster: v, Release: k == "release"})
		}
	}
	w.obj.Status.Schedule = s
	setCondition(w.obj, cond)
	return nil
}

// names are the cluster names among opts' keys, in the fleet's order.
func (w *world) names(opts map[string]string) []string {
	var out []string
	for _, c := range w.clusters {
		if _, ok := opts[c.Name]; ok {
			out = append(out, c.Name)
		}
	}
	return out
}

func setCondition(obj *federation.FederatedObject, c metav1.Condition) {
	obj.Status.Conditions = slices.DeleteFunc(obj.Status.Conditions, func(x metav1.Condition) bool { return x.Type == c.Type })
	obj.Status.Conditions = append(obj.Status.Conditions, c)
}

func (w *world) propagated(command) error {
	setCondition(w.obj, metav1.Condition{Type: federation.ConditionPropagated, Status: metav1.ConditionTrue, Reason: plan.ReasonPropagated, ObservedGeneration: w.obj.Generation})
	return nil
}

func (w *world) nextRV(c command) string {
	if v, ok := c.opts["rv"]; ok {
		return v
	}
	w.rv++
	return strconv.Itoa(w.rv)
}

func (w *world) setMember(c command) error {
	n := c.arg(0)
	switch {
	case c.arg(1) == "none":
		w.members[n] = plan.MemberState{}
	case c.opts["err"] != "":
		w.members[n] = plan.MemberState{Err: errorNamed(c.opts["err"])}
	case c.arg(1) == "written":
		for _, ch := range w.d.Changes {
			if ch.Cluster == n && ch.Desired != nil {
				w.members[n] = plan.MemberState{Object: w.stored(n, ch.Desired, c)}
				return nil
			}
		}
		return fmt.Errorf("the last decision wrote nothing in %s", n)
	default:
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(c.input), &u.Object); err != nil {
			return err
		}
		u.SetResourceVersion(w.nextRV(c))
		if u.GetUID() == "" {
			u.SetUID(k8stypes.UID("member-" + n))
		}
		w.members[n] = plan.MemberState{Object: u}
	}
	return nil
}

// stored is desired as cluster's server stores it: a copy, at a new resourceVersion.
func (w *world) stored(cluster string, desired *unstructured.Unstructured, c command) *unstructured.Unstructured {
	u := desired.DeepCopy()
	u.SetResourceVersion(w.nextRV(c))
	if u.GetUID() == "" {
		u.SetUID(k8stypes.UID("member-" + cluster))
	}
	return u
}

func (w *world) edit(c command) error {
	ms := w.members[c.arg(0)]
	if ms.Object == nil {
		return fmt.Errorf("no member object in %s", c.arg(0))
	}
	u := ms.Object.DeepCopy()
	for _, p := range c.args[1:] {
		unstructured.RemoveNestedField(u.Object, pointer(strings.TrimSuffix(p, "-"))...)
	}
	for p, v := range c.opts {
		var val any
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			return err
		}
		if err := setPointer(u.Object, pointer(p), normalize(val)); err != nil {
			return fmt.Errorf("edit %s: %w", p, err)
		}
	}
	w.rv++
	u.SetResourceVersion(strconv.Itoa(w.rv))
	w.members[c.arg(0)] = plan.MemberState{Object: u}
	return nil
}

// setPointer sets the value at path in obj, through maps and lists ("-" appends to a list).
func setPointer(obj map[string]any, path []string, v any) error {
	_, err := setIn(obj, path, v)
	return err
}

// setIn is cur with the value at path set to v.
func setIn(cur any, path []string, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	tok := path[0]
	switch c := cur.(type) {
	case map[string]any:
		next, err := setIn(c[tok], path[1:], v)
		c[tok] = next
		return c, err
	case []any:
		if tok == "-" {
			next, err := setIn(nil, path[1:], v)
			return append(c, next), err
		}
		j, err := strconv.Atoi(tok)
		if err != nil || j >= len(c) {
			return c, fmt.Errorf("no element %s", tok)
		}
		c[j], err = setIn(c[j], path[1:], v)
		return c, err
	case nil:
		return setIn(map[string]any{}, path, v)
	}
	return cur, fmt.Errorf("%s: not a map or a list", tok)
}

// normalize is v with numbers as the API machinery decodes them (int64).
func normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// pointer is the fields of a JSON pointer (its leading slash optional).
func pointer(p string) []string {
	path := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, tok := range path {
		path[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
	}
	return path
}

func (w *world) namespace(c command) error {
	ms := w.members[c.arg(0)]
	check := &plan.NamespaceCheck{Host: slices.Contains(c.args, "host")}
	if v, ok := c.opts["inuse"]; ok {
		check.InUse = strings.ReplaceAll(v, "_", " ")
	}
	if v, ok := c.opts["err"]; ok {
		check.Err = errorNamed(v)
	}
	ms.Namespace = check
	w.members[c.arg(0)] = ms
	return nil
}

func (w *world) remember(c command) error {
	n := c.arg(0)
	v := plan.Verified{ResourceVersion: c.opts["rv"], Input: w.d.Keys[n]}
	if v.ResourceVersion == "" && w.members[n].Object != nil {
		v.ResourceVersion = w.members[n].Object.GetResourceVersion()
	}
	if d, ok := c.opts["dropped"]; ok {
		v.Dropped = strings.Split(d, ",")
	}
	w.memory[n] = v
	return nil
}

func (w *world) version(c command) error {
	n := c.arg(0)
	w.members[n] = plan.MemberState{Version: w.memory[n].ResourceVersion}
	return nil
}

// record adds the object's current spec to its revision history, as the Syncer records it.
func (w *world) record(command) error {
	data, err := plan.SnapshotOf(w.obj)
	if err != nil {
		return err
	}
	name := plan.RevisionName(w.obj.GroupVersionKind().GroupKind(), w.obj.Name, data)
	w.history = append(w.history, plan.Revision{Number: w.revision(), Name: name, Spec: *w.obj.Spec.DeepCopy()})
	return nil
}

// observe is the Collector's report of clusters: what runs there (the revision sync
// rendered) and whether it is ready, observed now.
func (w *world) observe(c command) error {
	for _, n := range c.args {
		i := slices.IndexFunc(w.obj.Status.Clusters, func(e federation.MemberStatus) bool { return e.Name == n })
		if i < 0 {
			return fmt.Errorf("status.clusters does not list %s", n)
		}
		e := &w.obj.Status.Clusters[i]
		ready, seen := c.opts["ready"] != "false", metav1.NewTime(w.now)
		e.ObservedRevision, e.Ready, e.LastObserved, e.Stale = e.Revision, &ready, &seen, false
	}
	return nil
}

func (w *world) tick(c command) error {
	d, err := time.ParseDuration(c.arg(0))
	w.now = w.now.Add(d)
	return err
}

// input is plan.Input for the world as it stands.
func (w *world) input(read bool) plan.Input {
	in := plan.Input{
		Type: w.typ, Object: w.obj.DeepCopy(), Clusters: w.clusters, Revision: w.revision(), Identity: w.identity,
		Adopt: w.adopt || w.obj.GetAnnotations()[federation.AdoptAnnotation] == "true", DeleteFromLeavingClusters: w.removal,
		Now: w.now, WaitForScheduler: w.waitSched, Memory: w.memory, DeletionTimeout: w.timeout, History: w.history,
	}
	if !read {
		in.Members = maps.Clone(w.members)
	}
	return in
}

// revision is the object's revision: one per generation.
func (w *world) revision() int64 { return w.obj.Generation }

func (w *world) decide(c command, out *strings.Builder) error {
	w.in = w.input(slices.Contains(c.args, "read"))
	d, err := plan.Decide(w.in)
	if err != nil {
		return err
	}
	w.d = d
	n := out.Len()
	printDecision(out, d, slices.Contains(c.args, "v"))
	if out.Len() == n {
		out.WriteString("nothing\n")
	}
	return nil
}

func printDecision(out *strings.Builder, d plan.Decision, verbose bool) {
	if d.Wait != nil {
		fmt.Fprintf(out, "wait %s: %s\n", d.Wait.Reason, d.Wait.Message)
		return
	}
	if d.Rollback != nil {
		fmt.Fprintf(out, "rollback to revision %d\n", d.Rollback.Number)
		return
	}
	t := d.Targets
	if len(t.Order)+len(t.NotReady) > 0 {
		var placed []string
		for _, n := range t.Order {
			if r := t.Replicas[n]; r != nil {
				placed = append(placed, fmt.Sprintf("%s=%d", n, *r))
			} else {
				placed = append(placed, n)
			}
		}
		fmt.Fprintf(out, "placed %s", strings.Join(placed, " "))
		if len(t.NotReady) > 0 {
			fmt.Fprintf(out, "; not ready %s", strings.Join(t.NotReady, " "))
		}
		if len(t.Unplaced) > 0 {
			fmt.Fprintf(out, "; unplaced %s", strings.Join(t.Unplaced, " "))
		}
		out.WriteString("\n")
	}
	if d.Read != nil {
		fmt.Fprintf(out, "read %s\n", strings.Join(d.Read, " "))
	}
	if len(d.NotReady) > 0 {
		var checks []string
		for _, c := range d.NotReady {
			if c.Suspected {
				checks = append(checks, c.Cluster+" (suspected)")
			} else {
				checks = append(checks, c.Cluster)
			}
		}
		fmt.Fprintf(out, "check not ready %s\n", strings.Join(checks, ", "))
	}
	for _, ch := range d.Changes {
		out.WriteString(changeLine(ch, verbose) + "\n")
	}
	if len(d.ReadNamespaces) > 0 {
		fmt.Fprintf(out, "read namespaces %s\n", strings.Join(d.ReadNamespaces, " "))
	}
}

// changeLine is one change: "a: Update revision 2 drift /spec/replicas".
func changeLine(ch plan.Change, verbose bool) string {
	s := ch.Cluster + ": " + ch.Action.String()
	if ch.Reason != "" {
		s += " " + ch.Reason
	}
	if ch.Placed && ch.Revision > 0 {
		s += fmt.Sprintf(" revision %d", ch.Revision)
	}
	if ch.Placed && ch.Action == plan.ActionNone && ch.Reason == "" && ch.Desired == nil {
		s += " (not rendered)"
	}
	if len(ch.Drift) > 0 {
		s += " drift " + strings.Join(ch.Drift, ",")
	}
	if ch.Action == plan.ActionOrphan && ch.Desired != nil {
		if by := ch.Desired.GetAnnotations()[federation.ReleasedAnnotation]; by != "" {
			s += " released by " + by
		}
		if l := ch.Desired.GetLabels()[federation.ManagedByLabel]; l != "" {
			s += " still labelled " + l
		} else if ch.Desired.GetAnnotations()[federation.DesiredHashAnnotation] == "" {
			s += " unlabelled"
		}
	}
	if len(ch.Unknown) > 0 {
		s += " unknown " + strings.Join(ch.Unknown, ",")
	}
	if len(ch.Invalid) > 0 {
		s += " invalid " + ch.Invalid.ToAggregate().Error()
	}
	if verbose && ch.Message != "" {
		s += ": " + ch.Message
	}
	return s
}

func (w *world) report(c command, out *strings.Builder) error {
	var outcomes []plan.Outcome
	for _, ch := range w.d.Changes {
		o := plan.Outcome{Change: ch, Wrote: ch.Action != plan.ActionNone}
		if v, ok := c.opts[ch.Cluster]; ok {
			if err := w.outcome(&o, v); err != nil {
				return err
			}
		}
		outcomes = append(outcomes, o)
	}
	if v, ok := c.opts["holds"]; ok {
		for _, n := range strings.Split(v, ",") {
			if !slices.ContainsFunc(w.d.NotReady, func(c plan.NotReadyCheck) bool { return c.Cluster == n }) {
				return fmt.Errorf("holds=%s: the decision does not ask to check %s (Decision.NotReady)", v, n)
			}
			outcomes = append(outcomes, plan.Outcome{Change: plan.Change{Cluster: n, Reason: plan.ReasonClusterNotReady}, MayHold: true})
		}
	}
	rep := plan.Report(w.in, w.d, outcomes)
	w.printResult(out, rep, slices.Contains(c.args, "v"))
	w.carryOut(rep, outcomes)
	return nil
}

// outcome sets what the argument v says came of o's change.
func (w *world) outcome(o *plan.Outcome, v string) error {
	kind, arg, _ := strings.Cut(v, ":")
	switch kind {
	case "fail":
		o.Wrote, o.Err = false, errorNamed(arg)
	case "warn":
		o.Warnings = []string{strings.ReplaceAll(arg, "_", " ")}
	case "remaining":
		o.Remaining = o.Change.Live.DeepCopy()
		o.Remaining.SetFinalizers([]string{"example.com/cleanup"})
	case "recheck":
		o.RecheckErr = errorNamed(arg)
	case "governed":
		o.Wrote = false
		ns := &federation.FederatedObject{}
		ns.Name, ns.Namespace = w.obj.Namespace, w.obj.Namespace
		ns.APIVersion, ns.Kind = federation.NamespaceType.FederatedGVR().GroupVersion().String(), federation.NamespaceType.Federated.Kind
		ns.Spec.Placement.Clusters = []federation.ClusterReference{{Name: o.Change.Cluster}}
		if arg == "other" {
			ns.Spec.Placement.Clusters = []federation.ClusterReference{{Name: "elsewhere"}}
		}
		u, err := federation.ToUnstructured(ns)
		if err != nil {
			return err
		}
		o.Governing = u
	default:
		return fmt.Errorf("no outcome %q", v)
	}
	return nil
}

func (w *world) printResult(out *strings.Builder, rep plan.Result, verbose bool) {
	if st := rep.Status; st != nil {
		var head []string
		if st.ObservedGeneration > 0 {
			head = append(head, fmt.Sprintf("observedGeneration %d", st.ObservedGeneration))
		}
		if st.SyncedRevision > 0 {
			head = append(head, fmt.Sprintf("syncedRevision %d", st.SyncedRevision))
		}
		if st.SetClusters {
			head = append(head, fmt.Sprintf("%d cluster(s)", len(st.Clusters)))
		}
		out.WriteString(strings.TrimSpace("status "+strings.Join(head, ", ")) + "\n")
		for _, e := range st.Clusters {
			line := "  " + e.Name + ":"
			if e.Revision > 0 {
				line += fmt.Sprintf(" revision %d", e.Revision)
			}
			if e.Propagation != "" {
				line += " " + e.Propagation
			}
			if e.Message != "" && (verbose || e.Propagation == "") {
				line += ": " + e.Message
			}
			out.WriteString(line + "\n")
		}
		if st.SetRollout && st.Rollout != nil {
			fmt.Fprintf(out, "  rollout %s %s\n", st.Rollout.Phase, st.Rollout.Reason)
		}
		for _, c := range st.Conditions {
			fmt.Fprintf(out, "  %s %s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	for _, e := range rep.Events {
		when := ""
		if e.OnChange {
			when = " (on change)"
		}
		fmt.Fprintf(out, "event %s %s%s: %s\n", e.Type, e.Reason, when, e.Message)
	}
	if rep.RequeueAfter > 0 {
		fmt.Fprintf(out, "requeue %s\n", rep.RequeueAfter)
	}
	if rep.Retry != nil {
		fmt.Fprintf(out, "retry: %v\n", rep.Retry)
	}
	if rep.Placed > 0 {
		fmt.Fprintf(out, "placed %d, in sync %v\n", rep.Placed, rep.InSync)
	}
	if rep.Release {
		fmt.Fprintf(out, "release the finalizer")
		if len(rep.LeftBehind) > 0 {
			fmt.Fprintf(out, "; left behind %s", strings.Join(rep.LeftBehind, ", "))
		}
		out.WriteString("\n")
	}
	if !rep.DeletionStarted.IsZero() {
		fmt.Fprintf(out, "deletion started t+%s\n", rep.DeletionStarted.Sub(w.t0))
	}
}

// carryOut does what the Syncer does with rep: its status becomes the object's, the members
// hold what was written, and the Syncer remembers what it wrote.
func (w *world) carryOut(rep plan.Result, outcomes []plan.Outcome) {
	for _, o := range outcomes {
		if !o.Wrote {
			continue
		}
		n := o.Change.Cluster
		switch o.Change.Action {
		case plan.ActionCreate, plan.ActionUpdate:
			u := w.stored(n, o.Change.Desired, command{})
			w.members[n] = plan.MemberState{Object: u}
			w.memory[n] = plan.Verified{ResourceVersion: u.GetResourceVersion(), Input: w.d.Keys[n]}
		case plan.ActionOrphan:
			w.members[n] = plan.MemberState{Object: w.stored(n, o.Change.Desired, command{})}
			delete(w.memory, n)
		case plan.ActionDelete:
			if o.Remaining != nil {
				w.members[n] = plan.MemberState{Object: o.Remaining}
			} else {
				w.members[n] = plan.MemberState{}
			}
			delete(w.memory, n)
		}
	}
	if rep.Release {
		w.obj.Finalizers = nil
	}
	if !rep.DeletionStarted.IsZero() {
		if w.obj.Annotations == nil {
			w.obj.Annotations = map[string]string{}
		}
		w.obj.Annotations[federation.DeletionStartedAnnotation] = rep.DeletionStarted.Format(time.RFC3339)
	}
	st := rep.Status
	if st == nil {
		return
	}
	if st.ObservedGeneration > 0 {
		w.obj.Status.ObservedGeneration = st.ObservedGeneration
	}
	if st.SyncedRevision > 0 {
		w.obj.Status.SyncedRevision = st.SyncedRevision
	}
	if st.SetClusters {
		old := map[string]federation.MemberStatus{}
		for _, e := range w.obj.Status.Clusters {
			old[e.Name] = e
		}
		w.obj.Status.Clusters = nil
		for _, e := range st.Clusters {
			m := old[e.Name]
			m.Name, m.Propagation, m.Message, m.Revision = e.Name, e.Propagation, e.Message, e.Revision
			w.obj.Status.Clusters = append(w.obj.Status.Clusters, m)
		}
	}
	if st.SetRollout {
		w.obj.Status.Rollout = st.Rollout
	}
	for _, c := range st.Conditions {
		setCondition(w.obj, c)
	}
}

// errorNamed is the error a story names.
func errorNamed(name string) error {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	switch name {
	case "Conflict":
		return apierrors.NewConflict(gr, "web", errors.New("the object has been modified"))
	case "Forbidden":
		return apierrors.NewForbidden(gr, "web", errors.New("denied by policy"))
	case "Invalid":
		return apierrors.NewBadRequest("spec.replicas: Invalid value")
	case "NotFound":
		return apierrors.NewNotFound(gr, "web")
	case "ServerError":
		return apierrors.NewInternalError(errors.New("etcdserver: timeout"))
	case "Unreachable":
		return fmt.Errorf("%w: dial tcp 10.0.0.1:443: connect: connection refused", federation.ErrUnreachable)
	case "TypeNotServed":
		return fmt.Errorf("%w: the server could not find the requested resource", plan.ErrTypeNotServed)
	case "ClusterNotFound":
		return fmt.Errorf("%w: no client yet", federation.ErrClusterNotFound)
	case "ClusterNotReady":
		return fmt.Errorf("%w: its client is being rebuilt", federation.ErrClusterNotReady)
	case "Terminating":
		return apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "web", errors.New("unable to create new content in namespace shop because it is being terminated"))
	}
	return errors.New(name)
}
