package soak

import (
	"fmt"
	"slices"
	"time"

	"github.com/fedkit/fedkit/federation"
)

// The script's features beyond Federated<Kind> objects (see [Features]): what the initial
// objects add, the episodes every soak of enough steps has once, and the random events.

// dependencies are the host objects the workloads' dependencies are: in every plain
// namespace, each dependency set's ConfigMap, Secrets and claim; and, for every other set,
// the user's own FederatedSecret of its Secret, placed everywhere but one cluster.
func (g *generator) dependencies() []Event {
	if !g.on.Dependencies {
		return nil
	}
	var out []Event
	for _, ns := range plainNamespaces(g.cfg.Objects) {
		for k := int64(1); k <= depSets(g.cfg.Objects); k++ {
			cm, secret, alt, claim := depNames(k)
			for _, d := range []struct{ kind, name string }{{"ConfigMap", cm}, {"Secret", secret}, {"Secret", alt}, {"PersistentVolumeClaim", claim}} {
				out = append(out, Event{Op: OpNative, Kind: d.kind, Key: federation.Key{Namespace: ns, Name: d.name}, Value: int64(g.r.IntN(1000))})
			}
			if k%2 == 0 {
				e := Event{Op: OpCreate, Kind: federation.SecretType.Federated.Kind, Key: federation.Key{Namespace: ns, Name: secret},
					Value: int64(g.r.IntN(1000)), Placement: Placement{Selector: map[string]string{}, Exclude: []string{g.cluster()}}}
				g.live[e.Kind] = append(g.live[e.Kind], e.Key)
				out = append(out, e)
			}
		}
	}
	return out
}

// policiesAndNatives are the native Deployments on the host and the policies over them: one
// ClusterPropagationPolicy for every Deployment, one for the shop team's dividing their
// replicas among the gold clusters, and a PropagationPolicy in each plain namespace. A tenth
// of the objects are native Deployments, two in three the shop team's; some refer to a
// dependency set. The host's own kube-system runs a Deployment too.
func (g *generator) policiesAndNatives() []Event {
	var out []Event
	if g.on.Policies || g.on.Lookalikes {
		out = append(out, Event{Op: OpNative, Kind: "Deployment", Key: federation.Key{Namespace: systemNamespace, Name: "coredns"}, Value: 1, Target: "system"})
	}
	if !g.on.Policies {
		return out
	}
	for range max(4, g.cfg.Objects/10) {
		out = append(out, g.native())
	}
	out = append(out,
		g.policy(kindCPP, federation.Key{Name: everyDeployment}),
		g.policy(kindCPP, federation.Key{Name: "gold-shop"}))
	for _, ns := range plainNamespaces(g.cfg.Objects) {
		out = append(out, g.policy(kindPP, federation.Key{Namespace: ns, Name: "pp-" + ns}))
	}
	return out
}

// native creates (or replaces) a native Deployment.
func (g *generator) native() Event {
	g.seq++
	ns := plainNamespaces(g.cfg.Objects)
	e := Event{Op: OpNative, Kind: "Deployment", Key: federation.Key{Namespace: ns[g.seq%len(ns)], Name: fmt.Sprintf("web-%04d", g.seq)},
		Value: int64(g.r.IntN(1000)), Target: "shop"}
	if g.r.IntN(3) == 0 {
		e.Target = "other"
	}
	if g.on.Dependencies && g.r.IntN(2) == 0 {
		e.Deps = 1 + int64(g.r.IntN(int(depSets(g.cfg.Objects))))
	}
	g.natives = append(g.natives, e)
	return e
}

// policy creates (or replaces) a policy: a random rank and selector, a placement, a divided
// total for a third of them, an override of one cluster for a quarter.
func (g *generator) policy(kind string, key federation.Key) Event {
	e := Event{Op: OpPolicy, Kind: kind, Key: key, Value: int64(g.r.IntN(1000)), Placement: g.placement()}
	if key.Name == "gold-shop" {
		e.Value = 4*1 + 2 // by label, priority 2
		e.Placement = Placement{Selector: map[string]string{tierLabel: "gold"}}
	}
	if g.r.IntN(3) == 0 || key.Name == "gold-shop" {
		e.Total = 2 + int64(g.r.IntN(8))
	}
	if g.r.IntN(4) == 0 {
		e.Cluster = g.cluster()
	}
	if len(g.natives) > 0 {
		e.Target = g.natives[g.r.IntN(len(g.natives))].Key.Name
	}
	g.policies[kind+"/"+key.String()] = e
	return e
}

