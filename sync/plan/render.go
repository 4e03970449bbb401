package plan

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// rendered is one cluster's render.
type rendered struct {
	obj *unstructured.Unstructured
	err error
	// unchanged: the member object is as the driver last wrote or verified it, for the
	// same input; it was not rendered.
	unchanged bool
}

// unchanged reports whether the member object in ms is as the driver left it (memo), for
// input key k: read whole, or only its version (MemberState.Version).
func unchanged(ms MemberState, memo Verified, k string) bool {
	rv := ms.Version
	if ms.Object != nil {
		rv = ms.Object.GetResourceVersion()
	}
	return rv != "" && memo.ResourceVersion == rv && memo.Input == k
}

// inputKeys returns the render input key of every cluster (see inputKey), computed at once.
// Equal keys are one string: a driver remembers one per member object (Verified), and the
// clusters of an object are mostly alike.
func inputKeys(in Input, prev *PreviousRevision, t Targets) map[string]string {
	out := make(map[string]string, len(in.Clusters))
	seen := map[string]string{}
	for i := range in.Clusters {
		k := inputKey(in, revisionFor(in, prev, in.Clusters[i].Name), t, in.Clusters[i].Name, in.Clusters[i].Labels)
		if held, ok := seen[k]; ok {
			k = held
		} else {
			seen[k] = k
		}
		out[in.Clusters[i].Name] = k
	}
	return out
}

// inputKey identifies everything a cluster's render depends on besides the member object: the
// federated object (uid and generation: its spec), the revision rev it renders, the cluster's
// replicas and labels (selector overrides), and the identity. Equal keys render equal objects
// from an unchanged member object.
func inputKey(in Input, rev int64, t Targets, cluster string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(string(in.Object.UID))
	b.WriteByte('/')
	b.WriteString(strconv.FormatInt(in.Object.Generation, 10))
	b.WriteByte('/')
	b.WriteString(strconv.FormatInt(rev, 10))
	b.WriteByte('/')
	b.WriteString(identityOr(in.Identity))
	b.WriteByte('/')
	if r := t.Replicas[cluster]; r != nil {
		b.WriteString(strconv.FormatInt(*r, 10))
	} else {
		b.WriteByte('-')
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString("/" + k + "=" + labels[k])
	}
	return b.String()
}

// renderPlaced renders every placed cluster that was read, but those the driver left as it
// verified them for their key (keys), from the revision each runs (prev's for the clusters a
// staged rollout holds back).
func renderPlaced(in Input, prev *PreviousRevision, t Targets, keys map[string]string) map[string]rendered {
	labels := clusterLabels(in.Clusters)
	members := make([]override.Member, 0, len(t.Order))
	out := make(map[string]rendered, len(t.Order))
	for _, name := range t.Order {
		ms, ok := in.Members[name]
		if !ok || ms.Err != nil {
			continue
		}
		if ms.Object != nil || ms.Version != "" {
			if memo := in.memo(name); memo.ResourceVersion != "" && unchanged(ms, memo, keys[name]) {
				out[name] = rendered{unchanged: true}
				continue
			}
		}
		if ms.Object == nil && ms.Version != "" {
			continue // only the version was read, and the memory does not vouch for it
		}
		members = append(members, override.Member{Name: name, Labels: labels[name], Replicas: t.Replicas[name], Existing: ms.Object})
	}
	members, held := heldBack(prev, members)
	for i, res := range renderMembers(renderer(in), renderInput(in), members) {
		out[members[i].Name] = withIdentity(rendered{obj: res.Object, err: res.Err}, in.Identity)
	}
	if len(held) > 0 {
		for i, res := range renderMembers(renderer(in), renderInput(forCluster(in, prev, held[0].Name)), held) {
			out[held[i].Name] = withIdentity(rendered{obj: res.Object, err: res.Err}, in.Identity)
		}
	}
	return out
}

// renderMembers is r.RenderMembers rendering once for the members whose render is bound to be
// the same, who then share the object: without overrides, the members without a member
// object and with the same replica count (a render then depends on nothing else about the
// cluster). That is most of a first propagation, whose every member is new. A failed shared
// render is done again for each member, so each error names its own cluster.
func renderMembers(r *override.Renderer, in override.Input, members []override.Member) []override.Rendered {
	if len(in.Overrides) > 0 || len(members) < 2 {
		return r.RenderMembers(in, members)
	}
	type sameAs struct{ member, first int }
	var (
		todo    = make([]override.Member, 0, len(members))
		at      = make([]int, len(members)) // members[i]'s render is todo's at[i]
		aliases []sameAs
		firsts  = map[int64]int{} // by replica count (-1: none), the first new member's
	)
	for i, m := range members {
		if m.Existing == nil {
			rep := int64(-1)
			if m.Replicas != nil {
				rep = *m.Replicas
			}
			if j, ok := firsts[rep]; ok {
				aliases = append(aliases, sameAs{i, j})
				continue
			}
			firsts[rep] = i
		}
		at[i] = len(todo)
		todo = append(todo, m)
	}
	if len(aliases) == 0 {
		return r.RenderMembers(in, members)
	}
	done := r.RenderMembers(in, todo)
	out := make([]override.Rendered, len(members))
	var again []int
	for i := range members {
		out[i] = done[at[i]]
	}
	for _, a := range aliases {
		out[a.member] = out[a.first]
		if out[a.first].Err != nil {
			again = append(again, a.member)
		}
	}
	if len(again) > 0 {
		retry := make([]override.Member, len(again))
		for k, i := range again {
			retry[k] = members[i]
		}
		for k, res := range r.RenderMembers(in, retry) {
			out[again[k]] = res
		}
	}
	return out
}

func renderer(in Input) *override.Renderer {
	if in.Renderer == nil {
		return &override.Renderer{}
	}
	return in.Renderer
}

func renderInput(in Input) override.Input {
	input := override.InputFor(in.Object, in.Type)
	input.Revision = in.Revision
	return input
}

func clusterLabels(clusters []federation.Cluster) map[string]map[string]string {
	out := make(map[string]map[string]string, len(clusters))
	for i := range clusters {
		out[clusters[i].Name] = clusters[i].Labels
	}
	return out
}

// withIdentity sets the managed-by label to this federation's identity. The render's labels
// map is its own (step 5 of the render pipeline), so it may be changed in place.
func withIdentity(r rendered, identity string) rendered {
	identity = identityOr(identity)
	if r.err != nil || r.obj == nil || identity == federation.ManagedByValue {
		return r
	}
	if m, ok := r.obj.Object["metadata"].(map[string]any); ok {
		if l, ok := m["labels"].(map[string]any); ok {
			l[federation.ManagedByLabel] = identity
		}
	}
	return r
}
