// Package manifest reads the YAML streams users hand fedkit strictly, as kubectl's strict
// field validation does: a key twice in one mapping (often a missing "---" between two
// documents) and a field the typed object does not have are errors. Each error names the
// document (its index, kind, namespace and name), the line of the stream and the field.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

var (
	// ErrDuplicateKey: a mapping has the same key twice (YAML would keep the last one).
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrUnknownField: the document has a field its kind does not.
	ErrUnknownField = errors.New("unknown field")
)

// Document is one non-empty document of a stream.
type Document struct {
	// Index is the document's position among the stream's non-empty documents (1-based);
	// the items of a List share their List's.
	Index int
	// Line is the line of the stream the document starts on (1-based).
	Line int
	// Object is the document decoded.
	Object *unstructured.Unstructured
	// JSON is the document as JSON.
	JSON []byte
	// path is where Object sits in the document ("" or "items[3]"); root is the document's
	// node (nil when the YAML parser used for lines could not read it).
	path string
	root *yamlv3.Node
}

// Split reads a multi-document YAML (or JSON) stream, documents separated by "---" lines, as
// kubectl reads -f. Empty documents are skipped. A document that is not valid YAML, not an
// object, or has a key twice in one mapping is an error naming it.
func Split(data []byte) ([]Document, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	lines := newLineFinder(data)
	var out []Document
	for i := 1; ; {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		start := lines.next(raw)
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d is not valid YAML (it starts at line %d): %w", i, start, err)
		}
		js = bytes.TrimSpace(js)
		if len(js) == 0 || bytes.Equal(js, []byte("null")) {
			continue // not counted: users count the documents they see
		}
		d := Document{Index: i, Line: start, JSON: js}
		if js[0] != '{' {
			return nil, fmt.Errorf("document %d is not an object (line %d): %s", i, start, abbreviate(string(js), 80))
		}
		d.Object = &unstructured.Unstructured{}
		if err := d.Object.UnmarshalJSON(js); err != nil {
			// UnmarshalJSON wants a kind; decode the map alone to say which document.
			d.Object.Object = map[string]any{}
			if err2 := yaml.Unmarshal(js, &d.Object.Object); err2 != nil {
				return nil, fmt.Errorf("%s: %w", d, err)
			}
		}
		var root yamlv3.Node
		if yamlv3.Unmarshal(raw, &root) == nil && len(root.Content) == 1 {
			d.root = root.Content[0]
			if err := d.duplicates(d.root, ""); err != nil {
				return nil, err
			}
		} else if _, err := yaml.YAMLToJSONStrict(raw); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", d, ErrDuplicateKey, err)
		}
		out = append(out, d)
		i++
	}
}

// String names the document: "document 2 (FederatedDeployment shop/web)", with the item of a List.
func (d Document) String() string {
	s := "document " + strconv.Itoa(d.Index)
	if d.path != "" {
		s += " " + d.path
	}
	if d.Object == nil {
		return s
	}
	kind, name := d.Object.GetKind(), d.Object.GetName()
	if ns := d.Object.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	switch {
	case kind != "" && name != "":
		return s + " (" + kind + " " + name + ")"
	case kind != "":
		return s + " (" + kind + ")"
	}
	return s
}

// Items returns the items of a List document, each a Document of the same index.
func (d Document) Items() ([]Document, error) {
	var out []Document
	items, _, _ := unstructured.NestedSlice(d.Object.Object, "items")
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: items[%d] is not an object", d, i)
		}
		js, err := yaml.Marshal(m) // YAML is JSON's superset; JSON below
		if err != nil {
			return nil, fmt.Errorf("%s: items[%d]: %w", d, i, err)
		}
		if js, err = yaml.YAMLToJSON(js); err != nil {
			return nil, fmt.Errorf("%s: items[%d]: %w", d, i, err)
		}
		it := Document{Index: d.Index, Line: d.Line, Object: &unstructured.Unstructured{Object: m}, JSON: js, path: fmt.Sprintf("items[%d]", i)}
		// The item's node; its lines count from the List document's first line.
		it.root = d.node("items[" + strconv.Itoa(i) + "]")
		out = append(out, it)
	}
	return out, nil
}

