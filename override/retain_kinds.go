package override

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/internal/jsonvalue"
)

// The built-in retention of kinds whose member objects carry fields the member cluster
// allocates. Each keeps the member's value only where the template leaves the field unset,
// so a template that sets one explicitly still wins.

// RetainServiceFields keeps what the member's API server allocated for a Service:
// spec.clusterIP and spec.clusterIPs (unless the desired type is ExternalName);
// spec.ports[].nodePort for NodePort and LoadBalancer services, matching ports by name,
// protocol and port; and spec.healthCheckNodePort for a LoadBalancer with
// externalTrafficPolicy Local. Both are immutable or would be reallocated if dropped.
//
// It decides on the template's type and policy; when an override then changes them, Render
// drops the retained values the final spec cannot carry (see pruneService).
func RetainServiceFields(desired *Target, existing *unstructured.Unstructured) error {
	spec, _ := existing.Object["spec"].(map[string]any)
	d, _ := desired.Get("spec")
	dspec, _ := d.(map[string]any)
	if spec == nil || dspec == nil {
		return nil
	}
	typ, _ := dspec["type"].(string)
	if typ == "" {
		typ = "ClusterIP"
	}
	if typ != "ExternalName" {
		if ip, _ := spec["clusterIP"].(string); ip != "" && isUnset(dspec, "clusterIP") {
			if err := desired.Set(ip, "spec", "clusterIP"); err != nil {
				return err
			}
		}
		if ips, _ := spec["clusterIPs"].([]any); len(ips) > 0 && isUnset(dspec, "clusterIPs") {
			if err := desired.Set(deepCopyValue(ips), "spec", "clusterIPs"); err != nil {
				return err
			}
		}
	}
	if typ != "NodePort" && typ != "LoadBalancer" {
		return nil
	}
	if hc, ok := spec["healthCheckNodePort"].(int64); ok && hc > 0 && typ == "LoadBalancer" &&
		dspec["externalTrafficPolicy"] == "Local" && isUnset(dspec, "healthCheckNodePort") {
		if err := desired.Set(hc, "spec", "healthCheckNodePort"); err != nil {
			return err
		}
	}
	ports, _ := spec["ports"].([]any)
	dports, _ := dspec["ports"].([]any)
	var out []any // a copy of dports, once a node port is retained
	for i, dp := range dports {
		d, _ := dp.(map[string]any)
		if d == nil || !isUnset(d, "nodePort") {
			continue
		}
		for _, p := range ports {
			m, _ := p.(map[string]any)
			if m == nil || !samePort(d, m) {
				continue
			}
			if np, ok := m["nodePort"].(int64); ok && np > 0 {
				if out == nil {
					out = append([]any(nil), dports...)
				}
				port := make(map[string]any, len(d)+1)
				for k, v := range d {
					port[k] = v
				}
				port["nodePort"] = np
				out[i] = port
			}
			break
		}
	}
	if out != nil {
		return desired.Set(out, "spec", "ports")
	}
	return nil
}

// samePort matches service ports by name, protocol (default TCP) and port. All three must
// agree: a port whose number changed is a different port, and keeping its old node port
// would pin an allocation the member may need to give back.
func samePort(a, b map[string]any) bool {
	proto := func(m map[string]any) any {
		if p, ok := m["protocol"].(string); ok && p != "" {
			return p
		}
		return "TCP"
	}
	return a["name"] == b["name"] && proto(a) == proto(b) && jsonvalue.Equal(a["port"], b["port"])
}

// RetainServiceAccountSecrets keeps a ServiceAccount's secrets (the token secrets the
// member's controllers created) when the template lists none.
func RetainServiceAccountSecrets(desired *Target, existing *unstructured.Unstructured) error {
	secrets, _ := existing.Object["secrets"].([]any)
	if len(secrets) == 0 {
		return nil
	}
	if d, _ := desired.Get("secrets"); isEmptyList(d) {
		return desired.Set(deepCopyValue(secrets), "secrets")
	}
	return nil
}

// RetainVolumeName keeps a PersistentVolumeClaim's spec.volumeName, the volume the member
// bound it to, when the template names none.
func RetainVolumeName(desired *Target, existing *unstructured.Unstructured) error {
	spec, _ := existing.Object["spec"].(map[string]any)
	d, _ := desired.Get("spec")
	dspec, _ := d.(map[string]any)
	if v, _ := spec["volumeName"].(string); v != "" && dspec != nil && isUnset(dspec, "volumeName") {
		return desired.Set(v, "spec", "volumeName")
	}
	return nil
}

