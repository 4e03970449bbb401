package federation

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// CRDWithTemplateSchema returns the CRD of t's Federated<Kind> ([CRDFor]) whose spec.template
// has target's schema ([TemplateSchema]) instead of accepting any object, so the host's API
// server validates templates as the members will validate the objects made from them:
// a field of the wrong type, a value outside an enum, a rule of the target's own
// x-kubernetes-validations is refused when the Federated<Kind> is written, and fields the
// target does not have are pruned (with a warning, or refused with kubectl's
// --validate=strict). target is the target's openAPIV3Schema, a CRD's own or a built-in
// kind's from the API server's OpenAPI v3 made structural (`kubectl fed enable` does both).
func CRDWithTemplateSchema(t TypeConfig, target *apiextensionsv1.JSONSchemaProps) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, err := CRDFor(t)
	if err != nil {
		return nil, err
	}
	if target == nil {
		return nil, fmt.Errorf("federation: the schema of %s is nil", t.Target.Kind)
	}
	template := TemplateSchema(target)
	for i := range crd.Spec.Versions {
		s := crd.Spec.Versions[i].Schema
		if s == nil || s.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("federation: the Federated<Kind> CRD has no schema")
		}
		spec, ok := s.OpenAPIV3Schema.Properties["spec"]
		if !ok {
			return nil, fmt.Errorf("federation: the Federated<Kind> CRD has no spec")
		}
		desc := spec.Properties["template"].Description
		tmpl := *template.DeepCopy()
		tmpl.Description = desc
		spec.Properties["template"] = tmpl
		s.OpenAPIV3Schema.Properties["spec"] = spec
	}
	return crd, nil
}

// TemplateSchema is the schema of a Federated<Kind>'s spec.template for a target whose
// object schema is target: the target's fields but apiVersion and kind (the type gives
// them) and status (members write it), with metadata as any object (a template's metadata
// carries labels and annotations; the name and namespace come from the federated object).
// Validation rules at the target's root are left out: they may read metadata.name, which a
// template does not have; the rules below it apply to the template as they apply to the
// object.
func TemplateSchema(target *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	out := target.DeepCopy()
	out.XValidations = nil
	out.Required = nil
	out.Type = "object"
	out.Description = ""
	if out.Properties == nil {
		out.XPreserveUnknownFields = ptrTo(true)
		return out
	}
	for _, k := range []string{"apiVersion", "kind", "status"} {
		delete(out.Properties, k)
	}
	out.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}
	return out
}

func ptrTo[T any](v T) *T { return &v }
