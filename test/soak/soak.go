package soak

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// Result is what a soak found and what it cost.
type Result struct {
	// Config is the soak's configuration, defaults filled in.
	Config Config
	// Violations lists every broken invariant, each naming the seed, the phase and step, the
	// rule and the object, with the replay command.
	Violations []Violation
	// Events and Skipped count the script's events applied, and those that found nothing to
	// act on (a drift of an object that is not there).
	Events, Skipped int
	// Rounds counts the rounds (Run mode: clock steps) of the whole soak; Settle those it
	// took to reach quiescence the first time, once faults were off.
	Rounds, Settle int
	// Writes counts the writes that reached the members and the host during the soak.
	MemberWrites, HostWrites int
	// HourWrites counts the writes of the simulated hour after quiescence, by kind.
	HourHostWrites, HourMemberWrites, HourClusterWrites int
	// Simulated is how much time passed on the fake clock; Elapsed, in the real world.
	Simulated, Elapsed time.Duration
	// FailoverChecks counts the failover checks made after the steps (a divided workload's
	// capacity while a drained cluster's eviction lasts, a drained cluster's copy deleted);
	// FailoverSkipped, by reason, those an object was exempt from; Released, the copies
	// PurgeNever evictions released.
	FailoverChecks  int
	FailoverSkipped map[string]int
	Released        int
}

// Replay is the command that runs the soak again.
func (r Result) Replay() string { return r.Config.Replay() }

// Summary is one line with the figures.
func (r Result) Summary() string {
	mode := "deterministic"
	if r.Config.Run {
		mode = "run"
	}
	return fmt.Sprintf("seed %d (%s, %d clusters, %d objects, %d steps): %d events (%d skipped), %d rounds, quiet after %d, "+
		"%d member and %d host writes, %s simulated in %s; %d violation(s)",
		r.Config.Seed, mode, r.Config.Clusters, r.Config.Objects, r.Config.Steps, r.Events, r.Skipped, r.Rounds, r.Settle,
		r.MemberWrites, r.HostWrites, r.Simulated.Round(time.Second), r.Elapsed.Round(time.Millisecond), len(r.Violations))
}

// FailoverSummary is one line with the failover checks' figures.
func (r Result) FailoverSummary() string {
	var skipped []string
	for _, k := range sortedKeys(r.FailoverSkipped) {
		skipped = append(skipped, fmt.Sprintf("%s: %d", k, r.FailoverSkipped[k]))
	}
	return fmt.Sprintf("failover: %d checks, %d copies released by PurgeNever; skipped: %s", r.FailoverChecks, r.Released, strings.Join(skipped, ", "))
}

// quietRounds is how many rounds in a row without a write make the control plane quiescent: a
// minute at the default round step, longer than the members take to report a rollout.
const quietRounds = 6

// longQuietRounds of two minutes each follow: deferred work (a preference's rebalance
// period, 5 minutes by default) must happen within them.
const longQuietRounds = 3