// kubeFed are the objects KubeFed ran before the migration: a few FederatedDeployments and
// FederatedConfigMaps placed in two clusters each, whose member objects KubeFed made. The
// migration episode applies what `kubectl fed migrate` makes of them.
func (g *generator) kubeFed() []Event {
	if !g.on.Migration {
		return nil
	}
	var out []Event
	ns := plainNamespaces(g.cfg.Objects)
	for i := range max(2, g.cfg.Objects/50) {
		kind := federation.ConfigMapType.Federated.Kind
		if i%2 == 0 {
			kind = federation.DeploymentType.Federated.Kind
		}
		picked := slices.Clone(g.clusters)
		g.r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
		picked = picked[:2]
		slices.Sort(picked)
		e := Event{Op: OpKubeFed, Kind: kind, Key: federation.Key{Namespace: ns[i%len(ns)], Name: fmt.Sprintf("kf-%04d", i)},
			Value: int64(g.r.IntN(1000)), Placement: Placement{Clusters: picked}}
		out = append(out, e)
		g.migrating = append(g.migrating, e)
	}
	return out
}

// outageJump is how far the clock jumps while the control plane is cut off from every
// member, once the cluster monitor has counted every cluster lost: past
// status.DefaultEvictionDelay (5m), after which every lost cluster's taint would turn
// NoExecute but for the fleet disruption. (A jump before the monitor has probed every
// cluster enough would stand for a monitor that stopped probing for minutes, and count a
// cluster lost alone for that long.)
const outageJump = 6 * time.Minute

// episodes are the steps of the events every soak with enough steps has once: a cluster
// unjoined then joined again, the migration, a policy made invalid then mended, the
// control plane cut off from every member, and a workload's pods pointed at another
// Secret in every cluster but one.
type episodes struct {
	unjoin, rejoin, migrate, invalid, mend int
	calm, isolate, healFrom                int
	drain, undrain                         int
	unselect, reselect                     int
	alt                                    int
}

func (g *generator) episodes() episodes {
	n := g.cfg.Steps
	e := episodes{unjoin: -1, rejoin: -1, migrate: -1, invalid: -1, mend: -1, calm: -1, isolate: -1, healFrom: -1, drain: -1, undrain: -1, unselect: -1, reselect: -1, alt: -1}
	if n < 8 {
		return e
	}
	e.drain = 1 + g.r.IntN(n/3)
	e.undrain = e.drain + 5
	if g.on.Dependencies {
		e.alt = e.drain + 2 // no draw of its own: the rest of the script stays as it was
	}
	if g.on.Rejoin {
		e.unjoin = 1 + g.r.IntN(n/4)
		e.rejoin = e.unjoin + 4
	}
	if g.on.Migration {
		e.migrate = n/4 + g.r.IntN(n/2)
	}
	if g.on.Policies {
		e.invalid = g.r.IntN(n / 2)
		e.mend = e.invalid + 3
		// The policy for every Deployment goes, and with it the only policy of some:
		// their copies stay, no longer managed.
		e.unselect = n/4 + g.r.IntN(n/3)
		e.reselect = e.unselect + 6
	}
	if g.on.Outage && n >= 16 {
		// Contact returns once the cluster monitor has counted every cluster lost (three
		// failed probes, 10s apart, by default), one cluster a step.
		e.isolate = e.rejoin + 8 + g.r.IntN(max(1, n/3-8))
		e.calm, e.healFrom = e.isolate-6, e.isolate+6
	}
	return e
}

