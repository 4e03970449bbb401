package kubectlfed

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fedkit/fedkit/federation"
)

// cordonCommand is cordon (on) or uncordon: the NoSchedule taint
// federation.TaintClusterUnschedulable on a Cluster.
func cordonCommand(g *globals, on bool) *cobra.Command {
	w := &writes{}
	use, short, long := "cordon", "Mark a cluster unschedulable: no new placements, what runs there stays",
		`cordon puts the NoSchedule taint `+federation.TaintClusterUnschedulable+` on a Cluster, as kubectl
cordon marks a node: placement sends no new object and the scheduler no new replica there,
while what runs there stays. Objects that tolerate the taint still go. uncordon removes it.`
	if !on {
		use, short = "uncordon", "Mark a cluster schedulable again (remove cordon's taint)"
	}
	cmd := &cobra.Command{
		Use:     use + " CLUSTER",
		Short:   short,
		Long:    long,
		Example: "  kubectl fed " + use + " eu\n  kubectl fed " + use + " eu --dry-run",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.begin(cmd); err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			cordon := corev1.Taint{Key: federation.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}
			change := func(taints []corev1.Taint) ([]corev1.Taint, error) {
				if on {
					return addTaint(taints, cordon, false, g.opts.Clock.Now())
				}
				return removeTaint(taints, taintChange{key: cordon.Key, effect: cordon.Effect}), nil
			}
			verb, unchanged := "cordoned", "already cordoned"
			if !on {
				verb, unchanged = "uncordoned", "already uncordoned"
			}
			return updateTaints(cmd, w, host, args[0], change, verb, unchanged)
		},
	}
	w.register(cmd)
	return cmd
}

func taintCommand(g *globals) *cobra.Command {
	w := &writes{}
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "taint CLUSTER KEY[=VALUE]:EFFECT ... | KEY[:EFFECT]-",
		Short: "Add or remove taints on a cluster, as kubectl taint does on a node",
		Long: `taint changes a Cluster's spec.taints with kubectl taint's syntax: KEY=VALUE:EFFECT or
KEY:EFFECT adds a taint (EFFECT: NoSchedule, PreferNoSchedule or NoExecute), KEY:EFFECT-
removes that taint and KEY- every taint with that key. A taint with the key and effect of one
already there is refused unless --overwrite. A NoExecute taint gets its timeAdded, from which
tolerationSeconds count. NoSchedule keeps new objects and replicas out; NoExecute moves what
runs there away, unless tolerated. The cluster monitor's own taints (` + federation.TaintClusterNotReady + `,
` + federation.TaintClusterUnreachable + `) are its to set and remove, and refused here.`,
		Example: `  kubectl fed taint eu dedicated=payments:NoSchedule
  kubectl fed taint eu maintenance:NoExecute --dry-run
  kubectl fed taint eu dedicated-`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.begin(cmd); err != nil {
				return err
			}
			changes, err := parseTaints(args[1:])
			if err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			change := func(taints []corev1.Taint) ([]corev1.Taint, error) {
				for _, c := range changes {
					if c.remove {
						before := len(taints)
						taints = removeTaint(taints, c)
						if len(taints) == before {
							return nil, fmt.Errorf("no taint %s", c)
						}
						continue
					}
					if taints, err = addTaint(taints, c.taint(), overwrite, g.opts.Clock.Now()); err != nil {
						return nil, err
					}
				}
				return taints, nil
			}
			return updateTaints(cmd, w, host, args[0], change, "tainted", "unchanged")
		},
	}
	w.register(cmd)
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace the value of a taint with the same key and effect")
	return cmd
}

