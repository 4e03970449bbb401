package override

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonpointer"
)

// Typed overriders (federation.ClusterOverride's Replicas, Images, Containers, Labels and
// Annotations) are rendered to operations against the object as it is when they apply, and
// applied at once, one overrider after the other, so that two image overrides of one entry
// compose (a registry for every container, then a tag for one). The raw ClusterOverrides of
// the entry apply last. Errors of typed overriders are *PathError values whose Op names the
// overrider ("images", "containers", ...).

// replicasPointer is the JSON pointer of typ's replica count, or "" when typ has none (it is
// not divisible).
func replicasPointer(typ federation.TypeConfig) string {
	return Pointer(typ.ReplicasFields()...)
}

// entryApplier applies override entries with one editor. Keeping one editor for all the
// entries of a render matters in copy-on-write mode: a container copied for one operation
// is owned by the editor and edited in place by the next ones, instead of copied again.
type entryApplier struct {
	e        *editor
	replicas string // JSON pointer of the replica count; "" when the type has none
	record   *[]op  // when set, every applied operation is appended (for the tests)
}

// run applies entry o (whose raw operations are compiled in raw) to root, in the documented
// order: replicas, images, containers, labels, annotations, then the raw operations. Each
// typed overrider reads the object as the previous ones left it, so they compose.
func (a *entryApplier) run(root map[string]any, o *federation.ClusterOverride, raw *Patch) error {
	if o.Replicas != nil {
		// "add" rather than "replace": a template may leave the count out (the API server
		// defaults it), and the override must still set it.
		if a.replicas == "" {
			return fmt.Errorf("%w: replicas: the type has no replica count (its TypeConfig has no ReplicasPath)", ErrInvalidOverride)
		}
		if *o.Replicas < 0 {
			return &PathError{Path: a.replicas, Op: "replicas", Err: fmt.Errorf("%w: replicas %d is negative", ErrInvalidOverride, *o.Replicas)}
		}
		if err := a.emit(root, opAdd, a.replicas, *o.Replicas); err != nil {
			return err
		}
	}
	for i := range o.Images {
		if err := a.image(root, &o.Images[i]); err != nil {
			return err
		}
	}
	for i := range o.Containers {
		if err := a.container(root, &o.Containers[i]); err != nil {
			return err
		}
	}
	if err := a.stringMap(root, "labels", o.Labels); err != nil {
		return err
	}
	if err := a.stringMap(root, "annotations", o.Annotations); err != nil {
		return err
	}
	for i := range raw.opsOrNil() {
		if err := a.apply(root, &raw.ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// opsOrNil returns the compiled operations of a possibly nil Patch.
func (p *Patch) opsOrNil() []op {
	if p == nil {
		return nil
	}
	return p.ops
}

// emit builds an operation from a value already decoded and applies it; typed overriders
// never encode their values to JSON.
func (a *entryApplier) emit(root map[string]any, kind opKind, path string, value any) error {
	o, err := newOp(kind, path, value)
	if err != nil {
		return err
	}
	return a.apply(root, &o)
}

// apply applies one compiled operation, recording it when asked to.
func (a *entryApplier) apply(root map[string]any, o *op) error {
	if err := a.e.apply(root, o); err != nil {
		return err
	}
	if a.record != nil {
		*a.record = append(*a.record, *o)
	}
	return nil
}

// image applies one image override to the matching containers and init containers. Every
// matched image must parse: an image this package cannot read is reported, never skipped,
// because skipping would leave that container pulling from the registry the override was
// meant to replace (a mirror the cluster can reach). An image that the override leaves
// unchanged renders no operation.
func (a *entryApplier) image(root map[string]any, o *federation.ImageOverride) error {
	base, spec := podSpec(root)
	if spec == nil {
		return &PathError{Path: "/spec", Op: "images", Err: fmt.Errorf("%w: the object has no pod template", ErrContainerNotFound)}
	}
	matched := false
	for _, list := range [...]string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for i, c := range containers {
			cm, _ := c.(map[string]any)
			name, _ := cm["name"].(string)
			if o.ContainerName != "" && name != o.ContainerName {
				continue
			}
			matched = true
			path := base + "/" + list + "/" + strconv.Itoa(i) + "/image"
			old, ok := cm["image"].(string)
			if !ok {
				return &PathError{Path: path, Op: "images", Err: fmt.Errorf("%w: container %q has no image", ErrInvalidImage, name)}
			}
			s, err := overrideImage(old, o)
			if err != nil {
				return &PathError{Path: path, Op: "images", Err: fmt.Errorf("container %q: %w", name, err)}
			}
			if s != old {
				if err := a.emit(root, opReplace, path, s); err != nil {
					return err
				}
			}
		}
	}
	if !matched {
		what := "no containers"
		if o.ContainerName != "" {
			what = fmt.Sprintf("no container named %q", o.ContainerName)
		}
		return &PathError{Path: base, Op: "images", Err: fmt.Errorf("%w: %s", ErrContainerNotFound, what)}
	}
	return nil
}

// container applies one container override: command, args, env set, env remove. Command
// and args are replaced whole (with "add", which also creates them): appending to an
// argument list positionally is fragile across template changes, so an override states the
// list it wants. Env variables are merged by name instead, because the template's other
// variables must stay.
func (a *entryApplier) container(root map[string]any, o *federation.ContainerOverride) error {
	base, c := findContainer(root, o.Name)
	if c == nil {
		return &PathError{Path: base, Op: "containers", Err: fmt.Errorf("%w: no container named %q", ErrContainerNotFound, o.Name)}
	}
	if len(o.Command) > 0 {
		if err := a.emit(root, opAdd, base+"/command", stringList(o.Command)); err != nil {
			return err
		}
	}
	if len(o.Args) > 0 {
		if err := a.emit(root, opAdd, base+"/args", stringList(o.Args)); err != nil {
			return err
		}
	}
	if len(o.Env) > 0 {
		if err := a.setEnv(root, base, o); err != nil {
			return err
		}
	}
	if len(o.RemoveEnv) > 0 {
		// Find the container again: setEnv may have replaced it (copy-on-write) and its env.
		_, c = findContainer(root, o.Name)
		env, _ := c["env"].([]any)
		var drop []int
		for i, e := range env {
			em, _ := e.(map[string]any)
			name, _ := em["name"].(string)
			for _, r := range o.RemoveEnv {
				if r == name {
					drop = append(drop, i)
					break
				}
			}
		}
		for k := len(drop) - 1; k >= 0; k-- { // from the end, so indexes stay valid
			if err := a.emit(root, opRemove, base+"/env/"+strconv.Itoa(drop[k]), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// setEnv replaces variables of the same name in place (keeping their position, which
// matters for $(VAR) references to earlier variables) and appends the others in order. The
// typed corev1.EnvVar is converted to its unstructured form, so valueFrom works as written.
func (a *entryApplier) setEnv(root map[string]any, base string, o *federation.ContainerOverride) error {
	_, c := findContainer(root, o.Name)
	env, hasEnv := c["env"].([]any)
	for i := range o.Env {
		v, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o.Env[i])
		if err != nil {
			return &PathError{Path: base + "/env", Op: "containers", Err: fmt.Errorf("%w: env %q: %v", ErrInvalidOverride, o.Env[i].Name, err)}
		}
		at := -1
		for j, e := range env {
			if em, _ := e.(map[string]any); em != nil && em["name"] == o.Env[i].Name {
				at = j
				break
			}
		}
		switch {
		case at >= 0:
			err = a.emit(root, opReplace, base+"/env/"+strconv.Itoa(at), v)
		case !hasEnv:
			err = a.emit(root, opAdd, base+"/env", []any{v})
			hasEnv = true
		default:
			err = a.emit(root, opAdd, base+"/env/-", v)
		}
		if err != nil {
			return err
		}
		// The next variable must see this one (a name may not be set twice, but the
		// index of an append depends on what was appended before).
		_, c = findContainer(root, o.Name)
		env, _ = c["env"].([]any)
	}
	return nil
}

// stringMap applies a labels or annotations override: keys set in sorted order (one add of
// the whole map when the object has none), then present keys removed. Sorting makes the
// rendered operations deterministic (Go map order is not); removing an absent key is not
// an error, since the override states the end result, not a change.
func (a *entryApplier) stringMap(root map[string]any, field string, o *federation.MapOverride) error {
	if o == nil {
		return nil
	}
	meta, _ := root["metadata"].(map[string]any)
	current, has := meta[field].(map[string]any)
	if len(o.Set) > 0 {
		if !has {
			m := make(map[string]any, len(o.Set))
			for k, v := range o.Set {
				m[k] = v
			}
			if meta == nil {
				if err := a.emit(root, opAdd, "/metadata", map[string]any{field: m}); err != nil {
					return err
				}
			} else if err := a.emit(root, opAdd, "/metadata/"+field, m); err != nil {
				return err
			}
		} else {
			keys := make([]string, 0, len(o.Set))
			for k := range o.Set {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := a.emit(root, opAdd, "/metadata/"+field+"/"+jsonpointer.Escape(k), o.Set[k]); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range o.Remove {
		if _, ok := current[k]; ok {
			if err := a.emit(root, opRemove, "/metadata/"+field+"/"+jsonpointer.Escape(k), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// podSpec finds the pod spec of root: the first of podSpecPaths that holds containers or
// init containers. It returns its JSON pointer and the spec, or nil.
func podSpec(root map[string]any) (string, map[string]any) {
	// Where pod specs live: workloads, CronJobs, Pods.
	podSpecPaths := [...][]string{
		{"spec", "template", "spec"},
		{"spec", "jobTemplate", "spec", "template", "spec"},
		{"spec"},
	}
	for _, path := range podSpecPaths {
		m := root
		for _, f := range path {
			m, _ = m[f].(map[string]any)
		}
		if m == nil {
			continue
		}
		if _, ok := m["containers"]; ok {
			return "/" + strings.Join(path, "/"), m
		}
		if _, ok := m["initContainers"]; ok {
			return "/" + strings.Join(path, "/"), m
		}
	}
	return "/spec/template/spec", nil
}

// findContainer returns the JSON pointer and contents of the container or init container
// named name, or nil.
func findContainer(root map[string]any, name string) (string, map[string]any) {
	base, spec := podSpec(root)
	for _, list := range [...]string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for i, c := range containers {
			if cm, _ := c.(map[string]any); cm != nil && cm["name"] == name {
				return base + "/" + list + "/" + strconv.Itoa(i), cm
			}
		}
	}
	return base + "/containers", nil
}

// stringList converts to the unstructured form of a list of strings.
func stringList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