// episode returns the events of the episodes at step i.
func (g *generator) episode(ep episodes, i int) []Event {
	var out []Event
	if (i == ep.drain || i == ep.undrain) && !g.isolated {
		if e, ok := g.drainEpisode(i == ep.drain); ok {
			out = append(out, e)
		}
	}
	if i == ep.alt {
		out = append(out, g.altSecretEpisode()...)
	}
	switch i {
	case ep.unjoin:
		if len(g.clusters) > 3 {
			out = append(out, g.unjoin(g.r.IntN(len(g.clusters))))
		}
	case ep.calm:
		// The fleet settles before the outage: no partition and no drain left.
		for _, c := range sortedKeys(g.partitioned) {
			out = append(out, Event{Op: OpHeal, Cluster: c})
		}
		for _, c := range sortedKeys(g.tainted) {
			out = append(out, Event{Op: OpTaint, Cluster: c, Value: 0})
		}
		// Nor latency: in deterministic mode a slow member's calls move the clock, and the
		// outage's clusters would not be lost and back within the disruption window.
		for _, c := range g.clusters {
			out = append(out, Event{Op: OpLatency, Cluster: c, Duration: 0})
		}
		clear(g.partitioned)
		clear(g.tainted)
		g.isolated = true // no partition, drain, latency, clock jump or membership change from now on
	case ep.isolate:
		out = append(out, Event{Op: OpIsolate})
		for _, c := range g.clusters {
			g.partitioned[c] = true
		}
	case ep.healFrom - 1:
		out = append(out, Event{Op: OpClockJump, Duration: outageJump})
	}
	if i == ep.rejoin && len(g.unjoined) > 0 {
		out = append(out, g.rejoin())
	}
	if i == ep.migrate {
		for _, e := range g.migrating {
			e.Op = OpMigrate
			out = append(out, e)
			g.live[e.Kind] = append(g.live[e.Kind], e.Key)
		}
		g.migrating = nil
	}
	every := kindCPP + "/" + (federation.Key{Name: everyDeployment}).String()
	if i == ep.unselect {
		if e, ok := g.policies[every]; ok {
			delete(g.policies, every)
			g.deleted = &e
			out = append(out, Event{Op: OpPolicyDelete, Kind: e.Kind, Key: e.Key})
		}
	} else if i == ep.reselect && g.deleted != nil {
		out = append(out, g.policy(g.deleted.Kind, g.deleted.Key))
		g.deleted = nil
	}
	if i == ep.invalid {
		if e, ok := g.somePolicy(); ok {
			g.broken = &e
			e.Op = OpPolicyInvalid
			out = append(out, e)
		}
	}
	if i == ep.mend && g.broken != nil {
		if e, live := g.policies[g.broken.Kind+"/"+g.broken.Key.String()]; live {
			out = append(out, e) // as it was before
		}
		g.broken = nil
	}
	if ep.healFrom >= 0 && i >= ep.healFrom && g.isolated {
		// Contact returns cluster by cluster.
		if names := sortedKeys(g.partitioned); len(names) > 0 {
			out = append(out, Event{Op: OpHeal, Cluster: names[0]})
			delete(g.partitioned, names[0])
		}
		if len(g.partitioned) == 0 {
			g.isolated = false
		}
	}
	return out
}

// altSecretEpisode points the pods of a FederatedDeployment that propagates its
// dependencies at its set's other Secret (pointAtAltSecret) in every cluster but the first:
// each cluster's dependencies then follow its own render, not the template. A random
// override edit does that too, but too seldom for a small soak to see it. It draws nothing
// from the seed's source.
func (g *generator) altSecretEpisode() []Event {
	kind := federation.DeploymentType.Federated.Kind
	for _, key := range g.live[kind] {
		deps := g.deps[key]
		if deps == 0 {
			continue
		}
		var out []Event
		for _, c := range g.clusters[1:] {
			out = append(out, Event{Op: OpEditOverride, Kind: kind, Key: key, Cluster: c, Value: 1, Deps: deps})
		}
		return out
	}
	return nil
}

