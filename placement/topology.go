package placement

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// Topology keys with a meaning of their own in spread constraints. Any other key is a
// Cluster label key.
const (
	KeyRegion   = "region"
	KeyZone     = "zone"
	KeyProvider = "provider"
)

// Domain returns the cluster's failure domain for a topology key: its region, zone or
// provider for "region", "zone" and "provider" (and for the well-known labels
// topology.kubernetes.io/region, topology.kubernetes.io/zone and federation.k8s.io/provider),
// otherwise the value of the label named key. A cluster in several zones is a domain of its
// own: its sorted zones joined by ",". "" means the cluster has no value for the key.
//
// Evaluate puts it in [Candidate].Domain for the constraint that spreads replicas, and the
// scheduler divides replicas over those groups, so replicas are spread over the same groups as
// clusters. Embedders who build a scheduler.Request by hand use it the same way.
func Domain(c *federation.Cluster, key string) string {
	switch key {
	case KeyRegion, federation.RegionLabel:
		return c.Region()
	case KeyProvider, federation.ProviderLabel:
		return c.Provider()
	case KeyZone, federation.ZoneLabel:
		z := c.Zones()
		if len(z) <= 1 {
			return strings.Join(z, "")
		}
		slices.Sort(z)
		return strings.Join(slices.Compact(z), ",")
	}
	return c.Labels[key]
}

// notReadyTaint returns the taint Select applies to a cluster whose Ready condition is not
// True, when the cluster monitor has not set one itself: the monitor may lag, and a
// cluster that is not known to be ready must not get new work unless the placement says so.
func notReadyTaint(c *federation.Cluster) (corev1.Taint, string, bool) {
	cond := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady)
	if cond != nil && cond.Status == metav1.ConditionTrue {
		return corev1.Taint{}, "", false
	}
	for _, t := range c.Spec.Taints {
		if t.Key == federation.TaintClusterNotReady {
			return corev1.Taint{}, "", false // the monitor's own taint decides
		}
	}
	why := "no Ready condition"
	if cond != nil {
		why = "Ready condition is " + string(cond.Status)
		if cond.Reason != "" {
			why += " (" + cond.Reason + ")"
		}
	}
	t := corev1.Taint{Key: federation.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}
	if cond != nil && !cond.LastTransitionTime.IsZero() {
		// tolerationSeconds counts from when the cluster stopped being Ready.
		added := cond.LastTransitionTime
		t.TimeAdded = &added
	}
	return t, why, true
}

// tolerated reports whether one of ts tolerates taint, tolerationSeconds aside.
func tolerated(ts []corev1.Toleration, taint *corev1.Taint) bool {
	return matching(ts, taint) != nil
}

// matching returns the first of ts that tolerates taint, or nil. Operators are Equal (or "")
// and Exists, the ones federation.ValidatePlacement allows.
func matching(ts []corev1.Toleration, taint *corev1.Taint) *corev1.Toleration {
	for i := range ts {
		t := &ts[i]
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return t
		case "", corev1.TolerationOpEqual:
			if t.Value == taint.Value {
				return t
			}
		}
	}
	return nil
}

// taintString renders a taint as key[=value]:Effect.
func taintString(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}