// Run soaks the control plane that factory builds over the World of cfg: it seeds the fleet
// and the host, applies the script with faults on, turns faults off, lets the control plane
// settle, and checks. The error is for a harness that cannot run (bad Config, a seed write
// refused); what the control plane got wrong is in Result.Violations.
func Run(ctx context.Context, cfg Config, factory Factory) (Result, error) {
	began := time.Now() // real time, for the report only
	res := Result{}
	script, err := NewScript(cfg)
	if err != nil {
		return res, err
	}
	w, err := NewWorld(ctx, cfg)
	if err != nil {
		return res, err
	}
	res.Config = w.Config
	logf := w.Config.Logf
	w.at("the seed", -1)
	if err := w.seedHost(ctx); err != nil {
		return res, err
	}
	for i, e := range script.Initial {
		if _, err := w.Apply(ctx, e); err != nil {
			return res, err
		}
		if e.Op == OpCreate && e.Kind == federation.ServiceType.Federated.Kind && i%10 == 0 {
			if err := w.seedRecord(ctx, e.Key); err != nil {
				return res, err
			}
		}
	}
	if err := w.seedForeign(script); err != nil {
		return res, err
	}
	if err := w.seedAutoscale(ctx); err != nil {
		return res, err
	}
	cp, err := factory(w)
	if err != nil {
		return res, err
	}
	d := newDriver(w, cp)
	defer func() {
		if err := d.stop(); err != nil {
			w.violate(RuleLoopsHealthy, "the control plane", "stopping it: %v", err)
		}
	}()
	if err := d.start(ctx); err != nil {
		return res, err
	}

	// The chaos.
	w.setFaults(true)
	w.failover.prev = w.snapshot()
	w.steps.prev = w.stepState()
	for i, step := range script.Steps {
		w.at("the chaos", i)
		for _, e := range step {
			logf("step %d: %s", i, e)
			skipped, err := w.Apply(ctx, e)
			if err != nil {
				return res, fmt.Errorf("step %d: %w", i, err)
			}
			res.Events++
			if skipped {
				res.Skipped++
			}
		}
		w.flapLoad(i)
		if err := d.advance(ctx, w.Config.RoundStep); err != nil {
			return res, err
		}
		w.afterStep(step)
		res.Rounds++
		wc := w.takeWrites()
		res.MemberWrites += wc.members
		res.HostWrites += wc.host + wc.clusters
		logf("step %d: %d events, %d member writes, %d host writes", i, len(step), wc.members, wc.host+wc.clusters)
	}

	// Quiescence, and the checks.
	w.setFaults(false)
	w.healAll()
	healed := []Event{{Op: OpHeal}} // the first sample after the healing cannot compare
	n, err := settle(ctx, w, d, "after the chaos", func() {
		w.afterStep(healed)
		healed = nil
	})
	res.Settle, res.Rounds = n, res.Rounds+n
	if err != nil {
		return res, err
	}
	w.check("after the chaos", nil)

	// Other controllers annotate member objects: no federation write may follow.
	w.at("other controllers' annotations", -1)
	if err := foreignWrites(ctx, w, d); err != nil {
		return res, err
	}
	res.Rounds += quietRounds

	// A member is cut off: its entries go stale and leave the sums.
	cut := sortedKeys(w.members())[0]
	if err := w.setPartition(cut, true); err != nil {
		return res, err
	}
	n, err = settle(ctx, w, d, "cluster "+cut+" cut off", nil)
	res.Rounds += n
	if err != nil {
		return res, err
	}
	w.check("cluster "+cut+" cut off", map[string]bool{cut: true})
	w.healAll()
	n, err = settle(ctx, w, d, "healed", nil)
	res.Rounds += n
	if err != nil {
		return res, err
	}
	w.check("healed", nil)

	// A further hour: nothing but the monitor's heartbeats.
	w.at("an hour later", -1)
	w.takeWrites()
	for range 12 {
		if err := d.advance(ctx, 5*time.Minute); err != nil {
			return res, err
		}
		res.Rounds++
	}
	hour := w.takeWrites()
	res.HourHostWrites, res.HourMemberWrites, res.HourClusterWrites = hour.host, hour.members, hour.clusters
	if hour.host+hour.members > 0 {
		w.violate(RuleQuietHour, "the control plane", "%d host and %d member writes, want none: %s", hour.host, hour.members, hour.named())
	}
	if limit := 12 * len(w.Fleet.Names()); hour.clusters > limit {
		w.violate(RuleQuietHour, "the cluster monitor", "%d Cluster writes, more than one heartbeat a round per cluster (%d)", hour.clusters, limit)
	}
	w.check("an hour later", nil)
	if w.autoscale != nil {
		logf("autoscale: %s", w.autoscale.summary())
	}

	res.Violations = w.Violations()
	res.FailoverChecks, res.FailoverSkipped, res.Released = w.failover.checks, w.failover.skipped, len(w.failover.released)
	res.Simulated = w.Clock.Since(startTime())
	res.Elapsed = time.Since(began)
	return res, nil
}

