package controlplane

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	"github.com/fedkit/fedkit/kinds"
)

// Reasons of a FederatedTypeConfig's Ready condition.
const (
	// ReasonTypeRunning: the type's loops run with the configuration's current generation.
	ReasonTypeRunning = "Running"
	// ReasonInvalidTypeConfig: a field of the configuration is missing or wrong.
	ReasonInvalidTypeConfig = "InvalidTypeConfig"
	// ReasonInvalidRules: a rule of spec.rules does not compile.
	ReasonInvalidRules = "InvalidRules"
	// ReasonTypeConflict: another configuration, or Options.Types, federates the kind.
	ReasonTypeConflict = "Conflict"
)

// typeConfigs runs the loops of the types the host's FederatedTypeConfigs configure, for one
// shard: one pass per configuration (its name is the key) decides what runs.
type typeConfigs struct {
	cp       *ControlPlane
	host     federation.ClusterClient
	clusters federation.ClusterSet
	opts     Options // the loops' options, as New completed them
	shard    federation.Shard
	parent   context.Context // the typeconfigs loop's: the types' loops stop with it

	mu      sync.Mutex
	running map[string]*configured
}

// configured is one configuration's running loops.
type configured struct {
	typ        federation.TypeConfig
	generation int64
	parts      []*part
	cancel     context.CancelFunc
	done       sync.WaitGroup
}

// runTypeConfigs is the run of the typeconfigs loop of shard: it watches
// FederatedTypeConfigs and stops every type's loops when it returns.
func (cp *ControlPlane) runTypeConfigs(host federation.ClusterClient, clusters federation.ClusterSet, opts Options, shard federation.Shard) func(context.Context) error {
	return func(ctx context.Context) error {
		tc := &typeConfigs{cp: cp, host: host, clusters: clusters, opts: opts, shard: shard, parent: ctx, running: map[string]*configured{}}
		defer tc.stopAll()
		l, err := loop.New(host, []loop.Source{{GVR: federation.FederatedTypeConfigGVR}}, loop.Options{
			Name: TypeConfigsLoop, Workers: 1, Clock: opts.Clock, Logger: opts.Logger, Cache: opts.Cache,
			CacheSyncTimeout: opts.Status.CacheSyncTimeout,
		})
		if err != nil {
			return err
		}
		r := l.Reader()
		return l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return federation.Result{}, tc.reconcile(ctx, r, key.Name)
		}))
	}
}

// reconcile brings the loops of configuration name in line with it (DecideTypeConfig), and
// says so in its status.
func (tc *typeConfigs) reconcile(ctx context.Context, r federation.Reader, name string) error {
	u, err := r.Get(ctx, federation.FederatedTypeConfigGVR, "", name)
	if apierrors.IsNotFound(err) {
		tc.stop(name)
		return nil
	}
	if err != nil {
		return err
	}
	ftc := &federation.FederatedTypeConfig{}
	if err := federation.FromUnstructured(u, ftc); err != nil {
		return tc.report(ctx, u, metav1.ConditionFalse, ReasonInvalidTypeConfig, err.Error())
	}
	tc.mu.Lock()
	running := make(map[string]RunningType, len(tc.running))
	for n, c := range tc.running {
		running[n] = RunningType{Type: c.typ, Generation: c.generation}
	}
	tc.mu.Unlock()
	d := DecideTypeConfig(ftc, tc.opts.Types, running)
	switch {
	case d.Run == nil:
		tc.stop(name)
	case d.Restart:
		tc.stop(name)
		tc.start(ctx, name, d.Run.Type, d.Run.Generation)
	default:
		tc.mu.Lock()
		if c := tc.running[name]; c != nil {
			c.generation = d.Run.Generation
		}
		tc.mu.Unlock()
	}
	msg := d.Message
	if d.Status == metav1.ConditionTrue {
		msg += ": " + strings.Join(tc.loopNames(name), ", ")
	}
	return tc.report(ctx, u, d.Status, d.Reason, msg)
}

// RunningType is the configuration a configured type's loops run with, and the generation of
// its FederatedTypeConfig they act on.
type RunningType struct {
	Type       federation.TypeConfig
	Generation int64
}

