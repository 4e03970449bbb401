// Package jsonpointer handles RFC 6901 JSON pointers as fedkit uses them.
//
//	p := jsonpointer.Join("metadata", "labels", "app.kubernetes.io/name") // "/" escaped
//	tokens, err := jsonpointer.Split(p)
//	if jsonpointer.IsIdentity(p) { ... } // /metadata/name and the like: never overridden
//
// The pointers are the paths of override operations into a Kubernetes object. Package
// federation validates them with it, and package override applies them with it. So both
// accept exactly the same paths.
//
// Two rules are stricter than RFC 6901. No Kubernetes object can need what they forbid, and
// a path using it is almost always a typo:
//
//   - the empty pointer: the whole object, which would replace its identity too;
//   - empty reference tokens ("/a//b", "/a/"): no field, label key or map key is the empty
//     string.
//
// It imports nothing from fedkit, so that package federation may import it.
package jsonpointer
