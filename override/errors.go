package override

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of them, so callers branch
// with errors.Is; [*PathError] adds which operation, path and cluster failed.
var (
	// ErrIdentityPath is returned when an operation addresses the object's identity:
	// /metadata/name, /metadata/namespace, /metadata/generateName, /kind, /apiVersion or
	// /metadata itself. Identity comes from the federated object and the TypeConfig, never
	// from an override, so that an override cannot redirect a write to another object.
	ErrIdentityPath = errors.New("override: path identifies the object and cannot be overridden")

	// ErrInvalidPath is returned for a path that is not a usable JSON pointer: empty, not
	// starting with "/", a bad "~" escape, or an empty reference token ("/a//b", "/a/").
	ErrInvalidPath = errors.New("override: invalid JSON pointer")

	// ErrUnsupportedOp is returned for an operation other than add, remove, replace, test
	// (or "", which means replace). move and copy are not supported: an override states a
	// value, it does not rearrange the object.
	ErrUnsupportedOp = errors.New("override: unsupported operation")

	// ErrMissingValue is returned when add, replace or test has no value.
	ErrMissingValue = errors.New("override: operation needs a value")

	// ErrInvalidValue is returned when an operation's value is not valid JSON, or when an
	// object holds a Go value that has no JSON form.
	ErrInvalidValue = errors.New("override: invalid value")

	// ErrPathNotFound is returned when the location an operation needs does not exist: a
	// missing member for remove, replace or test, a missing parent for add, or a parent that
	// is a string, number, bool or null.
	ErrPathNotFound = errors.New("override: path not found")

	// ErrInvalidIndex is returned when a reference token used on an array is not an index
	// in range (RFC 6901: "0" or digits without a leading zero; "-" only for add).
	ErrInvalidIndex = errors.New("override: invalid array index")

	// ErrTestFailed is returned when a test operation finds a different value (or nothing).
	ErrTestFailed = errors.New("override: test failed")

	// ErrInvalidImage is returned when an image override meets an image reference it cannot
	// parse, or is given an invalid registry, repository, tag or digest. Such an image is
	// never skipped silently.
	ErrInvalidImage = errors.New("override: invalid image reference")

	// ErrContainerNotFound is returned when a typed override names a container the object
	// does not have, or targets containers in an object without a pod template.
	ErrContainerNotFound = errors.New("override: container not found")

	// ErrInvalidOverride is returned for an override entry that cannot be rendered: a bad
	// label key, a negative replica count, a replica count for a type that has none (not
	// divisible), an invalid cluster selector (for every cluster, whatever its labels), a
	// cluster named twice, an entry with both or neither of name and selector.
	ErrInvalidOverride = errors.New("override: invalid override")

	// ErrInvalidInput is returned by Render when its Input is incomplete: no template, no
	// name, an invalid TypeConfig.
	ErrInvalidInput = errors.New("override: invalid render input")
)

// Causes refined for the equivalence tests with the json-patch reference (jsonpatch_test.go):
// they mark the two places where this package is stricter than
// github.com/evanphx/json-patch/v5.
var (
	// errNonCanonicalIndex: json-patch accepts "01", "+1" and "-0" as array indexes
	// (strconv.Atoi); RFC 6901 does not.
	errNonCanonicalIndex = fmt.Errorf("%w: not a canonical array index (RFC 6901: 0 or digits without a leading zero)", ErrInvalidIndex)
	// errTestAbsent: json-patch lets "test" with value null pass on an absent object member;
	// RFC 6902 compares with the value at the location, and there is none.
	errTestAbsent = fmt.Errorf("%w: the location does not exist", ErrTestFailed)
)

// PathError reports which operation failed, where, and for which cluster. Apply returns it
// with Cluster empty; Render fills Cluster in. Err wraps the sentinel (errors.Is works
// through Unwrap) and says what was wrong.
type PathError struct {
	// Cluster is the member cluster the operation was rendered for ("" when unknown).
	Cluster string
	// Path is the JSON pointer of the operation, e.g. /spec/template/spec/containers/0/image.
	Path string
	// Op is the operation: add, remove, replace or test (an empty op is reported as replace).
	Op string
	// Err is the cause; it wraps one of the package's sentinel errors.
	Err error
}

// Error returns a message naming the cluster (when known), the operation and the path.
func (e *PathError) Error() string {
	if e.Cluster == "" {
		return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
	}
	return fmt.Sprintf("cluster %q: %s %s: %v", e.Cluster, e.Op, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// withCluster sets the cluster on every *PathError in err's chain that has none. It is how
// Render names the cluster in errors produced by code that does not know it.
func withCluster(err error, cluster string) error {
	var pe *PathError
	if cluster != "" && errors.As(err, &pe) && pe.Cluster == "" {
		pe.Cluster = cluster
	}
	return err
}