// drainEpisode drains a cluster that is not drained (on), or ends the drain it began.
func (g *generator) drainEpisode(on bool) (Event, bool) {
	if !on {
		c := g.drained
		g.drained = ""
		if c == "" || !g.tainted[c] {
			return Event{}, false
		}
		delete(g.tainted, c)
		return Event{Op: OpTaint, Cluster: c, Value: 0}, true
	}
	c := g.cluster()
	if g.tainted[c] {
		return Event{}, false
	}
	g.tainted[c], g.drained = true, c
	return Event{Op: OpTaint, Cluster: c, Value: 1}, true
}

// somePolicy picks a live policy, as last written.
func (g *generator) somePolicy() (Event, bool) {
	names := sortedKeys(g.policies)
	if len(names) == 0 {
		return Event{}, false
	}
	return g.policies[names[g.r.IntN(len(names))]], true
}

// feature is a random event of the features: a policy or a native object written or
// deleted, a member that becomes slow, an object of someone else's appearing in a member.
func (g *generator) feature() (Event, bool) {
	switch roll := g.r.IntN(10); {
	case roll < 4 && g.on.Policies:
		return g.policyEvent()
	case roll < 6 && g.on.Dependencies:
		ns := plainNamespaces(g.cfg.Objects)
		k := 1 + int64(g.r.IntN(int(depSets(g.cfg.Objects))))
		cm, secret, alt, claim := depNames(k)
		kinds := []struct{ kind, name string }{{"ConfigMap", cm}, {"Secret", secret}, {"Secret", alt}, {"PersistentVolumeClaim", claim}}
		d := kinds[g.r.IntN(len(kinds))]
		e := Event{Op: OpNative, Kind: d.kind, Key: federation.Key{Namespace: ns[g.r.IntN(len(ns))], Name: d.name}, Value: int64(g.r.IntN(1000))}
		if d.kind == "PersistentVolumeClaim" && g.r.IntN(2) == 0 {
			e.Op, e.Value = OpNativeDelete, 0 // the user deletes a claim (and may make it again later)
		}
		return e, true
	case roll < 8 && g.on.AppFailover && !g.isolated:
		d := time.Duration(0)
		if g.r.IntN(2) == 0 {
			d = time.Duration(2+g.r.IntN(3)) * time.Minute
		}
		return Event{Op: OpSlow, Cluster: g.cluster(), Duration: d}, true
	case roll < 10 && g.on.Lookalikes:
		keys := g.live[federation.DeploymentType.Federated.Kind]
		if len(keys) == 0 {
			return Event{}, false
		}
		return Event{Op: OpLookalike, Kind: "Deployment", Key: keys[g.r.IntN(len(keys))], Cluster: g.cluster()}, true
	}
	return Event{}, false
}

// policyEvent writes, breaks or deletes a policy, or writes or deletes a native Deployment.
func (g *generator) policyEvent() (Event, bool) {
	switch roll := g.r.IntN(10); {
	case roll < 3:
		kind, key := kindPP, federation.Key{Namespace: plainNamespaces(g.cfg.Objects)[g.r.IntN(len(plainNamespaces(g.cfg.Objects)))], Name: fmt.Sprintf("pp-%d", g.r.IntN(3))}
		if g.r.IntN(3) == 0 {
			kind, key = kindCPP, federation.Key{Name: fmt.Sprintf("cpp-%d", g.r.IntN(3))}
		}
		return g.policy(kind, key), true
	case roll < 4:
		e, ok := g.somePolicy()
		e.Op, e.Value = OpPolicyInvalid, int64(g.r.IntN(2))
		return e, ok
	case roll < 5:
		e, ok := g.somePolicy()
		if ok {
			delete(g.policies, e.Kind+"/"+e.Key.String())
		}
		return Event{Op: OpPolicyDelete, Kind: e.Kind, Key: e.Key}, ok
	case roll < 8 || len(g.natives) == 0:
		if len(g.natives) > 0 && g.r.IntN(2) == 0 {
			e := g.natives[g.r.IntN(len(g.natives))]
			e.Value = int64(g.r.IntN(1000))
			return e, true
		}
		return g.native(), true
	}
	i := g.r.IntN(len(g.natives))
	e := g.natives[i]
	g.natives = slices.Delete(g.natives, i, i+1)
	return Event{Op: OpNativeDelete, Kind: "Deployment", Key: e.Key}, true
}
