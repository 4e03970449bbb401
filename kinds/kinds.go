package kinds

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Sentinel errors of Compile and Evaluate.
var (
	// ErrInvalidRules is wrapped by Compile's error when a rule does not compile.
	ErrInvalidRules = errors.New("kinds: invalid rules")
	// ErrRuleFailed is wrapped by Evaluate's error when a rule fails on an object.
	ErrRuleFailed = errors.New("kinds: rule failed")
)

// CostLimit bounds one rule's evaluation, in CEL's cost units (about one per field read or
// comparison; a list's size per walk over it), as Kubernetes bounds a validation rule: a rule
// over an object of a few thousand fields fits, one that loops over a large list twice
// nested does not, and fails instead of holding a loop's worker.
const CostLimit = 1_000_000

// Rules are a kind's compiled rules. A nil *Rules (a kind without rules) evaluates nothing.
// Rules are immutable and safe for concurrent use.
type Rules struct {
	ints    []intRule
	ready   *rule
	message *rule
	status  []namedRule
	deps    []depRule
	retain  []string
}

type rule struct {
	field string // spec.rules.ready, for errors
	prg   cel.Program
}

type intRule struct {
	rule
	set func(*Result, int64)
}

type namedRule struct {
	name string
	rule
}

type depRule struct {
	kind string
	rule
}

// Result is what the rules say of one object. A field whose rule is empty stays nil (or
// empty): the caller's default applies.
type Result struct {
	ObservedGeneration                                *int64
	ReadyReplicas, AvailableReplicas, UpdatedReplicas *int64
	// Ready is the ready rule's answer, and Message the message rule's when Ready is false.
	Ready   *bool
	Message string
	// Status holds the status rules' values by name (JSON values).
	Status map[string]any
}

// Compile compiles t's rules (t.Rules; nil compiles to nil Rules, no error). Its error wraps
// ErrInvalidRules and names each rule that does not compile, with CEL's message.
func Compile(t federation.TypeConfig) (*Rules, error) {
	kr := t.Rules
	if kr == nil {
		return nil, nil
	}
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("kinds: CEL environment: %w", err)
	}
	c := compiler{env: env}
	r := &Rules{retain: slices.Clone(kr.Retain)}
	for _, x := range []struct {
		field, expr string
		set         func(*Result, int64)
	}{
		{"observedGeneration", kr.ObservedGeneration, func(r *Result, n int64) { r.ObservedGeneration = &n }},
		{"readyReplicas", kr.ReadyReplicas, func(r *Result, n int64) { r.ReadyReplicas = &n }},
		{"availableReplicas", kr.AvailableReplicas, func(r *Result, n int64) { r.AvailableReplicas = &n }},
		{"updatedReplicas", kr.UpdatedReplicas, func(r *Result, n int64) { r.UpdatedReplicas = &n }},
	} {
		if p := c.compile(x.field, x.expr, cel.IntType); p != nil {
			r.ints = append(r.ints, intRule{rule: *p, set: x.set})
		}
	}
	r.ready = c.compile("ready", kr.Ready, cel.BoolType)
	r.message = c.compile("message", kr.Message, cel.StringType)
	for _, name := range slices.Sorted(maps.Keys(kr.Status)) {
		if p := c.compile("status."+name, kr.Status[name], nil); p != nil {
			r.status = append(r.status, namedRule{name: name, rule: *p})
		}
	}
	for i, d := range kr.Dependencies {
		if p := c.compile(fmt.Sprintf("dependencies[%d].names", i), d.Names, cel.ListType(cel.StringType)); p != nil {
			r.deps = append(r.deps, depRule{kind: d.Kind, rule: *p})
		}
		switch d.Kind {
		case "ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim":
		default:
			c.errs = append(c.errs, fmt.Sprintf("spec.rules.dependencies[%d].kind: %q is not ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim", i, d.Kind))
		}
	}
	for i, p := range kr.Retain {
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") || p == "metadata" || strings.HasPrefix(p, "metadata.") {
			c.errs = append(c.errs, fmt.Sprintf("spec.rules.retain[%d]: %q: want a dotted path outside metadata, such as spec.clusterIP", i, p))
		}
	}
	if len(c.errs) > 0 {
		return nil, fmt.Errorf("%w of %s: %s", ErrInvalidRules, t.Target.Kind, strings.Join(c.errs, "; "))
	}
	return r, nil
}

func newEnv() (*cel.Env, error) {
	return cel.NewEnv(cel.Variable("self", cel.DynType), ext.Strings(), ext.Lists(), ext.Sets())
}

type compiler struct {
	env  *cel.Env
	errs []string
}

