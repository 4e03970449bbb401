package soak

import (
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/sync/plan"
)

// The features' checks at quiescence (see Features).

func (c *checker) checkFeatures() {
	s := c.w.stepState()
	c.checkGenerated()
	c.checkUnselected()
	c.checkDependencies(s)
	c.checkSecretsAt(s)
	c.checkAdopted(s)
}

// hostPolicies reads every policy on the host as propagation decides from them: an invalid
// one with its error (Decide keeps what it federated, Frozen).
func (w *World) hostPolicies() []propagation.Policy {
	var out []propagation.Policy
	for _, gvr := range []schema.GroupVersionResource{federation.PropagationPolicyGVR, federation.ClusterPropagationPolicyGVR} {
		for _, u := range w.Host.Objects(gvr) {
			p, err := propagation.DecodePolicy(u)
			if err != nil {
				p = propagation.Policy{Namespace: u.GetNamespace(), Name: u.GetName(), Err: err}
			}
			out = append(out, p)
		}
	}
	return out
}

// checkGenerated: every native Deployment that propagation.Decide gives a policy (from the
// policies on the host, and the policy that federates it now) has the Federated<Kind>
// propagation.Generate renders from it and that policy, with the preference its scheduling
// asks for; one whose policy is invalid keeps its generated object as it is (Frozen); no
// other native Deployment has one, nor any in a system namespace (RuleGeneratedMatches).
func (c *checker) checkGenerated() {
	typ := federation.DeploymentType
	policies := c.w.hostPolicies()
	for _, native := range c.w.Host.Objects(deploymentsGVR) {
		key := federation.Key{Namespace: native.GetNamespace(), Name: native.GetName()}
		name := "Deployment " + key.String()
		fed, _ := c.w.Host.Peek(typ.FederatedGVR(), key.Namespace, key.Name)
		if fed != nil && !propagation.Generated(fed) {
			continue // the user's own (none in the soak): left alone
		}
		if native.GetAPIVersion() == "" {
			native.SetAPIVersion("apps/v1")
			native.SetKind("Deployment")
		}
		var d propagation.Decision
		if native.GetDeletionTimestamp() == nil && propagation.Selectable(native) {
			holder := ""
			if fed != nil {
				holder = fed.GetAnnotations()[federation.PolicyAnnotation]
			}
			ns := make([]propagation.Policy, 0, len(policies))
			for _, p := range policies {
				if p.Cluster() || p.Namespace == key.Namespace {
					ns = append(ns, p)
				}
			}
			d = propagation.Decide(native, ns, holder)
		}
		switch {
		case d.Frozen:
			continue // its policy is invalid: what it federated stays as it is
		case d.Winner.Policy.Name == "":
			if fed != nil && fed.GetDeletionTimestamp() == nil {
				c.violate(RuleGeneratedMatches, name, "no valid policy selects it, yet its %s exists (policy %q)", typ.Federated.Kind, fed.GetAnnotations()[federation.PolicyAnnotation])
			}
			continue
		case fed == nil:
			c.violate(RuleGeneratedMatches, name, "%s selects it, and it has no %s", d.Winner.Policy.Ref(), typ.Federated.Kind)
			continue
		}
		want, err := propagation.Generate(typ, native, d.Winner.Policy)
		if err != nil {
			c.violate(RuleGeneratedMatches, name, "propagation.Generate under %s: %v", d.Winner.Policy.Ref(), err)
			continue
		}
		if got := fed.GetAnnotations()[federation.PolicyAnnotation]; got != d.Winner.Policy.Ref() {
			c.violate(RuleGeneratedMatches, name, "generated under policy %q; %s wins (of %d matching)", got, d.Winner.Policy.Ref(), len(d.Losers)+1)
		} else if !apiequality.Semantic.DeepEqual(fed.Object["spec"], want.Object["spec"]) {
			c.violate(RuleGeneratedMatches, name, "its %s's spec is not what %s renders from it:\ngot  %v\nwant %v", typ.Federated.Kind, d.Winner.Policy.Ref(), fed.Object["spec"], want.Object["spec"])
		}
		c.checkGeneratedPreference(name, typ, native, fed, d.Winner.Policy)
	}
}

