package federation

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// RawObject is a free-form JSON object held decoded, as unstructured.Unstructured holds it:
// maps, slices, strings, bool, int64, float64 and nil. It carries templates and remote status.
// The zero value is an absent object; Object == {} is an empty one.
//
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type RawObject struct {
	Object map[string]any `json:"-"`
}

// IsZero reports whether the object is absent (used by omitzero).
func (r RawObject) IsZero() bool { return r.Object == nil }

// MarshalJSON encodes Object; an absent object encodes as null.
func (r RawObject) MarshalJSON() ([]byte, error) {
	if r.Object == nil {
		return []byte("null"), nil
	}
	return json.Marshal(r.Object)
}

// UnmarshalJSON decodes a JSON object (or null) with int64 numbers, as the API machinery does.
func (r *RawObject) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		r.Object = nil
		return nil
	}
	v, err := decodeJSON(data)
	if err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: expected a JSON object, got %T", ErrInvalidObject, v)
	}
	r.Object = m
	return nil
}

// DeepCopyInto copies r into out.
func (r *RawObject) DeepCopyInto(out *RawObject) {
	if r.Object == nil {
		out.Object = nil
		return
	}
	out.Object = runtime.DeepCopyJSON(r.Object)
}

// DeepCopy returns a deep copy.
func (r *RawObject) DeepCopy() *RawObject {
	if r == nil {
		return nil
	}
	out := new(RawObject)
	r.DeepCopyInto(out)
	return out
}

// RawValue is any JSON value kept as encoded bytes (like apiextensions' JSON), used for the
// value of an override operation.
type RawValue struct {
	Raw []byte `json:"-"`
}

// NewRawValue encodes v as a RawValue.
func NewRawValue(v any) (*RawValue, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: encode value: %v", ErrInvalidObject, err)
	}
	return &RawValue{Raw: b}, nil
}

// MarshalJSON returns the raw bytes (null when empty).
func (r RawValue) MarshalJSON() ([]byte, error) {
	if len(r.Raw) == 0 {
		return []byte("null"), nil
	}
	return r.Raw, nil
}

// UnmarshalJSON keeps a copy of data.
func (r *RawValue) UnmarshalJSON(data []byte) error {
	if !json.Valid(data) {
		return fmt.Errorf("%w: invalid JSON value", ErrInvalidObject)
	}
	r.Raw = append(r.Raw[:0], data...)
	return nil
}

// Decode returns the value decoded with int64 numbers.
func (r *RawValue) Decode() (any, error) {
	if r == nil || len(r.Raw) == 0 {
		return nil, nil
	}
	return decodeJSON(r.Raw)
}

// DeepCopyInto copies r into out.
func (r *RawValue) DeepCopyInto(out *RawValue) {
	if r.Raw == nil {
		out.Raw = nil
		return
	}
	out.Raw = append([]byte(nil), r.Raw...)
}

// DeepCopy returns a deep copy.
func (r *RawValue) DeepCopy() *RawValue {
	if r == nil {
		return nil
	}
	out := new(RawValue)
	r.DeepCopyInto(out)
	return out
}

// decodeJSON decodes like unstructured.Unstructured does: integers as int64, other numbers as
// float64.
func decodeJSON(data []byte) (any, error) {
	var v any
	if err := utiljson.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidObject, err)
	}
	return v, nil
}
