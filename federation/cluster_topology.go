package federation

import "slices"

// The topology of a Cluster has three sources, in this order: what its spec says (the
// operator's word), what its status says (the cluster monitor discovers regions and zones from
// the member's Node labels), and the well-known labels on the Cluster object. Placement
// (affinity, spread) and DNS (region and zone names) read it through these methods, so they
// always agree.

// Region returns the cluster's region: spec.region, else status.region, else its
// topology.kubernetes.io/region label; "" when none is known.
func (c *Cluster) Region() string {
	switch {
	case c.Spec.Region != "":
		return c.Spec.Region
	case c.Status.Region != "":
		return c.Status.Region
	}
	return c.Labels[RegionLabel]
}

// Zones returns the cluster's zones: spec.zones, else status.zones, else its
// topology.kubernetes.io/zone label; nil when none is known. The slice is the caller's own.
func (c *Cluster) Zones() []string {
	switch {
	case len(c.Spec.Zones) > 0:
		return slices.Clone(c.Spec.Zones)
	case len(c.Status.Zones) > 0:
		return slices.Clone(c.Status.Zones)
	}
	if z := c.Labels[ZoneLabel]; z != "" {
		return []string{z}
	}
	return nil
}

// Provider returns the cluster's cloud provider: spec.provider, else its
// federation.k8s.io/provider label; "" when none is known.
func (c *Cluster) Provider() string {
	if c.Spec.Provider != "" {
		return c.Spec.Provider
	}
	return c.Labels[ProviderLabel]
}
