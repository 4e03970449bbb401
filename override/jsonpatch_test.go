package override

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/fedkit/fedkit/federation"
)

// ApplyJSONPatch is Apply done the plain way, compiled into the package's tests only: it
// validates ops exactly as Apply does, encodes obj to JSON, applies the operations with
// github.com/evanphx/json-patch/v5 (negative array indexes off, as RFC 6901 requires) and
// decodes the result into obj.
//
// It is the reference implementation the fast path is checked against (TestApplyMatchesJSONPatch, below)
// and measured against (bench_test.go); Apply returns the same object for every input except
// the places where json-patch strays from the RFCs (see Apply). Like Apply it is atomic.
// Numbers in the result are int64 where integral, float64 otherwise, as after any JSON
// decoding.
func ApplyJSONPatch(obj *unstructured.Unstructured, ops []federation.OverrideOp) error {
	p, err := Compile(ops)
	if err != nil {
		return err
	}
	if p.Len() == 0 {
		return nil
	}
	root, err := p.applyJSONPatch(obj.Object)
	if err != nil {
		return err
	}
	obj.Object = root
	return nil
}

// errJSONPatchPanic is returned when json-patch panics. v5.9.11 does on a test whose arrays
// hold null (lazyNode.equal dereferences the nil node); the library must not crash for it.
var errJSONPatchPanic = errors.New("override: github.com/evanphx/json-patch/v5 panicked")