// settle runs rounds until the control plane writes nothing (but the monitor's heartbeats)
// and deletes nothing for quietRounds rounds, then for longQuietRounds longer ones: deferred work
// (a preference's rebalance period, 5 minutes by default) happens within that window. It
// takes at most Config.MaxRounds rounds; not settling is a violation. sample, when set, runs
// after every round (violations then name the round as the step).
func settle(ctx context.Context, w *World, d driver, phase string, sample func()) (int, error) {
	quiet := 0
	var last func() string
	for i := 1; i <= w.Config.MaxRounds; i++ {
		w.at(phase, i)
		step := w.Config.RoundStep
		if quiet >= quietRounds {
			step = 2 * time.Minute
		}
		if err := d.advance(ctx, step); err != nil {
			return i, err
		}
		if sample != nil {
			sample()
		}
		wc := w.takeWrites()
		w.Config.Logf("%s: round %d (+%s): %d member writes, %d host writes, %d Cluster writes", phase, i, step, wc.members, wc.host, wc.clusters)
		left, coming := w.deleting(), w.recovering()
		last = func() string {
			return fmt.Sprintf("the last round's writes: %s; still being deleted: %v; not Ready yet: %v", wc.named(), left, coming)
		}
		if wc.members+wc.host > 0 || len(left) > 0 || len(coming) > 0 {
			if len(left) > 0 {
				w.Config.Logf("%s: round %d: still being deleted: %v", phase, i, left)
			}
			if len(coming) > 0 {
				// The monitor counts good probes before Ready turns True (more for a cluster
				// that flapped), writing nothing meanwhile: that is not quiescence.
				w.Config.Logf("%s: round %d: reachable but not Ready yet: %v", phase, i, coming)
			}
			quiet = 0
			continue
		}
		if quiet++; quiet == quietRounds+longQuietRounds {
			return i, nil
		}
	}
	w.at(phase, -1)
	w.violate(RuleSettles, "the control plane", "still writing after %d rounds (%s)", w.Config.MaxRounds, last())
	if w.Config.Goroutines != "" {
		if err := dumpGoroutines(w.Config.Goroutines); err != nil {
			w.Config.Logf("%s: goroutines: %v", phase, err)
		}
	}
	return w.Config.MaxRounds, nil
}

// foreignWrites has another controller annotate some managed member objects, then requires
// quietRounds rounds without a federation write.
func foreignWrites(ctx context.Context, w *World, d driver) error {
	n := 0
	members := w.members()
	for _, name := range sortedKeys(members) {
		m := members[name]
		for _, typ := range kinds() {
			if typ.Federated.Kind == federation.DeploymentType.Federated.Kind {
				// A Deployment's generation follows its annotations (the real strategy's
				// rule): its rollout status changes, and the collector rightly says so.
				continue
			}
			for _, obj := range m.Objects(typ.TargetGVR()) {
				if !managed(obj) || obj.GetLabels()[federation.FederatedNameLabel] == "" || n%7 != 0 {
					n++
					continue
				}
				n++
				key := federation.Key{Namespace: obj.GetLabels()[federation.FederatedNamespaceLabel], Name: obj.GetLabels()[federation.FederatedNameLabel]}
				e := Event{Op: OpForeignWrite, Kind: typ.Federated.Kind, Key: key, Cluster: name, Value: int64(n)}
				if _, err := w.Apply(ctx, e); err != nil {
					return err
				}
			}
		}
	}
	w.takeWrites()
	for i := range quietRounds {
		if err := d.advance(ctx, w.Config.RoundStep); err != nil {
			return err
		}
		if wc := w.takeWrites(); wc.members+wc.host > 0 {
			w.violate(RuleForeignAnnotations, "the control plane", "round %d after other controllers' annotations made %d member and %d host writes, want none: %s", i, wc.members, wc.host, wc.named())
		}
	}
	return nil
}

// dumpGoroutines writes every goroutine's stack to file.
func dumpGoroutines(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 2); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// recovering lists the members that are reachable (not partitioned) and whose Cluster is not
// Ready: with faults off, the monitor turns them Ready once it has counted enough good probes.
func (w *World) recovering() []string {
	var out []string
	for name, m := range w.members() {
		if m.Partitioned() {
			continue
		}
		u, err := w.Host.Peek(federation.ClusterGVR, "", name)
		if err != nil || u.GetDeletionTimestamp() != nil {
			continue
		}
		var c federation.Cluster
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
			continue
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// deleting lists the Clusters and federated objects still being deleted: a control plane is
// not quiescent before its deletions complete.
func (w *World) deleting() []string {
	var out []string
	gvrs := []schema.GroupVersionResource{federation.ClusterGVR}
	for _, typ := range kinds() {
		gvrs = append(gvrs, typ.FederatedGVR())
	}
	for _, gvr := range gvrs {
		for _, u := range w.Host.Objects(gvr) {
			if u.GetDeletionTimestamp() != nil {
				out = append(out, u.GetKind()+" "+objectRef(u.GetNamespace(), u.GetName()))
			}
		}
	}
	return out
}
