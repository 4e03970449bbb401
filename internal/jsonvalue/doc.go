// Package jsonvalue compares the values inside unstructured objects as JSON values.
//
//	jsonvalue.Equal(map[string]any(nil), nil)     // true: a nil map is null
//	jsonvalue.Equal(int64(1), float64(1))         // true: numbers by value
//	jsonvalue.Empty(map[string]any{})             // true: what omitempty drops
//
// It is the one equality that sync's status writes, and override's test operation and
// retained fields, share; [EqualJSON] compares encoded documents (sync's revision history).
// [Empty] is what an omitempty field drops, for sync's drift check and the fake's stored
// form. It imports nothing from the module.
package jsonvalue