// TypeConfigDecision is what a control plane does with one FederatedTypeConfig: the
// configuration its type's loops run with from now on, and the configuration's Ready
// condition.
type TypeConfigDecision struct {
	// Run is what the type's loops run with from now on; nil: no loop runs for it.
	Run *RunningType
	// Restart: the loops start, or start again, with Run (none ran, or another
	// configuration ran). Otherwise those that run go on as they are.
	Restart bool
	// Status, Reason and Message are the configuration's Ready condition. A True message
	// names the type; the control plane adds the names of its loops.
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// DecideTypeConfig decides what runs for ftc, given the control plane's own types (Options.Types)
// and the configurations whose loops run now, by FederatedTypeConfig name. It is pure:
//
//   - a valid configuration runs, restarting the loops when the type or its rules changed;
//   - an invalid one (a field missing, rules that do not compile, a kind another
//     configuration or Options.Types federates) leaves the last valid configuration of its
//     name running, and says so: invalid input never stops nor changes what runs;
//   - rules that do not compile, with nothing running before, still run the type's loops:
//     sync needs no rule, and the status collector reports every member not ready with the
//     error, on each object;
//   - anything else invalid runs nothing.
//
// The control plane's typeconfigs loop and an embedder's own (the chaos soak's) call it.
func DecideTypeConfig(ftc *federation.FederatedTypeConfig, own []federation.TypeConfig, running map[string]RunningType) TypeConfigDecision {
	t, reason, err := checkTypeConfig(ftc, own, running)
	old, ran := running[ftc.Name]
	switch {
	case err == nil:
	case ran:
		return TypeConfigDecision{Run: &old, Status: metav1.ConditionFalse, Reason: reason,
			Message: fmt.Sprintf("%v; the configuration of generation %d still runs", err, old.Generation)}
	case reason == ReasonInvalidRules:
		return TypeConfigDecision{Run: &RunningType{Type: t, Generation: ftc.Generation}, Restart: true, Status: metav1.ConditionFalse, Reason: reason,
			Message: err.Error() + "; the type's loops run, and its objects' members are reported not ready with this error"}
	default:
		return TypeConfigDecision{Status: metav1.ConditionFalse, Reason: reason, Message: err.Error() + "; no loop runs for it"}
	}
	return TypeConfigDecision{Run: &RunningType{Type: t, Generation: ftc.Generation}, Restart: !ran || !reflect.DeepEqual(old.Type, t),
		Status: metav1.ConditionTrue, Reason: ReasonTypeRunning, Message: t.String()}
}

// checkTypeConfig decodes the configuration's type and compiles its rules, refusing a kind
// another configuration or own federates.
func checkTypeConfig(ftc *federation.FederatedTypeConfig, own []federation.TypeConfig, running map[string]RunningType) (federation.TypeConfig, string, error) {
	t, err := ftc.TypeConfig()
	if err != nil {
		return t, ReasonInvalidTypeConfig, err
	}
	if _, err := kinds.Compile(t); err != nil {
		return t, ReasonInvalidRules, err
	}
	if slices.ContainsFunc(own, func(s federation.TypeConfig) bool { return s.Federated.Kind == t.Federated.Kind }) {
		return t, ReasonTypeConflict, fmt.Errorf("%s is one of the control plane's own types (Options.Types, --types)", t.Federated.Kind)
	}
	for _, other := range slices.Sorted(maps.Keys(running)) {
		if other != ftc.Name && running[other].Type.Federated.Kind == t.Federated.Kind {
			return t, ReasonTypeConflict, fmt.Errorf("FederatedTypeConfig %s federates %s already", other, t.Federated.Kind)
		}
	}
	return t, "", nil
}

// start builds t's loops for the shard and runs each under the control plane's supervision
// (checked, retried every RetryPeriod, listed in Status).
func (tc *typeConfigs) start(ctx context.Context, name string, t federation.TypeConfig, generation int64) {
	c := &configured{typ: t, generation: generation}
	var run context.Context
	run, c.cancel = context.WithCancel(tc.parent)
	log := tc.opts.Logger.WithValues("typeConfig", name)
	for _, s := range typeSpecs(tc.host, tc.clusters, tc.opts, t) {
		var p *part
		if w, err := s.build(tc.shard); err != nil {
			// The loop could not be built: its part reports the error, retried as any.
			p = newPart(s.name, nil, func(context.Context) error { return err }, tc.shard)
		} else {
			p = newPart(s.name, needsOf(w.Watches(), s.optional), w.Run, tc.shard)
		}
		p.ownCache = s.ownCache
		c.parts = append(c.parts, p)
	}
	tc.cp.mu.Lock()
	tc.cp.dynamic = append(tc.cp.dynamic, c.parts...)
	tc.cp.mu.Unlock()
	for _, p := range c.parts {
		c.done.Go(func() {
			notServed := tc.cp.check(run, []*part{p})[p]
			_ = tc.cp.supervise(run, nil, p, notServed)
		})
	}
	tc.mu.Lock()
	tc.running[name] = c
	tc.mu.Unlock()
	tc.cp.setConfigured(tc.shard, name, &t)
	log.Info("Started the loops of a configured type", "type", t.String())
}

// stop stops the loops of configuration name, if any run, and waits for them.
func (tc *typeConfigs) stop(name string) {
	tc.mu.Lock()
	c := tc.running[name]
	delete(tc.running, name)
	tc.mu.Unlock()
	if c == nil {
		return
	}
	tc.cp.setConfigured(tc.shard, name, nil)
	c.cancel()
	c.done.Wait()
	tc.cp.mu.Lock()
	tc.cp.dynamic = slices.DeleteFunc(tc.cp.dynamic, func(p *part) bool { return slices.Contains(c.parts, p) })
	tc.cp.mu.Unlock()
	tc.opts.Logger.Info("Stopped the loops of a configured type; member objects are left as they are", "typeConfig", name, "type", c.typ.String())
}

func (tc *typeConfigs) stopAll() {
	tc.mu.Lock()
	names := make([]string, 0, len(tc.running))
	for n := range tc.running {
		names = append(names, n)
	}
	tc.mu.Unlock()
	for _, n := range names {
		tc.stop(n)
	}
}

func (tc *typeConfigs) loopNames(name string) []string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var out []string
	if c := tc.running[name]; c != nil {
		for _, p := range c.parts {
			out = append(out, p.name)
		}
	}
	return out
}