// checkGeneratedPreference: the preference a policy's scheduling asks for exists as
// propagation.Preference renders it.
func (c *checker) checkGeneratedPreference(name string, typ federation.TypeConfig, native, fed *unstructured.Unstructured, p propagation.Policy) {
	want, err := propagation.Preference(typ, native, fed, p)
	if err != nil {
		c.violate(RuleGeneratedMatches, name, "propagation.Preference under %s: %v", p.Ref(), err)
		return
	}
	got, _ := c.w.Host.Peek(federation.ReplicaSchedulingPreferenceGVR, fed.GetNamespace(), fed.GetName())
	switch {
	case want == nil && got != nil && propagation.Generated(got):
		c.violate(RuleGeneratedMatches, name, "%s has no scheduling, yet a generated preference exists", p.Ref())
	case want != nil && got == nil:
		c.violate(RuleGeneratedMatches, name, "%s has scheduling, and there is no preference", p.Ref())
	case want != nil && !apiequality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"]):
		c.violate(RuleGeneratedMatches, name, "its preference's spec is %v; %s asks for %v", got.Object["spec"], p.Ref(), want.Object["spec"])
	}
}

// checkUnselected: the member copies of a native Deployment that no policy selects any more,
// and that still exists, keep running where they ran, no longer managed (RuleUnselectedKept).
func (c *checker) checkUnselected() {
	c.w.mu.Lock()
	released := slices.Clone(c.w.unselected)
	c.w.mu.Unlock()
	for _, r := range released {
		native, err := c.w.Host.Peek(deploymentsGVR, r.ns, r.name)
		if err != nil || native.GetDeletionTimestamp() != nil || string(native.GetUID()) != r.nativeUID {
			continue // the user deleted it: its copies go with it
		}
		if fed, err := c.w.Host.Peek(federation.DeploymentType.FederatedGVR(), r.ns, r.name); err == nil && propagation.Generated(fed) {
			continue // selected again
		}
		m := c.members[r.cluster]
		if m == nil || c.w.isLeaving(r.cluster) {
			continue
		}
		what := fmt.Sprintf("Deployment %s in %s", objectRef(r.ns, r.name), r.cluster)
		obj, err := m.Peek(deploymentsGVR, r.ns, r.name)
		switch {
		case err != nil || string(obj.GetUID()) != r.uid:
			c.violate(RuleUnselectedKept, what, "no policy selects its native Deployment any more (since step %d), and its copy there is gone", r.step)
		case managed(obj):
			c.violate(RuleUnselectedKept, what, "no policy selects its native Deployment any more (since step %d), and its copy there is still managed", r.step)
		}
	}
}

// unselectedCopy is a member copy of a native Deployment whose generated object went while
// the native Deployment stayed: no policy selected it any more.
type unselectedCopy struct {
	ns, name, nativeUID string
	cluster, uid        string
	step                int
}

// noteUnselected records the copies of the native Deployments whose generated object went
// in the step from prev to cur while the native Deployment stayed.
func (w *World) noteUnselected(prev, cur stepState) {
	for ref, copies := range prev.generated {
		if _, still := cur.generated[ref]; still {
			continue
		}
		ns, name := splitRef(ref)
		native, err := w.Host.Peek(deploymentsGVR, ns, name)
		if err != nil || native.GetDeletionTimestamp() != nil {
			continue
		}
		w.mu.Lock()
		for _, cl := range sortedKeys(copies) {
			w.unselected = append(w.unselected, unselectedCopy{ns: ns, name: name, nativeUID: string(native.GetUID()), cluster: cl, uid: copies[cl], step: w.where.step})
		}
		w.mu.Unlock()
	}
}

// generatedCopies reads the managed member copies of the objects policies generated: by
// namespace/name, the uid per cluster.
func (w *World) generatedCopies(s stepState) map[string]map[string]string {
	out := map[string]map[string]string{}
	typ := federation.DeploymentType
	for _, u := range s.fed[typ.Federated.Kind] {
		if !propagation.Generated(u) || u.GetDeletionTimestamp() != nil {
			continue
		}
		copies := map[string]string{}
		for name, m := range s.members {
			if obj, err := m.Peek(typ.TargetGVR(), u.GetNamespace(), u.GetName()); err == nil && managed(obj) {
				copies[name] = string(obj.GetUID())
			}
		}
		out[objectRef(u.GetNamespace(), u.GetName())] = copies
	}
	return out
}

func splitRef(ref string) (string, string) {
	for i := range len(ref) {
		if ref[i] == '/' {
			return ref[:i], ref[i+1:]
		}
	}
	return "", ref
}