// Decode decodes the document into v, a typed object, strictly: every field v does not
// have is an error naming the document, its line and the field's path. Fields v keeps as
// raw JSON (a template) are not looked into.
func (d Document) Decode(v any) error {
	strict, err := kjson.UnmarshalStrict(d.JSON, v, kjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	var errs []error
	for _, e := range strict {
		msg := e.Error()
		path, ok := strings.CutPrefix(msg, `unknown field "`)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s", d, msg))
			continue
		}
		path = strings.TrimSuffix(path, `"`)
		errs = append(errs, fmt.Errorf("%s, %s: %w %q (%s has no such field)", d, d.at(path), ErrUnknownField, path, kindOf(d)))
	}
	return errors.Join(errs...)
}

func kindOf(d Document) string {
	if k := d.Object.GetKind(); k != "" {
		return "a " + k
	}
	return "the object"
}

// at says where the field at path is: "line 12", or the document's first line.
func (d Document) at(path string) string {
	if n := d.node(path); n != nil {
		return "line " + strconv.Itoa(d.Line+n.Line-1)
	}
	return "line " + strconv.Itoa(d.Line)
}

// node finds the key node of a dotted path with [i] indexes ("spec.overrides[0].op") in the
// document, or nil.
func (d Document) node(path string) *yamlv3.Node {
	n := d.root
	var key *yamlv3.Node
	for _, seg := range splitPath(path) {
		if n == nil {
			return nil
		}
		if n.Kind == yamlv3.AliasNode {
			n = n.Alias
		}
		switch {
		case strings.HasPrefix(seg, "["):
			i, err := strconv.Atoi(strings.Trim(seg, "[]"))
			if err != nil || n.Kind != yamlv3.SequenceNode || i < 0 || i >= len(n.Content) {
				return nil
			}
			key, n = n.Content[i], n.Content[i]
		default:
			if n.Kind != yamlv3.MappingNode {
				return nil
			}
			var next *yamlv3.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					key, next = n.Content[j], n.Content[j+1]
				}
			}
			n = next
		}
	}
	return key
}

func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.Index(part, "[")
			switch {
			case i < 0:
				out = append(out, part)
				part = ""
			case i > 0:
				out = append(out, part[:i])
				part = part[i:]
			default:
				j := strings.Index(part, "]")
				if j < 0 {
					out = append(out, part)
					part = ""
					break
				}
				out = append(out, part[:j+1])
				part = part[j+1:]
			}
		}
	}
	return out
}

// duplicates reports the first key found twice in a mapping under n.
func (d Document) duplicates(n *yamlv3.Node, path string) error {
	switch n.Kind {
	case yamlv3.MappingNode:
		seen := map[string]*yamlv3.Node{}
		for j := 0; j+1 < len(n.Content); j += 2 {
			k := n.Content[j]
			if k.Value == "<<" && k.Tag == "!!merge" {
				continue
			}
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if first, ok := seen[k.Value]; ok {
				hint := ""
				if path == "" && (k.Value == "apiVersion" || k.Value == "kind" || k.Value == "metadata") {
					hint = `: is a "---" line missing between two documents?`
				}
				return fmt.Errorf("%s, line %d: %w %q (first at line %d)%s", d, d.Line+k.Line-1, ErrDuplicateKey, p, d.Line+first.Line-1, hint)
			}
			seen[k.Value] = k
			if err := d.duplicates(n.Content[j+1], p); err != nil {
				return err
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			if err := d.duplicates(c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lineFinder finds where each document the YAML reader returns starts in the stream.
type lineFinder struct {
	data []byte
	off  int // bytes of data consumed
	line int // line number at off (1-based)
}

func newLineFinder(data []byte) *lineFinder { return &lineFinder{data: data, line: 1} }

// next returns the line the document raw starts on. The reader returns the document's
// bytes as they are in the stream, separators left out, so the first occurrence of raw at
// or after the last document is it.
func (l *lineFinder) next(raw []byte) int {
	i := bytes.Index(l.data[l.off:], raw)
	if i < 0 {
		return l.line
	}
	l.line += bytes.Count(l.data[l.off:l.off+i], []byte("\n"))
	start := l.line
	l.line += bytes.Count(raw, []byte("\n"))
	l.off += i + len(raw)
	return start
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