// updateTaints reads the Cluster, changes its spec.taints and writes it locked on the
// resourceVersion read (again on a conflict: the cluster monitor writes taints too).
func updateTaints(cmd *cobra.Command, w *writes, host federation.ClusterClient, cluster string,
	change func([]corev1.Taint) ([]corev1.Taint, error), verb, unchanged string) error {
	return w.update(cmd.Context(), host, federation.ClusterGVR, "", cluster, func(obj *unstructured.Unstructured) (bool, error) {
		c, err := federation.ClusterFromUnstructured(obj)
		if err != nil {
			return false, err
		}
		next, err := change(slices.Clone(c.Spec.Taints))
		if err != nil || slices.EqualFunc(next, c.Spec.Taints, func(a, b corev1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value }) {
			return false, err
		}
		list := make([]any, len(next))
		for i := range next {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&next[i])
			if err != nil {
				return false, err
			}
			list[i] = m
		}
		if len(list) == 0 {
			unstructured.RemoveNestedField(obj.Object, "spec", "taints")
			return true, nil
		}
		return true, unstructured.SetNestedSlice(obj.Object, list, "spec", "taints")
	}, verb, unchanged)
}

// taintChange is one argument of taint: a taint to add, or one to remove (effect "": every
// effect of the key).
type taintChange struct {
	key, value string
	effect     corev1.TaintEffect
	remove     bool
}

func (c taintChange) taint() corev1.Taint {
	return corev1.Taint{Key: c.key, Value: c.value, Effect: c.effect}
}

func (c taintChange) String() string {
	s := c.key
	if c.effect != "" {
		s += ":" + string(c.effect)
	}
	return s
}

// parseTaints reads taint's arguments, as kubectl taint does.
func parseTaints(args []string) ([]taintChange, error) {
	var out []taintChange
	for _, a := range args {
		c, err := parseTaint(a)
		if err != nil {
			return nil, fmt.Errorf("taint %q: %w", a, err)
		}
		if c.key == federation.TaintClusterNotReady || c.key == federation.TaintClusterUnreachable {
			return nil, fmt.Errorf("taint %q: the cluster monitor sets and removes %s itself", a, c.key)
		}
		out = append(out, c)
	}
	return out, nil
}

func parseTaint(a string) (taintChange, error) {
	var c taintChange
	spec, remove := strings.CutSuffix(a, "-")
	c.remove = remove
	kv, effect, hasEffect := strings.Cut(spec, ":")
	if hasEffect {
		c.effect = corev1.TaintEffect(effect)
		switch c.effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return c, fmt.Errorf("effect %q: want NoSchedule, PreferNoSchedule or NoExecute", effect)
		}
	} else if !remove {
		return c, fmt.Errorf("want KEY[=VALUE]:EFFECT, or KEY[:EFFECT]- to remove")
	}
	c.key, c.value, _ = strings.Cut(kv, "=")
	if remove && c.value != "" {
		return c, fmt.Errorf("a removal names KEY[:EFFECT]-, without a value")
	}
	if errs := validation.IsQualifiedName(c.key); len(errs) > 0 {
		return c, fmt.Errorf("key %q: %s", c.key, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(c.value); len(errs) > 0 {
		return c, fmt.Errorf("value %q: %s", c.value, strings.Join(errs, "; "))
	}
	return c, nil
}

// addTaint adds t, or replaces the value of the taint with its key and effect when
// overwrite (refused otherwise); a NoExecute taint gets timeAdded now.
func addTaint(taints []corev1.Taint, t corev1.Taint, overwrite bool, now time.Time) ([]corev1.Taint, error) {
	if t.Effect == corev1.TaintEffectNoExecute {
		at := metav1.NewTime(now.Truncate(1e9))
		t.TimeAdded = &at
	}
	for i := range taints {
		if !taints[i].MatchTaint(&t) {
			continue
		}
		if taints[i].Value == t.Value {
			return taints, nil
		}
		if !overwrite {
			return nil, fmt.Errorf("taint %s:%s has value %q already: give --overwrite to change it", t.Key, t.Effect, taints[i].Value)
		}
		t.TimeAdded = taints[i].TimeAdded
		taints[i] = t
		return taints, nil
	}
	return append(taints, t), nil
}

// removeTaint removes the taints of c's key (and effect, when it names one).
func removeTaint(taints []corev1.Taint, c taintChange) []corev1.Taint {
	return slices.DeleteFunc(taints, func(t corev1.Taint) bool {
		return t.Key == c.key && (c.effect == "" || t.Effect == c.effect)
	})
}
