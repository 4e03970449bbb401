package migrate

// ingressV1 converts an Ingress spec in the extensions/v1beta1 (and networking.k8s.io/v1beta1)
// form to networking.k8s.io/v1 in place, as the API server converts a stored v1beta1 Ingress,
// and reports whether it changed anything:
//
//   - spec.backend becomes spec.defaultBackend;
//   - a backend's serviceName and servicePort become service.name and service.port (number
//     for an integer, name for a string);
//   - a path without pathType gets ImplementationSpecific, the v1beta1 default (v1 requires
//     one).
//
// A template already in the v1 form is left as it is.
func ingressV1(t map[string]any) bool {
	spec, _ := t["spec"].(map[string]any)
	if spec == nil {
		return false
	}
	changed := false
	if b, ok := spec["backend"].(map[string]any); ok {
		if _, v1 := spec["defaultBackend"]; !v1 {
			delete(spec, "backend")
			spec["defaultBackend"] = b
			changed = true
		}
	}
	if b, ok := spec["defaultBackend"].(map[string]any); ok {
		changed = backendV1(b) || changed
	}
	rules, _ := spec["rules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		http, _ := rule["http"].(map[string]any)
		paths, _ := http["paths"].([]any)
		for _, p := range paths {
			path, ok := p.(map[string]any)
			if !ok {
				continue
			}
			b, _ := path["backend"].(map[string]any)
			if b != nil && backendV1(b) {
				changed = true
				if _, ok := path["pathType"]; !ok {
					path["pathType"] = "ImplementationSpecific"
				}
			}
		}
	}
	return changed
}

// backendV1 converts one v1beta1 backend to v1 in place; false when it has no serviceName or
// servicePort.
func backendV1(b map[string]any) bool {
	name, hasName := b["serviceName"]
	port, hasPort := b["servicePort"]
	if !hasName && !hasPort {
		return false
	}
	delete(b, "serviceName")
	delete(b, "servicePort")
	svc := map[string]any{}
	if hasName {
		svc["name"] = name
	}
	switch p := port.(type) {
	case string:
		svc["port"] = map[string]any{"name": p}
	case nil:
	default:
		svc["port"] = map[string]any{"number": p}
	}
	b["service"] = svc
	return true
}
