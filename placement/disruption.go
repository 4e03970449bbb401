package placement

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// A fleet disruption: the control plane's own outage, not the fleet's.
//
// When the control plane loses contact with every cluster, or with a large share of the
// fleet within a short window, the likeliest cause is on its side (its network, its proxy,
// its credentials), not that many clusters failed together. Moving replicas then would only
// churn: there is nowhere better to move them, nothing can be written where they are, and
// when contact returns every cluster would be drained at once. Kubernetes' node lifecycle
// controller follows the same reasoning for nodes: in a full disruption it stops evicting
// and takes its NoExecute taints back.
//
// A disruption ends gently: the clusters that came back within the window still count with
// the lost ones, so while contact returns cluster by cluster the fleet stays disrupted, and
// a cluster still lost is an outage of its own only once enough of the others have been back
// for the window.
//
// [FleetDisruption] is the rule, one pure function that the cluster monitor (package status:
// no NoExecute taint while the fleet is disrupted), the scheduler (no eviction for readiness
// meanwhile) and preview all call.

// Defaults of [DisruptionOptions].
const (
	// DefaultDisruptionThreshold is the share of the fleet that, gone not Ready within the
	// window, makes a disruption: the node lifecycle controller's unhealthy-zone-threshold.
	DefaultDisruptionThreshold = 0.55
	// DefaultDisruptionWindow is how close together those clusters must have gone not Ready:
	// the cluster monitor's default EvictionDelay, so that no cluster of a disruption is
	// tainted NoExecute before the disruption is recognised.
	DefaultDisruptionWindow = 5 * time.Minute
	// MinDisruptedClusters is how many clusters a disruption by share needs at least (the
	// node lifecycle controller's "more than two"): two of three clusters lost together are
	// still two outages. A fleet whose every cluster is lost is disrupted whatever its size.
	MinDisruptedClusters = 3
)

// ErrInvalidDisruptionOptions is returned by [DisruptionOptions.Validate] for a threshold
// outside [0, 1] or a negative window.
var ErrInvalidDisruptionOptions = errors.New("placement: invalid disruption options")

// DisruptionOptions say when a fleet counts as disrupted. The zero value is the default: a
// disruption when every cluster is lost, or when at least 55% of the fleet (and at least
// three clusters) were lost within five minutes of one another, the clusters back within the
// last five minutes counted with them. The cluster monitor and the scheduler must be given
// the same options (package controlplane gives both the same).
type DisruptionOptions struct {
	// Threshold is the share of the fleet (above 0, at most 1) that, lost within Window,
	// is a disruption. 1 means only a fleet whose every cluster is lost. 0:
	// [DefaultDisruptionThreshold].
	Threshold float64
	// Window is how close together the lost clusters' Ready conditions must have turned
	// False for a share of the fleet to count (every cluster lost counts whenever they were
	// lost), and how long a cluster that came back still counts with them. 0:
	// [DefaultDisruptionWindow].
	Window time.Duration
	// Disabled turns the rule off: every lost cluster is an outage of its own, as if the
	// control plane could not be the cause.
	Disabled bool
}

// Validate reports a threshold outside [0, 1] or a negative window, wrapping
// [ErrInvalidDisruptionOptions].
func (o DisruptionOptions) Validate() error {
	if math.IsNaN(o.Threshold) || o.Threshold < 0 || o.Threshold > 1 {
		return fmt.Errorf("%w: Threshold must be between 0 and 1, got %v", ErrInvalidDisruptionOptions, o.Threshold)
	}
	if o.Window < 0 {
		return fmt.Errorf("%w: Window must not be negative, got %s", ErrInvalidDisruptionOptions, o.Window)
	}
	return nil
}

// withDefaults returns o with its zero fields at their defaults.
func (o DisruptionOptions) withDefaults() DisruptionOptions {
	if o.Threshold == 0 {
		o.Threshold = DefaultDisruptionThreshold
	}
	if o.Window == 0 {
		o.Window = DefaultDisruptionWindow
	}
	return o
}

// Disruption is the state of a fleet as [FleetDisruption] judged it.
type Disruption struct {
	// Disrupted reports whether the fleet is disrupted now.
	Disrupted bool
	// Lost are the clusters whose Ready condition is False, sorted by name.
	Lost []string
	// Back are the clusters back from not being Ready within Window before now (their
	// Failover condition Recovered since then), sorted by name: while they count, the fleet
	// is still coming back from what took them.
	Back []string
	// Together counts the lost clusters that went not Ready within Window of one another
	// (the largest such group, the latest of equal ones), and Since is the earliest of their
	// transitions.
	Together int
	Since    time.Time
	// Fleet counts the clusters judged: every Cluster not being deleted, but the silent.
	Fleet int
	// Silent are the clusters Ready but not reached within Window before now (their
	// status.lastHeartbeatTime is older), sorted by name: the monitor has not judged them
	// lately (it was down, or cut off, or has not come to them yet), so their Ready says
	// nothing about now. They are not counted in the fleet until it reaches them again.
	Silent []string
	// Message says why, for a condition or an event ("every cluster (4) lost", "6 of 10
	// clusters lost within 5m0s of one another, 2 of them back within 5m0s (at least 55% and
	// 3)"); "" when the fleet is not disrupted.
	Message string
}