// compile compiles expr (empty: nil) and checks that it can return want (nil: anything).
func (c *compiler) compile(field, expr string, want *cel.Type) *rule {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	field = "spec.rules." + field
	ast, iss := c.env.Compile(expr)
	if iss.Err() != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s: %s", field, oneLine(iss.Err().Error())))
		return nil
	}
	if out := ast.OutputType(); want != nil && !out.IsEquivalentType(cel.DynType) && !out.IsAssignableType(want) {
		c.errs = append(c.errs, fmt.Sprintf("%s: %q returns %s, want %s", field, expr, out, want))
		return nil
	}
	prg, err := c.env.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s: %s", field, oneLine(err.Error())))
		return nil
	}
	return &rule{field: field, prg: prg}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// eval runs r over obj.
func (r *rule) eval(obj map[string]any) (ref.Val, error) {
	out, _, err := r.prg.Eval(map[string]any{"self": obj})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRuleFailed, r.field, err)
	}
	if types.IsError(out) {
		return nil, fmt.Errorf("%w: %s: %v", ErrRuleFailed, r.field, out)
	}
	return out, nil
}

// Evaluate evaluates every rule but the dependencies over obj (read only). Its error wraps
// ErrRuleFailed and names the first rule that failed.
func (r *Rules) Evaluate(obj *unstructured.Unstructured) (Result, error) {
	var res Result
	if r == nil {
		return res, nil
	}
	for _, x := range r.ints {
		v, err := x.eval(obj.Object)
		if err != nil {
			return Result{}, err
		}
		n, ok := integer(v.Value())
		if !ok {
			return Result{}, fmt.Errorf("%w: %s: returned %s, want an int", ErrRuleFailed, x.field, v.Type())
		}
		x.set(&res, n)
	}
	if r.ready != nil {
		v, err := r.ready.eval(obj.Object)
		if err != nil {
			return Result{}, err
		}
		b, ok := v.Value().(bool)
		if !ok {
			return Result{}, fmt.Errorf("%w: %s: returned %s, want a bool", ErrRuleFailed, r.ready.field, v.Type())
		}
		res.Ready = &b
		if !b && r.message != nil {
			m, err := r.message.eval(obj.Object)
			if err != nil {
				return Result{}, err
			}
			s, ok := m.Value().(string)
			if !ok {
				return Result{}, fmt.Errorf("%w: %s: returned %s, want a string", ErrRuleFailed, r.message.field, m.Type())
			}
			res.Message = s
		}
	}
	for _, s := range r.status {
		v, err := s.eval(obj.Object)
		if err != nil {
			return Result{}, err
		}
		j, err := jsonValue(v)
		if err != nil {
			return Result{}, fmt.Errorf("%w: %s: %v", ErrRuleFailed, s.field, err)
		}
		if res.Status == nil {
			res.Status = map[string]any{}
		}
		res.Status[s.name] = j
	}
	return res, nil
}

// integer is x as an int64: an int, a uint that fits, or a double without a fraction (JSON
// decoded without int64s has only doubles).
func integer(x any) (int64, bool) {
	switch n := x.(type) {
	case int64:
		return n, true
	case uint64:
		return int64(n), n <= math.MaxInt64
	case float64:
		return int64(n), n == math.Trunc(n) && math.Abs(n) < 1<<53
	}
	return 0, false
}

var structValue = reflect.TypeFor[*structpb.Value]()

// jsonValue converts a CEL value to a JSON value (map[string]any, []any, string, float64 or
// int64, bool, nil).
func jsonValue(v ref.Val) (any, error) {
	switch x := v.Value().(type) {
	case int64, string, bool, float64, nil:
		return x, nil
	case uint64:
		return int64(x), nil
	}
	pb, err := v.ConvertToNative(structValue)
	if err != nil {
		return nil, fmt.Errorf("a %s is no JSON value", v.Type())
	}
	return pb.(*structpb.Value).AsInterface(), nil
}

// Dependencies evaluates the dependency rules over obj: the names of each kind it refers to,
// sorted and without duplicates. Its error wraps ErrRuleFailed and names the rule.
func (r *Rules) Dependencies(obj map[string]any) (map[string][]string, error) {
	if r == nil || len(r.deps) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, d := range r.deps {
		v, err := d.eval(obj)
		if err != nil {
			return nil, err
		}
		names, err := v.ConvertToNative(reflect.TypeFor[[]string]())
		if err != nil {
			return nil, fmt.Errorf("%w: %s: returned %s, want a list of strings", ErrRuleFailed, d.field, v.Type())
		}
		for _, n := range names.([]string) {
			if n != "" {
				out[d.kind] = append(out[d.kind], n)
			}
		}
	}
	for k, v := range out {
		slices.Sort(v)
		out[k] = slices.Compact(v)
	}
	return out, nil
}

// HasDependencies reports whether the rules name any dependency.
func (r *Rules) HasDependencies() bool { return r != nil && len(r.deps) > 0 }

// Retain returns the dotted paths of the fields the member owns (spec.rules.retain).
func (r *Rules) Retain() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.retain)
}
