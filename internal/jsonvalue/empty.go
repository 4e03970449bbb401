package jsonvalue

// Empty reports whether v is a value Go's encoding omits for an omitempty field that is not a
// pointer: "", false, 0, an empty (or nil) object or list. A real API server drops such a
// field of a built-in type when it stores the object; sync's drift comparison and the fake's
// canonical form both ask it.
func Empty(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case int:
		return x == 0
	case float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
