package intern

import (
	"encoding/binary"
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A fleet holds the same object in many members, and a host's federated objects repeat the
// same per-cluster status entries. When objects are never mutated in place, equal parts of
// them can be one value in memory: Intern replaces each flat map of an object (a map whose
// values are all strings, numbers, booleans or nulls: labels, annotations, a ConfigMap's
// data, a status entry) by an equal one the Table already holds, if any. Readers that copy
// what they hand out (a fake server's reads, an informer cache's Get and List) see nothing
// change; a reader that mutates a held object would change every object sharing the map.

// maxDepth bounds the walk: deeper values are left as they are.
const maxDepth = 200

// Bounds of what is interned: a flat map with more entries, or whose encoding is longer, is
// stored as it is (it seldom repeats, and its key would cost as much as the sharing saves).
const (
	maxInternEntries = 64
	maxInternBytes   = 16 << 10
	// The table forgets everything when it holds more than this many maps or key bytes: what
	// it holds alive that no stored object refers to any more is bounded by them.
	maxInternTable      = 1 << 17
	maxInternTableBytes = 64 << 20
)

// Table shares equal flat maps between objects. A zero Table is ready and safe for concurrent
// use; its lock takes no other.
type Table struct {
	mu    sync.Mutex
	table map[string]map[string]any // encoding (see flatKey) -> the shared map
	bytes int                       // key bytes in table
	buf   []byte                    // scratch for keys, under mu
	keys  []string                  // scratch for sorting, under mu
}

// Intern replaces the flat maps of obj, a fresh object about to be stored, by the equal maps
// the Table holds, and registers those it does not hold yet. obj's top level and metadata
// maps must be its own, and are changed in place; deeper maps and slices may be shared with
// objects stored already, so every one on the way to a replaced map is copied, never
// changed.
func (in *Table) Intern(obj *unstructured.Unstructured) {
	if in == nil || obj == nil || obj.Object == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for k, e := range obj.Object {
		if meta, ok := e.(map[string]any); ok && k == "metadata" {
			for mk, me := range meta {
				if n, changed := in.value(me, 2); changed {
					meta[mk] = n
				}
			}
			continue
		}
		if n, changed := in.value(e, 1); changed {
			obj.Object[k] = n
		}
	}
}

// value returns v with its flat maps interned, and whether that is a new value.
func (in *Table) value(v any, depth int) (any, bool) {
	if depth > maxDepth {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return v, false
		}
		if key, ok := in.flatKey(x); ok {
			return in.shared(key, x)
		}
		return in.fields(x, depth)
	case []any:
		var out []any
		for i, e := range x {
			if n, changed := in.value(e, depth+1); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = n
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// fields returns m with the flat maps among its values interned, and whether that is a new
// map (m itself is never changed).
func (in *Table) fields(m map[string]any, depth int) (map[string]any, bool) {
	var out map[string]any
	for k, e := range m {
		if n, changed := in.value(e, depth+1); changed {
			if out == nil {
				out = maps.Clone(m)
			}
			out[k] = n
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// shared returns the map held for key, or registers m under it.
func (in *Table) shared(key []byte, m map[string]any) (any, bool) {
	if held, ok := in.table[string(key)]; ok {
		return held, reflect.ValueOf(held).UnsafePointer() != reflect.ValueOf(m).UnsafePointer()
	}
	if in.table == nil || len(in.table) >= maxInternTable || in.bytes+len(key) > maxInternTableBytes {
		in.table, in.bytes = map[string]map[string]any{}, 0
	}
	in.table[string(key)] = m
	in.bytes += len(key)
	return m, false
}

// flatKey encodes a flat map m, its keys sorted, each key and string length-prefixed and each
// value tagged with its type, so that two maps have the same encoding exactly when they are
// equal, Go types included. It returns false when m is not flat or is beyond the bounds. The
// encoding is in.buf, valid until the next call.
func (in *Table) flatKey(m map[string]any) ([]byte, bool) {
	if len(m) > maxInternEntries {
		return nil, false
	}
	in.keys = in.keys[:0]
	size := 0
	for k, v := range m {
		switch x := v.(type) {
		case string:
			size += len(x)
		case nil, bool, int64, float64:
		default:
			return nil, false
		}
		size += len(k) + 10
		if size > maxInternBytes {
			return nil, false
		}
		in.keys = append(in.keys, k)
	}
	slices.Sort(in.keys)
	b := in.buf[:0]
	for _, k := range in.keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		switch x := m[k].(type) {
		case string:
			b = append(b, 's')
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case nil:
			b = append(b, 'n')
		case bool:
			if x {
				b = append(b, 't')
			} else {
				b = append(b, 'f')
			}
		case int64:
			b = binary.AppendVarint(append(b, 'i'), x)
		case float64:
			b = binary.LittleEndian.AppendUint64(append(b, 'd'), math.Float64bits(x))
		}
	}
	in.buf = b
	return b, true
}
