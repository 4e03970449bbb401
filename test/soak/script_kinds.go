package soak

import (
	"math/rand/v2"
	"slices"

	"github.com/fedkit/fedkit/federation"
)

// The configured kind's part of the script (Features.Kinds). It draws from a source of its
// own, seeded by the seed, so the rest of the script is the same with or without it.
const (
	OpEnable         Op = "enable"          // Value: the rule set; the FederatedTypeConfig (and the FederatedWidget CRD) written as `kubectl fed enable` writes them
	OpDisable        Op = "disable"         // the FederatedTypeConfig deleted, as `kubectl fed disable` does
	OpWidget         Op = "widget"          // Key, Value, Deps, Placement, Cluster and Total (an override): a FederatedWidget created or its spec replaced
	OpWidgetOverride Op = "widget-override" // Key, Cluster, Value (0 removes it)
	OpWidgetDelete   Op = "widget-delete"   // Key
)

// kindsEpisodes are the steps of the configured kind's episodes: enabled, its rules made
// stricter, made not to compile and mended, made to fail on some widgets and mended, disabled
// and enabled again. -1: not in this soak.
type kindsEpisodes struct {
	enable, strict, noParse, mendParse, failing, mendFailing, disable, reenable int
}

// failingSteps is how long rules that fail on every widget stay: the collector judges with
// them from the first round whose read of the configuration succeeds, and its status writes
// may fail for a round or two more (RuleInvalidRules counts steps in a row).
const failingSteps = 4

// kindsGen generates the configured kind's events.
type kindsGen struct {
	r    *rand.Rand
	g    *generator // the clusters as the user knows them (read only)
	on   bool
	ep   kindsEpisodes
	live []federation.Key
	gone []federation.Key
	seq  int
}

func newKindsGen(cfg Config, g *generator) *kindsGen {
	k := &kindsGen{r: rand.New(rand.NewPCG(cfg.Seed, 0x6b696e64)), g: g, on: g.on.Kinds && !cfg.Run}
	k.ep = kindsEpisodes{enable: -1, strict: -1, noParse: -1, mendParse: -1, failing: -1, mendFailing: -1, disable: -1, reenable: -1}
	n := cfg.Steps
	if !k.on || n < 8 {
		return k
	}
	k.ep.enable = 1 + k.r.IntN(2)
	if n < 16 {
		return k
	}
	k.ep.strict = k.ep.enable + 2
	k.ep.noParse = max(k.ep.strict+1, n/3)
	k.ep.mendParse = k.ep.noParse + 3
	k.ep.failing = max(k.ep.mendParse+1, n/2)
	k.ep.mendFailing = k.ep.failing + failingSteps
	k.ep.disable = max(k.ep.mendFailing+1, n*2/3)
	k.ep.reenable = k.ep.disable + 3
	if k.ep.reenable >= n {
		k.ep.failing, k.ep.mendFailing = -1, -1
		k.ep.disable, k.ep.reenable = k.ep.mendParse+1, k.ep.mendParse+4
	}
	return k
}

// step returns the configured kind's events of step i: its episode's, then a widget event or
// two once the kind was first enabled.
func (k *kindsGen) step(i int) []Event {
	if !k.on || k.ep.enable < 0 || i < k.ep.enable {
		return nil
	}
	var out []Event
	set := map[int]int64{k.ep.enable: rulesBase, k.ep.strict: rulesStrict, k.ep.noParse: rulesNoParse, k.ep.mendParse: rulesStrict,
		k.ep.failing: rulesFailing, k.ep.mendFailing: rulesStrict, k.ep.reenable: rulesStrict}
	switch {
	case i == k.ep.disable:
		out = append(out, Event{Op: OpDisable})
	case slices.Contains([]int{k.ep.enable, k.ep.strict, k.ep.noParse, k.ep.mendParse, k.ep.failing, k.ep.mendFailing, k.ep.reenable}, i):
		out = append(out, Event{Op: OpEnable, Value: set[i]})
	}
	if i == k.ep.enable {
		// The widgets' own ConfigMaps, which no other workload refers to.
		for _, ns := range plainNamespaces(k.g.cfg.Objects) {
			for set := int64(1); set <= paintSets; set++ {
				out = append(out, Event{Op: OpNative, Kind: "ConfigMap", Key: federation.Key{Namespace: ns, Name: paintName(set)}, Value: int64(k.r.IntN(1000))})
			}
		}
		for range max(6, k.g.cfg.Objects/5) {
			out = append(out, k.create())
		}
		return out
	}
	if k.invalid(i) {
		// The user leaves the widgets alone while the rules are wrong: what runs in the
		// members must stay as it is (RuleInvalidRules).
		return out
	}
	for range 1 + k.r.IntN(2) {
		if e, ok := k.next(); ok {
			out = append(out, e)
		}
	}
	return out
}

