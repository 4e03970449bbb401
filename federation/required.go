package federation

import (
	"slices"
	"strings"
)

// RequiredClusters returns the clusters [RequiredByClustersAnnotation] lists in annotations,
// sorted, without empty or repeated names; nil when there are none. Placement adds them to
// the clusters a placement selects (placement.Require).
func RequiredClusters(annotations map[string]string) []string {
	return clusterList(annotations[RequiredByClustersAnnotation])
}

// FormatRequiredClusters is the value of [RequiredByClustersAnnotation] for clusters: sorted,
// comma separated, without repeats.
func FormatRequiredClusters(clusters []string) string {
	return formatClusterList(clusters)
}

// RequiredKinds returns the kinds [RequiredByKindsAnnotation] lists in annotations, sorted,
// without empty or repeated names; nil when there are none.
func RequiredKinds(annotations map[string]string) []string {
	return clusterList(annotations[RequiredByKindsAnnotation])
}

// FormatRequiredKinds is the value of [RequiredByKindsAnnotation] for kinds: sorted, comma
// separated, without repeats.
func FormatRequiredKinds(kinds []string) string {
	return formatClusterList(kinds)
}

// ReleaseClusters returns the clusters [ReleaseClustersAnnotation] lists in annotations,
// sorted, without empty or repeated names; nil when there are none. Sync releases the
// object's copy in them, rather than delete it, when the object leaves them.
func ReleaseClusters(annotations map[string]string) []string {
	return clusterList(annotations[ReleaseClustersAnnotation])
}

// FormatReleaseClusters is the value of [ReleaseClustersAnnotation] for clusters: sorted,
// comma separated, without repeats.
func FormatReleaseClusters(clusters []string) string {
	return formatClusterList(clusters)
}

// clusterList parses a comma separated list of cluster names: sorted, without empty or
// repeated names; nil when there are none.
func clusterList(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// formatClusterList is clusters sorted, comma separated, without repeats.
func formatClusterList(clusters []string) string {
	c := slices.Clone(clusters)
	slices.Sort(c)
	return strings.Join(slices.Compact(c), ",")
}
