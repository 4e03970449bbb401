package federation

import (
	"slices"
	"strings"
)

// RequiredClusters returns the clusters [RequiredByClustersAnnotation] lists in annotations,
// sorted, without empty or repeated names; nil when there are none. Placement adds them to
// the clusters a placement selects (placement.Require).
func RequiredClusters(annotations map[string]string) []string {
	v := annotations[RequiredByClustersAnnotation]
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

// FormatRequiredClusters is the value of [RequiredByClustersAnnotation] for clusters: sorted,
// comma separated, without repeats.
func FormatRequiredClusters(clusters []string) string {
	c := slices.Clone(clusters)
	slices.Sort(c)
	return strings.Join(slices.Compact(c), ",")
}