// next is a random widget event: a widget created (or a deleted name back), its spec
// replaced, an override edited, a widget deleted.
func (k *kindsGen) next() (Event, bool) {
	roll := k.r.IntN(10)
	if roll < 2 || len(k.live) < 4 {
		return k.create(), true
	}
	key := k.live[k.r.IntN(len(k.live))]
	switch {
	case roll < 6:
		e := k.widget(key)
		return e, true
	case roll < 9:
		e := Event{Op: OpWidgetOverride, Kind: widgetKind, Key: key, Cluster: k.cluster(), Value: int64(k.r.IntN(3))}
		return e, true
	}
	k.live = slices.DeleteFunc(k.live, func(x federation.Key) bool { return x == key })
	k.gone = append(k.gone, key)
	return Event{Op: OpWidgetDelete, Kind: widgetKind, Key: key}, true
}

// create creates a widget, or brings a deleted name back (one time in four).
func (k *kindsGen) create() Event {
	var key federation.Key
	if len(k.gone) > 0 && k.r.IntN(4) == 0 {
		i := k.r.IntN(len(k.gone))
		key = k.gone[i]
		k.gone = slices.Delete(k.gone, i, i+1)
	} else {
		k.seq++
		ns := plainNamespaces(k.g.cfg.Objects)
		key = federation.Key{Namespace: ns[k.seq%len(ns)], Name: widgetName(k.seq)}
	}
	k.live = append(k.live, key)
	return k.widget(key)
}

// widget is a FederatedWidget's whole spec: a count and color, half the time the ConfigMap
// of a dependency set, a placement, a third of the time an override of one cluster.
func (k *kindsGen) widget(key federation.Key) Event {
	e := Event{Op: OpWidget, Kind: widgetKind, Key: key, Value: int64(1 + k.r.IntN(1000))}
	if k.r.IntN(3) > 0 {
		e.Deps = 1 + int64(k.r.IntN(paintSets))
	}
	switch k.r.IntN(3) {
	case 0:
		e.Placement = Placement{Selector: map[string]string{}}
	case 1:
		e.Placement = Placement{Selector: map[string]string{tierLabel: []string{"gold", "silver"}[k.r.IntN(2)]}}
	default:
		picked := slices.Clone(k.g.clusters)
		k.r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
		picked = picked[:min(len(picked), 1+k.r.IntN(3))]
		slices.Sort(picked)
		e.Placement = Placement{Clusters: picked}
	}
	if k.r.IntN(3) == 0 {
		e.Cluster, e.Total = k.cluster(), int64(1+k.r.IntN(2))
	}
	return e
}

func (k *kindsGen) cluster() string { return k.g.clusters[k.r.IntN(len(k.g.clusters))] }

// invalid reports whether the rules the script wrote last at step i do not compile or fail on
// some widgets.
func (k *kindsGen) invalid(i int) bool {
	return (k.ep.noParse >= 0 && i >= k.ep.noParse && i < k.ep.mendParse) || (k.ep.failing >= 0 && i >= k.ep.failing && i < k.ep.mendFailing)
}
