package fake

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// servicesGVR is core/v1 Services, the resource the load-balancer simulation watches.
func servicesGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "services"}
}

// tickServicesLocked is the simulated cloud load-balancer controller: a Service of type
// LoadBalancer without an ingress gets the first free address of the pool; a Service that is
// no longer of that type loses its ingress, and the address returns to the pool.
func (c *Cluster) tickServicesLocked() {
	gvr := servicesGVR()
	stored := c.objects[gvr]
	keys := make([]objectKey, 0, len(stored))
	used := map[string]bool{}
	for k, svc := range stored {
		keys = append(keys, k)
		for _, ip := range ingressIPs(svc) {
			used[ip] = true
		}
	}
	slices.SortFunc(keys, compareKeys)
	pool := c.lbPoolLocked()
	for _, k := range keys {
		svc := stored[k]
		if svc.GetDeletionTimestamp() != nil {
			continue
		}
		typ, _, _ := unstructured.NestedString(svc.Object, "spec", "type")
		has := len(ingressIPs(svc)) > 0
		switch {
		case typ == "LoadBalancer" && !has:
			i := slices.IndexFunc(pool, func(ip string) bool { return !used[ip] })
			if i < 0 {
				continue // pool exhausted: the Service stays pending, as on a real cloud
			}
			used[pool[i]] = true
			next := svc.DeepCopy()
			_ = unstructured.SetNestedSlice(next.Object, []any{map[string]any{"ip": pool[i], "ipMode": "VIP"}}, "status", "loadBalancer", "ingress")
			c.commitLocked(gvr, watch.Modified, next, svc)
		case typ != "LoadBalancer" && has:
			next := svc.DeepCopy()
			unstructured.RemoveNestedField(next.Object, "status", "loadBalancer", "ingress")
			c.commitLocked(gvr, watch.Modified, next, svc)
		}
	}
}

// lbPoolLocked returns the configured pool or the default one for the cluster's fleet index.
func (c *Cluster) lbPoolLocked() []string {
	if len(c.sim.cfg.LoadBalancerIPs) > 0 {
		return c.sim.cfg.LoadBalancerIPs
	}
	pool := make([]string, 0, 254)
	for i := 1; i <= 254; i++ {
		pool = append(pool, fmt.Sprintf("198.18.%d.%d", c.sim.index%256, i))
	}
	return pool
}

// ingressIPs returns the IPs in a Service's status.loadBalancer.ingress.
func ingressIPs(svc *unstructured.Unstructured) []string {
	ingress, _, _ := unstructured.NestedSlice(svc.Object, "status", "loadBalancer", "ingress")
	var ips []string
	for _, in := range ingress {
		if m, ok := in.(map[string]any); ok {
			if ip, ok := m["ip"].(string); ok && ip != "" {
				ips = append(ips, ip)
			}
		}
	}
	return ips
}
