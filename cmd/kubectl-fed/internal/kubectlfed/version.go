package kubectlfed

import (
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

var leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

func versionCommand(g *globals) *cobra.Command {
	var namespace string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the running control plane's",
		Long: `version prints this plugin's version, then the version of each fedkit-controller-manager
replica that holds a Lease on the host: every Lease a replica writes (its leader election
Lease, with --shards its shard Leases and its presence Lease) carries its version in the
annotation federation.k8s.io/controlplane-version, so the table shows which version leads,
or holds which shard, while an upgrade rolls. A control plane run without leader election
or --shards writes no Lease and is not shown. It writes nothing.`,
		Example: "  kubectl fed version\n  kubectl fed version --lease-namespace platform",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "Plugin version:", pluginVersion(g.opts.Version))
			_, host, err := g.host()
			if err != nil {
				return err
			}
			list, err := host.List(cmd.Context(), leasesGVR, namespace, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("control plane: listing the Leases in %s: %w", namespace, err)
			}
			var leases []coordinationv1.Lease
			for _, u := range list.Items {
				if _, ok := u.GetAnnotations()[federation.ControlPlaneVersionAnnotation]; !ok {
					continue
				}
				var l coordinationv1.Lease
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &l); err != nil {
					return fmt.Errorf("decoding the Lease %s/%s: %w", u.GetNamespace(), u.GetName(), err)
				}
				leases = append(leases, l)
			}
			return printControlPlane(out, namespace, leases, g.opts.Clock.Now())
		},
	}
	cmd.Flags().StringVar(&namespace, "lease-namespace", kube.DefaultNamespace, "the namespace of the control plane's Leases (its --leader-elect-resource-namespace)")
	return cmd
}

// pluginVersion is linked (what cmd/kubectl-fed's linker flag set), else the main module's
// version in the build information, else "(devel)".
func pluginVersion(linked string) string {
	if linked != "" {
		return linked
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// printControlPlane prints the versions the Leases carry, one row per Lease, by name: pure,
// so its tests need no server.
func printControlPlane(out io.Writer, namespace string, leases []coordinationv1.Lease, now time.Time) error {
	if len(leases) == 0 {
		_, err := fmt.Fprintf(out, "Control plane version: unknown: no Lease in %s carries %s (no fedkit-controller-manager runs with leader election or --shards there; see --lease-namespace)\n",
			namespace, federation.ControlPlaneVersionAnnotation)
		return err
	}
	// The summary names the versions of the Leases held now; a released or expired Lease
	// still says who held it last, in its row.
	versions := map[string]bool{}
	for _, l := range leases {
		if holderOf(l) != released && !expired(l, now) {
			versions[l.Annotations[federation.ControlPlaneVersionAnnotation]] = true
		}
	}
	summary := strings.Join(slices.Sorted(maps.Keys(versions)), ", ")
	if summary == "" {
		summary = "unknown: no Lease below is held now (is fedkit-controller-manager running?)"
	}
	fmt.Fprintln(out, "Control plane version:", summary)
	slices.SortFunc(leases, func(a, b coordinationv1.Lease) int { return strings.Compare(a.Name, b.Name) })
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "LEASE\tHOLDER\tVERSION\tRENEWED")
	for _, l := range leases {
		fmt.Fprintf(w, "%s/%s\t%s\t%s\t%s\n", l.Namespace, l.Name, holderOf(l), l.Annotations[federation.ControlPlaneVersionAnnotation], renewed(l, now))
	}
	return w.Flush()
}

// released is the holder of a Lease nobody holds.
const released = "(released)"

// holderOf is the Lease's holder, released when it has none.
func holderOf(l coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return released
	}
	return *l.Spec.HolderIdentity
}

// expired reports whether the holder last renewed the Lease longer ago than its duration
// (it is gone, or cut off from the host).
func expired(l coordinationv1.Lease, now time.Time) bool {
	return l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
		now.Sub(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}

// renewed says how long ago the Lease was renewed, "(expired)" added when it expired.
func renewed(l coordinationv1.Lease, now time.Time) string {
	if l.Spec.RenewTime == nil {
		return "-"
	}
	s := duration.HumanDuration(now.Sub(l.Spec.RenewTime.Time)) + " ago"
	if expired(l, now) {
		s += " (expired)"
	}
	return s
}