// FleetDisruption judges at now whether the fleet of clusters is disrupted (see
// [DisruptionOptions]). A cluster is lost when its Ready condition is False; one with Ready
// Unknown (not judged yet, a new cluster) counts in the fleet but is not lost. A cluster is
// back when it is Ready and its Failover condition, which the cluster monitor sets when a
// cluster stops being Ready, turned False (Recovered) within Window before now. A Cluster
// being deleted is not counted, nor is one silent: Ready, but not reached by the monitor
// within Window (its status.lastHeartbeatTime is older). After the control plane's own outage
// the monitor judges the clusters one by one; until it has reached the others, their Ready
// is older than the outage, and the first clusters it finds lost are judged among those it
// has seen since.
//
// The fleet is disrupted while some cluster is lost and either every cluster is lost or back,
// or the largest group of lost clusters whose Ready conditions turned False within Window of
// one another (by their lastTransitionTime), with the clusters back, holds at least Threshold
// of the fleet and at least [MinDisruptedClusters]. Counting the clusters back is what makes
// a disruption end gently: when contact returns cluster by cluster, the fleet stays disrupted
// until enough of them have been back for Window, and only then is a cluster still lost an
// outage of its own. It is pure: the same clusters and now give the same answer.
func FleetDisruption(clusters []federation.Cluster, now time.Time, o DisruptionOptions) Disruption {
	o = o.withDefaults()
	var d Disruption
	type lost struct {
		name string
		at   time.Time
	}
	var all []lost
	for i := range clusters {
		c := &clusters[i]
		if c.DeletionTimestamp != nil {
			continue
		}
		r := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady)
		if r != nil && r.Status == metav1.ConditionTrue && silent(c, now, o.Window) {
			d.Silent = append(d.Silent, c.Name)
			continue
		}
		d.Fleet++
		switch {
		case r == nil:
		case r.Status == metav1.ConditionFalse:
			all = append(all, lost{c.Name, r.LastTransitionTime.Time})
		case r.Status == metav1.ConditionTrue && backWithin(c, now, o.Window):
			d.Back = append(d.Back, c.Name)
		}
	}
	if len(all) == 0 {
		return d
	}
	slices.Sort(d.Back)
	slices.Sort(d.Silent)
	slices.SortFunc(all, func(a, b lost) int {
		if n := a.at.Compare(b.at); n != 0 {
			return n
		}
		return strings.Compare(a.name, b.name)
	})
	// The largest group within Window: a window slid over the transitions in time order.
	from, to := 0, 0
	for i, j := 0, 0; j < len(all); j++ {
		for all[j].at.Sub(all[i].at) > o.Window {
			i++
		}
		if j-i >= to-from {
			from, to = i, j+1
		}
	}
	for _, l := range all {
		d.Lost = append(d.Lost, l.name)
	}
	slices.Sort(d.Lost)
	d.Together, d.Since = to-from, all[from].at
	counted := d.Together + len(d.Back)
	need := max(int(math.Ceil(o.Threshold*float64(d.Fleet)-1e-9)), MinDisruptedClusters)
	back := ""
	if len(d.Back) > 0 {
		back = fmt.Sprintf(", %d of them back within %s", len(d.Back), o.Window)
	}
	switch {
	case o.Disabled:
	case len(all)+len(d.Back) == d.Fleet:
		d.Disrupted = true
		d.Message = fmt.Sprintf("every cluster (%d) lost%s", d.Fleet, back)
	case counted >= need:
		d.Disrupted = true
		d.Message = fmt.Sprintf("%d of %d clusters lost within %s of one another%s (at least %d%% and %d)",
			counted, d.Fleet, o.Window, back, int(math.Round(o.Threshold*100)), MinDisruptedClusters)
	}
	if d.Disrupted && len(d.Silent) > 0 {
		d.Message += fmt.Sprintf("; %d more Ready but not heard from within %s", len(d.Silent), o.Window)
	}
	return d
}

// silent reports whether the monitor last reached c (status.lastHeartbeatTime) longer than
// window before now. A cluster without a heartbeat (not reached yet, or written by hand) is
// not silent: its Ready condition is all there is.
func silent(c *federation.Cluster, now time.Time, window time.Duration) bool {
	hb := c.Status.LastHeartbeatTime
	return hb != nil && now.Sub(hb.Time) > window
}

// backWithin reports whether c came back from not being Ready within window before now: its
// Failover condition, which the cluster monitor writes when a cluster stops being Ready, is
// False (Recovered) since then. A cluster that has always been Ready has none: a new fleet
// turning Ready is no return.
func backWithin(c *federation.Cluster, now time.Time, window time.Duration) bool {
	f := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionFailover)
	return f != nil && f.Status == metav1.ConditionFalse && now.Sub(f.LastTransitionTime.Time) < window
}

// Includes reports whether the fleet is disrupted and cluster is one of its lost clusters.
func (d Disruption) Includes(cluster string) bool {
	return d.Disrupted && slices.Contains(d.Lost, cluster)
}