// RetainJobSelector keeps what the member's API server generated for a Job, whose pod
// template is immutable: spec.selector (unless the template sets one) and the
// batch.kubernetes.io/controller-uid, controller-uid, batch.kubernetes.io/job-name and
// job-name labels of the pod template.
func RetainJobSelector(desired *Target, existing *unstructured.Unstructured) error {
	spec, _ := existing.Object["spec"].(map[string]any)
	d, _ := desired.Get("spec")
	dspec, _ := d.(map[string]any)
	if spec == nil || dspec == nil {
		return nil
	}
	if sel, ok := spec["selector"].(map[string]any); ok && isUnset(dspec, "selector") {
		if err := desired.Set(deepCopyMap(sel), "spec", "selector"); err != nil {
			return err
		}
	}
	labels, _, _ := unstructured.NestedMap(spec, "template", "metadata", "labels")
	for _, k := range [...]string{"batch.kubernetes.io/controller-uid", "controller-uid", "batch.kubernetes.io/job-name", "job-name"} {
		v, ok := labels[k]
		if !ok {
			continue
		}
		if _, set := desired.Get("spec", "template", "metadata", "labels", k); set {
			continue
		}
		if err := desired.Set(v, "spec", "template", "metadata", "labels", k); err != nil {
			return nil // the template's shape is not a pod template; nothing to keep
		}
	}
	return nil
}

// isUnset reports whether m[key] is absent, null, "", 0 or an empty list: the forms in
// which a template leaves a field to the API server (which allocates or defaults it).
func isUnset(m map[string]any, key string) bool {
	switch v := m[key].(type) {
	case nil:
		return true
	case string:
		return v == ""
	case int64:
		return v == 0
	case float64:
		return v == 0
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// pruneService runs after the overrides, when a Service was rendered with retention: the
// retained allocations were chosen for the template's type and traffic policy, and an
// override may have changed them (a LoadBalancer in one cluster, ClusterIP in the others).
// It drops what the final spec cannot carry and the federation did not ask for (desired,
// the object rendered without retention, does not set it): node ports unless the type is
// NodePort or LoadBalancer, the health check node port unless LoadBalancer with policy
// Local, cluster IPs for ExternalName. A value the template or an override sets is left
// for the API server to judge.
func pruneService(out *Target, desired map[string]any) error {
	sp, _ := out.Get("spec")
	spec, _ := sp.(map[string]any)
	dspec, _ := desired["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	typ, _ := spec["type"].(string)
	if typ == "" {
		typ = "ClusterIP"
	}
	drop := func(f string) error {
		if _, ok := spec[f]; ok && isUnset(dspec, f) {
			return out.Remove("spec", f)
		}
		return nil
	}
	if typ == "ExternalName" {
		if err := drop("clusterIP"); err != nil {
			return err
		}
		if err := drop("clusterIPs"); err != nil {
			return err
		}
	}
	if typ != "LoadBalancer" || spec["externalTrafficPolicy"] != "Local" {
		if err := drop("healthCheckNodePort"); err != nil {
			return err
		}
	}
	if typ == "NodePort" || typ == "LoadBalancer" {
		return nil
	}
	ports, _ := spec["ports"].([]any)
	dports, _ := dspec["ports"].([]any)
	var kept []any // a copy of ports, once a node port is dropped
	for i, p := range ports {
		m, _ := p.(map[string]any)
		if m == nil || isUnset(m, "nodePort") {
			continue
		}
		asked := false
		for _, dp := range dports {
			if d, _ := dp.(map[string]any); d != nil && samePort(d, m) && !isUnset(d, "nodePort") {
				asked = true
			}
		}
		if asked {
			continue
		}
		if kept == nil {
			kept = append([]any(nil), ports...)
		}
		port := make(map[string]any, len(m))
		for k, v := range m {
			if k != "nodePort" {
				port[k] = v
			}
		}
		kept[i] = port
	}
	if kept != nil {
		return out.Set(kept, "spec", "ports")
	}
	return nil
}

// isEmptyList reports whether v is absent or an empty list.
func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return v == nil || ok && len(l) == 0
}