// applyJSONPatch runs the compiled patch through json-patch, one operation at a time when an
// operation fails (to name it), otherwise all at once.
func (p *Patch) applyJSONPatch(root map[string]any) (result map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &PathError{Op: "apply", Err: fmt.Errorf("%w: %v", errJSONPatchPanic, r)}
		}
	}()
	if root == nil {
		root = map[string]any{}
	}
	doc, err := json.Marshal(root)
	if err != nil {
		return nil, &PathError{Path: "", Op: "encode", Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	patch, err := p.jsonPatch()
	if err != nil {
		return nil, err
	}
	out, err := patch.ApplyWithOptions(doc, opts)
	if err != nil {
		// Apply one operation at a time, to name the failing one as Apply does. This can
		// also succeed: json-patch fails a test for null against a null that an earlier
		// operation of the same patch added (it sees a null node, not a missing one), and
		// passes it once the document has been encoded in between. The RFC says null equals
		// null, so the step-by-step result stands.
		for i := range patch {
			if doc, err = patch[i:i+1].ApplyWithOptions(doc, opts); err != nil {
				o := &p.ops[i]
				return nil, &PathError{Path: o.path, Op: o.kind.String(), Err: jsonPatchCause(err)}
			}
		}
		out = doc
	}
	if err := utiljson.Unmarshal(out, &result); err != nil {
		return nil, &PathError{Op: "decode", Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
	}
	return result, nil
}

// jsonPatch encodes the compiled operations as a json-patch Patch. Values are re-encoded
// from their decoded form, so numbers are in canonical form (1.0 becomes 1).
func (p *Patch) jsonPatch() (jsonpatch.Patch, error) {
	out := make(jsonpatch.Patch, len(p.ops))
	for i := range p.ops {
		o := &p.ops[i]
		kind, _ := json.Marshal(o.kind.String())
		path, _ := json.Marshal(o.path)
		k, pt := json.RawMessage(kind), json.RawMessage(path)
		out[i] = jsonpatch.Operation{"op": &k, "path": &pt}
		if o.kind != opRemove {
			v, err := json.Marshal(o.value)
			if err != nil {
				return nil, &PathError{Path: o.path, Op: o.kind.String(), Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
			}
			val := json.RawMessage(v)
			out[i]["value"] = &val
		}
	}
	return out, nil
}

// jsonPatchCause maps json-patch's errors to this package's sentinels.
func jsonPatchCause(err error) error {
	switch {
	case errors.Is(err, jsonpatch.ErrTestFailed):
		return fmt.Errorf("%w: %v", ErrTestFailed, err)
	case errors.Is(err, jsonpatch.ErrInvalidIndex):
		return fmt.Errorf("%w: %v", ErrInvalidIndex, err)
	default:
		return fmt.Errorf("%w: %v", ErrPathNotFound, err)
	}
}

// The fast path (Apply) must return what the json-patch path (ApplyJSONPatch) returns. These
// tests compare them on random objects and op lists, and check atomicity on the way.

// keys is a small alphabet so that random paths often hit existing members, including keys
// that need escaping and keys that look like array indexes.
var testKeys = []string{"a", "b", "c", "spec", "0", "1", "01", "-", "x/y", "t~n"}

func randValue(r *rand.Rand, depth int) any {
	n := r.IntN(10)
	if depth <= 0 && n >= 7 {
		n = r.IntN(7)
	}
	switch n {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.IntN(5) - 1)
	case 3:
		return []float64{0.5, 1.5, -2.25, 1e-7, 3e21}[r.IntN(5)]
	case 4, 5:
		return []string{"", "a", "b", "é", "<tag>", "1"}[r.IntN(6)]
	case 6:
		return float64(r.IntN(3)) // integral floats: 1.0 must equal 1
	case 7, 8:
		m := map[string]any{}
		for i, k := 0, r.IntN(4); i < k; i++ {
			m[testKeys[r.IntN(len(testKeys))]] = randValue(r, depth-1)
		}
		return m
	default:
		s := make([]any, r.IntN(4))
		for i := range s {
			s[i] = randValue(r, depth-1)
		}
		return s
	}
}

// randPath returns a pointer that usually follows the object's real structure.
func randPath(r *rand.Rand, root any) string {
	var toks []string
	cur := root
	for {
		if len(toks) > 0 && r.IntN(4) == 0 {
			break
		}
		switch c := cur.(type) {
		case map[string]any:
			if len(c) == 0 || r.IntN(5) == 0 {
				toks = append(toks, testKeys[r.IntN(len(testKeys))])
				cur = nil
				continue
			}
			i, pick := 0, r.IntN(len(c))
			for k, v := range c {
				if i == pick {
					toks = append(toks, k)
					cur = v
					break
				}
				i++
			}
			continue
		case []any:
			switch j := r.IntN(len(c) + 3); {
			case j < len(c):
				toks = append(toks, strconv.Itoa(j))
				cur = c[j]
				continue
			case j == len(c):
				toks = append(toks, "-")
			case j == len(c)+1:
				toks = append(toks, strconv.Itoa(len(c)))
			default:
				toks = append(toks, []string{"01", "-1", "+0", "x"}[r.IntN(4)])
			}
		default:
			if len(toks) == 0 || r.IntN(3) == 0 {
				toks = append(toks, testKeys[r.IntN(len(testKeys))])
			}
		}
		break
	}
	return Pointer(toks...)
}

func randOps(t testing.TB, r *rand.Rand, obj map[string]any) []federation.OverrideOp {
	ops := make([]federation.OverrideOp, 1+r.IntN(4))
	for i := range ops {
		x := federation.OverrideOp{
			Op:   []string{"", "add", "add", "remove", "replace", "test"}[r.IntN(6)],
			Path: randPath(r, obj),
		}
		if x.Op != "remove" {
			v := randValue(r, 2)
			if x.Op == "test" && r.IntN(2) == 0 {
				v = valueAt(obj, x.Path) // a test that can pass
			}
			raw, err := federation.NewRawValue(v)
			if err != nil {
				t.Fatal(err)
			}
			x.Value = raw
		}
		ops[i] = x
	}
	return ops
}

// valueAt returns the value at p, or nil.
func valueAt(root any, p string) any {
	toks, err := parsePointer(p)
	if err != nil {
		return nil
	}
	cur := root
	for _, tok := range toks {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := arrayIndex(tok, len(c), false)
			if err != nil {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// normalize round-trips v through JSON so that both paths' results compare by JSON value.
func normalize(t testing.TB, v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}

// knownDivergence reports an error of the fast path that json-patch does not raise, by design.
func knownDivergence(err error) bool {
	return errors.Is(err, errNonCanonicalIndex) || errors.Is(err, errTestAbsent)
}

// checkEquivalent applies ops both ways to obj and fails t on any difference. It returns
// false when the case hit a documented divergence.
func checkEquivalent(t testing.TB, obj map[string]any, ops []federation.OverrideOp) bool {
	t.Helper()
	before := deepCopyMap(obj)
	fast := &unstructured.Unstructured{Object: obj}
	fastErr := Apply(fast, ops)
	if diff := cmp.Diff(before, obj); diff != "" {
		t.Fatalf("Apply changed the input map in place (-before +after):\n%s", diff)
	}
	ref := &unstructured.Unstructured{Object: deepCopyMap(before)}
	refErr := ApplyJSONPatch(ref, ops)
	opsJSON, _ := json.Marshal(ops)
	objJSON, _ := json.Marshal(before)
	if fastErr != nil {
		var pe *PathError
		if !errors.As(fastErr, &pe) {
			t.Fatalf("Apply error %v (%T) is not a *PathError", fastErr, fastErr)
		}
		if diff := cmp.Diff(before, fast.Object); diff != "" {
			t.Fatalf("Apply failed (%v) but changed the object (-before +after):\n%s", fastErr, diff)
		}
	}
	switch {
	case refErr != nil && errors.Is(refErr, errJSONPatchPanic):
		return false // a json-patch bug: the fast path's answer is checked by the table tests
	case fastErr != nil && refErr == nil && knownDivergence(fastErr):
		return false
	case (fastErr == nil) != (refErr == nil):
		t.Fatalf("obj %s\nops %s\nApply error: %v\nApplyJSONPatch error: %v", objJSON, opsJSON, fastErr, refErr)
	case fastErr == nil:
		if diff := cmp.Diff(normalize(t, ref.Object), normalize(t, fast.Object)); diff != "" {
			t.Fatalf("obj %s\nops %s\nresults differ (-json-patch +fast):\n%s", objJSON, opsJSON, diff)
		}
	}
	return true
}

// TestApplyMatchesJSONPatch is the property test: thousands of random objects and op lists.
func TestApplyMatchesJSONPatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var ok, failed, diverged int
	for i := 0; i < n; i++ {
		obj, _ := randValue(r, 4).(map[string]any)
		if obj == nil {
			obj = map[string]any{"spec": randValue(r, 3)}
		}
		ops := randOps(t, r, obj)
		if !checkEquivalent(t, obj, ops) {
			diverged++
			continue
		}
		if Apply(&unstructured.Unstructured{Object: deepCopyMap(obj)}, ops) == nil {
			ok++
		} else {
			failed++
		}
	}
	t.Logf("%d cases: %d applied, %d failed the same way on both paths, %d documented divergences", n, ok, failed, diverged)
	if ok < n/10 || failed < n/10 {
		t.Errorf("the generator is unbalanced: %d applied, %d failed", ok, failed)
	}
}

// FuzzApplyMatchesJSONPatch compares both paths on arbitrary JSON objects and patches.
func FuzzApplyMatchesJSONPatch(f *testing.F) {
	f.Add([]byte(`{"spec":{"replicas":3,"list":[1,2]}}`), []byte(`[{"op":"replace","path":"/spec/replicas","value":4},{"op":"add","path":"/spec/list/1","value":{"a":1}}]`))
	f.Add([]byte(`{"a":[{"b":null}]}`), []byte(`[{"op":"test","path":"/a/0/b","value":null},{"op":"remove","path":"/a/0"}]`))
	f.Add([]byte(`{"metadata":{"labels":{"x/y":"1"}}}`), []byte(`[{"op":"add","path":"/metadata/labels/x~1y","value":1.0},{"path":"/metadata/labels/-","value":"z"}]`))
	f.Fuzz(func(t *testing.T, objJSON, opsJSON []byte) {
		var obj map[string]any
		if utiljson.Unmarshal(objJSON, &obj) != nil || obj == nil {
			return
		}
		var ops []federation.OverrideOp
		if json.Unmarshal(opsJSON, &ops) != nil {
			return
		}
		checkEquivalent(t, obj, ops)
	})
}

// TestDecodeValueFastPath checks the direct decoding against the API machinery's decoder on
// the values it handles and on those it must hand over.
func TestDecodeValueFastPath(t *testing.T) {
	for _, raw := range []string{
		`null`, `true`, `false`, ` 7 `, `0`, `-12`, `9223372036854775807`, `9223372036854775808`, `-0`, `01`,
		`1.5`, `1e3`, `"plain"`, `""`, `"with \"escape\""`, `"é"`, `"a\u0041"`, `{"a":1}`, `[1,"x"]`, `"unterminated`, `tru`,
	} {
		want, wantErr := (&federation.RawValue{Raw: []byte(raw)}).Decode()
		got, err := decodeValue([]byte(raw))
		require.Equal(t, wantErr != nil, err != nil, "%s: error %v; want %v", raw, err, wantErr)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decodeValue(%s) mismatch (-want +got):\n%s", raw, diff)
		}
	}
}
