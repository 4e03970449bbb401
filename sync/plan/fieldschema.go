package plan

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// A member API server does not store a built-in object as it was sent: it decodes it into its
// Go type and encodes that. Quantities come back canonical (cpu: 1 as "1", 0.5 as "500m"),
// fields the type omits when empty ("", false, 0, {}, []) are gone, and admission webhooks
// may add list elements (a sidecar in containers). A Schema is what the drift comparison
// needs to know of the Go type to see through that: which fields are quantities, which are
// dropped when empty, and which lists strategic merge patch merges by a key (containers by
// name, ports by containerPort, env by name...), so they are compared element by element by
// key and an element only the member has is not drift. Types client-go does not know (custom
// resources) have no schema: their values are compared as they are.

// Schema describes one JSON value of a Go type: for a member type ([SchemaFor]), its fields
// as the member's API server stores them, for the drift comparison and the unknown fields
// (Change.Unknown). It is read-only and costly to build: a driver builds it once per type
// (Input.Schema). A nil Schema is a type without one (a custom resource): its values are
// compared as they are.
type Schema struct {
	// fields are a struct's fields by JSON name; nil for other values.
	fields map[string]*fieldInfo
	// elem is a list's element or a map's value; nil for other values.
	elem *Schema
	// value is elem as a field (neither dropped when empty nor merged): what a map's values
	// and a list's elements are compared as.
	value *fieldInfo
	// quantity is set for a resource.Quantity.
	quantity bool
}

// fieldInfo is one struct field.
type fieldInfo struct {
	schema *Schema
	// omitEmpty is set when the server drops the field's empty value (omitempty and not a
	// pointer, or a list or map).
	omitEmpty bool
	// mergeKey is the key a list field is merged by (patchStrategy merge), "" when the list
	// is atomic.
	mergeKey string
}

// field returns the schema of child k of a value of schema s: a struct's field, or a map's
// value; nil when unknown.
func (s *Schema) field(k string) *fieldInfo {
	if s == nil {
		return nil
	}
	if s.fields != nil {
		return s.fields[k]
	}
	return s.value
}

// item returns the schema of a list's elements; nil when unknown.
func (s *Schema) item() *fieldInfo {
	if s == nil || s.fields != nil {
		return nil
	}
	return s.value
}

// valueSchema returns the schema of a field's value; nil when unknown.
func (f *fieldInfo) valueSchema() *Schema {
	if f == nil {
		return nil
	}
	return f.schema
}

// SchemaFor returns the schema of the built-in kind gvk, nil for a kind client-go does not
// know (a custom resource).
func SchemaFor(gvk schema.GroupVersionKind) *Schema {
	if gvk.Kind == "" {
		return nil
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	return schemaOf(reflect.TypeOf(obj), map[reflect.Type]*Schema{})
}

var (
	quantityType  = reflect.TypeFor[resource.Quantity]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// schemaOf builds the schema of t; seen holds the schemas built so far (types may recur).
func schemaOf(t reflect.Type, seen map[reflect.Type]*Schema) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := seen[t]; ok {
		return s
	}
	s := &Schema{}
	seen[t] = s
	switch {
	case t == quantityType:
		s.quantity = true
		return s
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return s // a value of its own encoding (a time, an int-or-string): a scalar
	}
	switch t.Kind() {
	case reflect.Struct:
		s.fields = map[string]*fieldInfo{}
		addFields(s, t, seen)
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Uint8 { // []byte is a base64 string
			s.elem = schemaOf(t.Elem(), seen)
			s.value = &fieldInfo{schema: s.elem}
		}
	case reflect.Map:
		s.elem = schemaOf(t.Elem(), seen)
		s.value = &fieldInfo{schema: s.elem}
	}
	return s
}

// addFields adds the fields of struct t to s, those of inlined structs included.
func addFields(s *Schema, t reflect.Type, seen map[reflect.Type]*Schema) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, seen)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		info := &fieldInfo{schema: schemaOf(f.Type, seen)}
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Interface:
		case reflect.Struct:
			info.omitEmpty = hasOption(opts, "omitzero")
		case reflect.Slice, reflect.Map:
			// Storage (protobuf) keeps no empty list or map, whatever the JSON tag says.
			info.omitEmpty = true
		default:
			info.omitEmpty = hasOption(opts, "omitempty") || hasOption(opts, "omitzero")
		}
		if f.Type.Kind() == reflect.Slice && hasOption(f.Tag.Get("patchStrategy"), "merge") {
			info.mergeKey = f.Tag.Get("patchMergeKey")
		}
		s.fields[name] = info
	}
}

func hasOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// unknownFields returns the paths of the fields of obj that the type of schema s does not
// have ("spec.template.spec.containers[0].imagePullPolicyy"), sorted: the fields a member's
// API server drops from a built-in object, and warns about, as it decodes it into its Go
// type. A value the schema does not describe (a custom resource: nil; a scalar of its own
// encoding; a map's values) is not looked into. It walks obj against the schema a driver
// builds once, so a write costs no decoding.
func (s *Schema) unknownFields(obj map[string]any) []string {
	var out []string
	s.unknownIn(obj, nil, &out)
	slices.Sort(out)
	return out
}

// unknownIn adds to out the unknown fields of v, at path (its segments: keys, and "[i]" for a
// list index).
func (s *Schema) unknownIn(v any, path []string, out *[]string) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			var f *fieldInfo
			if s.fields != nil {
				if f = s.fields[k]; f == nil {
					*out = append(*out, joinPath(append(path, k)))
					continue
				}
			} else if f = s.value; f == nil {
				return // not a struct nor a map the schema describes
			}
			f.schema.unknownIn(c, append(path, k), out)
		}
	case []any:
		if s.fields != nil || s.elem == nil {
			return
		}
		for i, c := range x {
			s.elem.unknownIn(c, append(path, "["+strconv.Itoa(i)+"]"), out)
		}
	}
}

// joinPath joins path segments as a strict decoding error names a field: keys with ".",
// list indexes appended ("spec.containers[0].name").
func joinPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}