// report writes the configuration's Ready condition (ReportTypeConfig), from the first shard
// only: every shard decides alike.
func (tc *typeConfigs) report(ctx context.Context, u *unstructured.Unstructured, status metav1.ConditionStatus, reason, msg string) error {
	if tc.shard.Sharded() && tc.shard.Index != 0 {
		return nil
	}
	return ReportTypeConfig(ctx, tc.host, u.GetName(), status, reason, msg, tc.opts.Clock.Now(), tc.opts.Status.Events)
}

// ReportTypeConfig writes FederatedTypeConfig name's Ready condition and observedGeneration
// when they change, with a Warning Event (to events, when not nil) when it turns False or
// says something new while False. A Conflict is returned, to retry on a fresh read.
func ReportTypeConfig(ctx context.Context, host federation.ClusterClient, name string, status metav1.ConditionStatus, reason, msg string, now time.Time, events federation.EventRecorder) error {
	live, err := host.Get(ctx, federation.FederatedTypeConfigGVR, "", name)
	if err != nil {
		return err
	}
	ftc := &federation.FederatedTypeConfig{}
	if err := federation.FromUnstructured(live, ftc); err != nil {
		ftc = &federation.FederatedTypeConfig{}
	}
	cond := metav1.Condition{Type: federation.ConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: live.GetGeneration()}
	prev := meta.FindStatusCondition(ftc.Status.Conditions, federation.ConditionReady)
	if prev != nil && prev.Status == status && prev.Reason == reason && prev.Message == msg && ftc.Status.ObservedGeneration == live.GetGeneration() {
		return nil
	}
	cond.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(&ftc.Status.Conditions, cond)
	ftc.Status.ObservedGeneration = live.GetGeneration()
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ftc.Status)
	if err != nil {
		return err
	}
	live.Object["status"] = st
	if _, err := host.UpdateStatus(ctx, federation.FederatedTypeConfigGVR, live); err != nil {
		return err // a Conflict too: the loop retries on a fresh read
	}
	if status != metav1.ConditionTrue && (prev == nil || prev.Reason != reason || prev.Message != msg) {
		loop.Event(ctx, events, live, federation.EventTypeWarning, reason, msg)
	}
	return nil
}

// configKey names a configuration as one shard's typeconfigs loop runs it.
type configKey struct {
	shard federation.Shard
	name  string
}

// setConfigured records that the typeconfigs loop of shard runs configuration name with t,
// or runs it no more (nil), and wakes the loops over several types when that changes what
// runs.
func (cp *ControlPlane) setConfigured(shard federation.Shard, name string, t *federation.TypeConfig) {
	k := configKey{shard: shard, name: name}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	old, had := cp.configured[k]
	switch {
	case t == nil && !had:
		return
	case t == nil:
		delete(cp.configured, k)
	case had && reflect.DeepEqual(old, *t):
		return
	default:
		cp.configured[k] = *t
	}
	close(cp.typesChanged)
	cp.typesChanged = make(chan struct{})
}

// configuredTypes returns the types FederatedTypeConfigs configure that pick picks (each
// kind once, by Federated kind), and a channel closed when they change; nil and nil when
// pick is nil.
func (cp *ControlPlane) configuredTypes(pick func(federation.TypeConfig) bool) ([]federation.TypeConfig, <-chan struct{}) {
	if pick == nil {
		return nil, nil
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var out []federation.TypeConfig
	for _, t := range cp.configured {
		if pick(t) && !slices.ContainsFunc(out, func(o federation.TypeConfig) bool { return o.Federated.Kind == t.Federated.Kind }) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b federation.TypeConfig) int { return strings.Compare(a.Federated.Kind, b.Federated.Kind) })
	return out, cp.typesChanged
}