// checkDependencies: every dependency a workload with spec.propagateDependencies refers to,
// after overrides, runs (managed) in every ready cluster the workload is placed in, unless
// it is missing on the host or its own placement excludes the cluster (RuleDependencies).
func (c *checker) checkDependencies(s stepState) {
	typ := federation.DeploymentType
	allowed := secretPlacesOf(s)
	for _, u := range c.w.Host.Objects(typ.FederatedGVR()) {
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil || !fed.Spec.PropagateDependencies || fed.DeletionTimestamp != nil {
			continue
		}
		t, err := plan.TargetsFor(fed, typ, c.clusters, c.w.Clock.Now())
		if err != nil {
			continue
		}
		refs := referencesByCluster(fed, s)
		for _, cluster := range t.Order {
			if c.cut[cluster] || !c.ready(cluster) {
				continue
			}
			for _, r := range refs[cluster] {
				c.checkDependency(fed, cluster, r, allowed)
			}
		}
	}
}

func (c *checker) checkDependency(fed *federation.FederatedObject, cluster string, r dependencies.Reference, allowed map[string]secretPlaces) {
	dtyp := map[string]federation.TypeConfig{dependencies.KindConfigMap: federation.ConfigMapType, dependencies.KindSecret: federation.SecretType,
		dependencies.KindPersistentVolumeClaim: federation.PersistentVolumeClaimType}[r.Kind]
	if dtyp.Federated.Kind == "" {
		return
	}
	if _, err := c.w.Host.Peek(nativeGVR(r.Kind), fed.Namespace, r.Name); err != nil {
		if _, ferr := c.w.Host.Peek(dtyp.FederatedGVR(), fed.Namespace, r.Name); ferr != nil {
			return // missing on the host: the workload's condition says so
		}
	}
	if r.Kind == dependencies.KindSecret && allowed[objectRef(fed.Namespace, r.Name)].excluded[cluster] {
		return // its own placement excludes the cluster: the exclusion wins
	}
	obj, err := c.members[cluster].Peek(dtyp.TargetGVR(), fed.Namespace, r.Name)
	if err == nil && !managed(obj) {
		return // an object of its name no federation manages: its federated object says so
	}
	if err != nil {
		c.violate(RuleDependencies, fmt.Sprintf("%s %s", fed.Kind, objectRef(fed.Namespace, fed.Name)), "placed in %s, where it refers to %s, which does not run there (managed)", cluster, r)
	}
}

// checkSecretsAt: at quiescence, every managed Secret copy is where its own placement or a
// workload referring to it there puts it, and none is where its own placement excludes it.
func (c *checker) checkSecretsAt(s stepState) {
	allowed := secretPlacesOf(s)
	for _, k := range sortedKeys(s.secrets) {
		cluster, ns, name := splitMemberKey(k)
		if c.cut[cluster] || !c.ready(cluster) {
			continue // nothing can be removed there now
		}
		p := allowed[objectRef(ns, name)]
		what := fmt.Sprintf("Secret %s in %s", objectRef(ns, name), cluster)
		switch {
		case p.excluded[cluster]:
			c.violate(RuleSecretExcluded, what, "runs in a cluster its own placement excludes")
		case !p.own[cluster] && !p.referenced[cluster]:
			c.violate(RuleSecretReferenced, what, "runs where neither its own placement (%v) nor a workload that refers to it there is placed (referred to in %v)",
				sortedKeys(p.own), sortedKeys(p.referenced))
		}
	}
}

// checkAdopted: every member object KubeFed made, in a ready cluster its migrated object is
// placed in, is the federation's now: managed, the same object (RuleAdoptedInPlace).
func (c *checker) checkAdopted(s stepState) {
	c.w.mu.Lock()
	kf := slices.Clone(c.w.kubeFed)
	c.w.mu.Unlock()
	for _, k := range kf {
		if !c.w.migratedObject(k.typ, k.ns, k.name) || c.cut[k.cluster] || !c.ready(k.cluster) {
			continue
		}
		u, err := c.w.Host.Peek(k.typ.FederatedGVR(), k.ns, k.name)
		if err != nil {
			continue
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			continue
		}
		t, err := plan.TargetsFor(fed, k.typ, c.clusters, c.w.Clock.Now())
		if err != nil || !slices.Contains(t.Order, k.cluster) {
			continue
		}
		what := fmt.Sprintf("%s %s in %s", k.typ.Target.Kind, objectRef(k.ns, k.name), k.cluster)
		obj, err := c.members[k.cluster].Peek(k.typ.TargetGVR(), k.ns, k.name)
		switch {
		case err != nil || string(obj.GetUID()) != k.uid:
			c.violate(RuleAdoptedInPlace, what, "KubeFed made it, its migrated object places it there, and it is not the same object any more")
		case !managed(obj):
			c.violate(RuleAdoptedInPlace, what, "KubeFed made it, its migrated object places it there, and the federation has not taken it over (labels %v)", obj.GetLabels())
		}
	}
}
