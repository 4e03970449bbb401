package kubectlfed

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// apiPath is the OpenAPI v3 path of gv: /openapi/v3/api/v1, /openapi/v3/apis/apps/v1.
func apiPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/openapi/v3/api/" + gv.Version
	}
	return "/openapi/v3/apis/" + gv.Group + "/" + gv.Version
}

// builtinSchema reads gvk's schema from the host's OpenAPI v3 (Options.OpenAPI, else the
// kubeconfig's host) and makes it structural (see structural).
func (g *globals) builtinSchema(ctx context.Context, gvk schema.GroupVersionKind) (*apiextensionsv1.JSONSchemaProps, error) {
	get := g.opts.OpenAPI
	if get == nil {
		cfg, _, err := g.host()
		if err != nil {
			return nil, err
		}
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, err
		}
		get = func(ctx context.Context, path string) ([]byte, error) {
			return dc.RESTClient().Get().AbsPath(path).Do(ctx).Raw()
		}
	}
	data, err := get(ctx, apiPath(gvk.GroupVersion()))
	if err != nil {
		return nil, err
	}
	return schemaFromOpenAPI(data, gvk)
}

// schemaFromOpenAPI finds gvk's schema in an OpenAPI v3 document (by
// x-kubernetes-group-version-kind) and returns it structural, as a CRD's schema must be.
func schemaFromOpenAPI(data []byte, gvk schema.GroupVersionKind) (*apiextensionsv1.JSONSchemaProps, error) {
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode the OpenAPI v3 document: %w", err)
	}
	schemas := doc.Components.Schemas
	var names []string
	for name := range schemas {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !ofKind(schemas[name], gvk) {
			continue
		}
		c := converter{schemas: schemas}
		out := c.structural(schemas[name], []string{name})
		data, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		props := &apiextensionsv1.JSONSchemaProps{}
		if err := json.Unmarshal(data, props); err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", name, err)
		}
		return props, nil
	}
	return nil, fmt.Errorf("the OpenAPI v3 document has no schema of %s", gvk)
}

func ofKind(s map[string]any, gvk schema.GroupVersionKind) bool {
	list, _ := s["x-kubernetes-group-version-kind"].([]any)
	for _, it := range list {
		m, _ := it.(map[string]any)
		if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
			return true
		}
	}
	return false
}

// converter inlines references and drops what a CRD schema may not have: the API server's
// OpenAPI is not structural (references, allOf wrappers, defaults a CRD would apply to
// templates, patch strategies, int-or-string as a format).
type converter struct {
	schemas map[string]map[string]any
}

// kept are the keys a structural schema keeps from OpenAPI v3.
var kept = []string{"type", "format", "description", "enum", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum",
	"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "required",
	"nullable", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string"}

var formats = []string{"int32", "int64", "float", "double", "byte", "binary", "date", "date-time", "password", "uri", "email", "hostname", "ipv4", "ipv6", "uuid", "duration"}

func (c converter) structural(s map[string]any, seen []string) map[string]any {
	s = c.resolve(s, &seen)
	if s == nil {
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	out := map[string]any{}
	for _, k := range kept {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if f, _ := out["format"].(string); f != "" && !slices.Contains(formats, f) {
		delete(out, "format")
		if f == "int-or-string" {
			delete(out, "type")
			out["x-kubernetes-int-or-string"] = true
		}
	}
	if _, ok := s["oneOf"]; ok && out["type"] == nil {
		out["x-kubernetes-int-or-string"] = true // IntOrString and Quantity: a string or a number
	}
	if props, ok := s["properties"].(map[string]any); ok {
		converted := map[string]any{}
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				converted[k] = c.structural(m, seen)
			}
		}
		out["properties"] = converted
		out["type"] = "object"
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = c.structural(items, seen)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok && out["properties"] == nil {
		out["additionalProperties"] = c.structural(ap, seen)
	}
	if out["type"] == "object" && out["properties"] == nil && out["additionalProperties"] == nil {
		out["x-kubernetes-preserve-unknown-fields"] = true // RawExtension and the like
	}
	if out["type"] == nil && out["x-kubernetes-int-or-string"] == nil {
		out["type"] = "object"
		out["x-kubernetes-preserve-unknown-fields"] = true
	}
	return out
}

// resolve follows $ref and single-entry allOf wrappers, keeping the wrapper's description;
// nil for a reference already on the path (a recursive type).
func (c converter) resolve(s map[string]any, seen *[]string) map[string]any {
	for {
		ref, _ := s["$ref"].(string)
		if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
			if m, ok := all[0].(map[string]any); ok {
				ref, _ = m["$ref"].(string)
			}
		}
		if ref == "" {
			return s
		}
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if slices.Contains(*seen, name) || c.schemas[name] == nil {
			return nil
		}
		*seen = append(slices.Clone(*seen), name)
		next := map[string]any{}
		for k, v := range c.schemas[name] {
			next[k] = v
		}
		if d, ok := s["description"]; ok {
			next["description"] = d
		}
		s = next
	}
}

// toUnstructured converts a typed object to unstructured.
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}, nil
}

// equalJSON compares two JSON objects by value (through encoding, so int and int64 agree).
func equalJSON(a, b map[string]any) bool {
	da, err1 := json.Marshal(a)
	db, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	_ = json.Unmarshal(da, &x)
	_ = json.Unmarshal(db, &y)
	return reflect.DeepEqual(x, y)
}
