package override

import (
	"fmt"
)

// Target is the object being rendered, as retain functions see it. Render builds member
// objects copy-on-write over the template, so the object shares every container it has not
// changed with Input.Template: a retain function reads with Get and Object, writes with Set,
// Map and Remove, which copy only the containers on the written path, and never changes a
// value it read in place.
type Target struct {
	e    *editor
	root map[string]interface{}
}

// Object returns the object's content for reading. Do not change it in place.
func (t *Target) Object() map[string]interface{} { return t.root }

// Get returns the value at the nested field path, and whether it exists. Do not change the
// value in place; Set a new one.
func (t *Target) Get(fields ...string) (interface{}, bool) {
	var cur interface{} = t.root
	for _, f := range fields {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return nil, false
		}
		if cur, ok = m[f]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Set stores value at the nested field path, creating the objects on the way. value becomes
// part of the object: it must not be shared with anything the caller changes later (copy
// what comes from the existing object unless it is a string, number or bool). It fails when
// a field on the way holds something other than an object.
func (t *Target) Set(value interface{}, fields ...string) error {
	if len(fields) == 0 {
		return fmt.Errorf("%w: Target.Set needs a field path", ErrInvalidInput)
	}
	m, err := t.e.ownChild(t.root, fields[:len(fields)-1]...)
	if err != nil {
		return err
	}
	m[fields[len(fields)-1]] = value
	return nil
}

// Map returns the object at the nested field path, writable (a copy when it was shared),
// creating it and the objects on the way when absent. It fails when a field on the way
// holds something other than an object.
func (t *Target) Map(fields ...string) (map[string]interface{}, error) {
	return t.e.ownChild(t.root, fields...)
}

// Remove deletes the field at the nested path; a missing field is not an error.
func (t *Target) Remove(fields ...string) error {
	if len(fields) == 0 {
		return nil
	}
	if _, ok := t.Get(fields...); !ok {
		return nil
	}
	m, err := t.e.ownChild(t.root, fields[:len(fields)-1]...)
	if err != nil {
		return err
	}
	delete(m, fields[len(fields)-1])
	return nil
}
