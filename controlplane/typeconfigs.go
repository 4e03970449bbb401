package controlplane

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

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

// reconcile brings the loops of configuration name in line with it, and says so in its
// status.
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
	t, reason, err := tc.check(ftc)
	switch old := tc.current(name); {
	case err == nil:
	case old != nil:
		return tc.report(ctx, u, metav1.ConditionFalse, reason, fmt.Sprintf("%v; the configuration of generation %d still runs", err, old.generation))
	case reason == ReasonInvalidRules:
		// Nothing ran before: the loops run, sync propagates (it needs no rule), and the
		// collector reports every member not ready with this error, on each object.
		tc.start(ctx, name, t, ftc.Generation)
		return tc.report(ctx, u, metav1.ConditionFalse, reason, err.Error()+"; the type's loops run, and its objects' members are reported not ready with this error")
	default:
		return tc.report(ctx, u, metav1.ConditionFalse, reason, err.Error()+"; no loop runs for it")
	}
	if old := tc.current(name); old == nil || !reflect.DeepEqual(old.typ, t) {
		tc.stop(name)
		tc.start(ctx, name, t, ftc.Generation)
	} else {
		tc.mu.Lock()
		old.generation = ftc.Generation
		tc.mu.Unlock()
	}
	return tc.report(ctx, u, metav1.ConditionTrue, ReasonTypeRunning, fmt.Sprintf("%s: %s", t, strings.Join(tc.loopNames(name), ", ")))
}

// check decodes the configuration's type and compiles its rules, refusing a kind another
// configuration or Options.Types federates.
func (tc *typeConfigs) check(ftc *federation.FederatedTypeConfig) (federation.TypeConfig, string, error) {
	t, err := ftc.TypeConfig()
	if err != nil {
		return t, ReasonInvalidTypeConfig, err
	}
	if _, err := kinds.Compile(t); err != nil {
		return t, ReasonInvalidRules, err
	}
	if slices.ContainsFunc(tc.opts.Types, func(s federation.TypeConfig) bool { return s.Federated.Kind == t.Federated.Kind }) {
		return t, ReasonTypeConflict, fmt.Errorf("%s is one of the control plane's own types (Options.Types, --types)", t.Federated.Kind)
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for other, c := range tc.running {
		if other != ftc.Name && c.typ.Federated.Kind == t.Federated.Kind {
			return t, ReasonTypeConflict, fmt.Errorf("FederatedTypeConfig %s federates %s already", other, t.Federated.Kind)
		}
	}
	return t, "", nil
}

func (tc *typeConfigs) current(name string) *configured {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.running[name]
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

// report writes the configuration's Ready condition and observedGeneration when they change
// (from the first shard only: every shard decides alike), with a Warning when it turns False.
func (tc *typeConfigs) report(ctx context.Context, u *unstructured.Unstructured, status metav1.ConditionStatus, reason, msg string) error {
	if tc.shard.Sharded() && tc.shard.Index != 0 {
		return nil
	}
	live, err := tc.host.Get(ctx, federation.FederatedTypeConfigGVR, "", u.GetName())
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
	cond.LastTransitionTime = metav1.NewTime(tc.opts.Clock.Now())
	meta.SetStatusCondition(&ftc.Status.Conditions, cond)
	ftc.Status.ObservedGeneration = live.GetGeneration()
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ftc.Status)
	if err != nil {
		return err
	}
	live.Object["status"] = st
	if _, err := tc.host.UpdateStatus(ctx, federation.FederatedTypeConfigGVR, live); err != nil {
		return err // a Conflict too: the loop retries on a fresh read
	}
	if status != metav1.ConditionTrue && (prev == nil || prev.Reason != reason || prev.Message != msg) {
		loop.Event(ctx, tc.opts.Status.Events, live, federation.EventTypeWarning, reason, msg)
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
