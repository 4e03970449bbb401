package propagation_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
)

// The objects of the DecideWrites tables: shop/web, a Deployment (generation 3), the
// ClusterPropagationPolicy web that selects it by label, and what the loop generates.
var (
	cppWeb  = policy("", "web", 0, byLabel)
	ppTeam  = policy("shop", "team", 0, byName)
	fedType = federation.DeploymentType
)

// edit returns a copy of u changed by each of fs.
func edit(u *unstructured.Unstructured, fs ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range fs {
		f(u)
	}
	return u
}

func annotated(k, v string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[k] = v
		u.SetAnnotations(ann)
	}
}

func unannotated(k string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		ann := u.GetAnnotations()
		delete(ann, k)
		u.SetAnnotations(ann)
	}
}

func deleting(u *unstructured.Unstructured) {
	now := metav1.Unix(1, 0)
	u.SetDeletionTimestamp(&now)
}

func inNamespace(ns string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { u.SetNamespace(ns) }
}

// nativeWeb is shop/web as read, without (federatedBy "") or with the policy annotation.
func nativeWeb(t *testing.T, federatedBy string) *unstructured.Unstructured {
	u := decode(t, nativeDeployment("web", "nginx:1"))
	u.SetUID("native-uid")
	u.SetResourceVersion("10")
	u.SetGeneration(3)
	if federatedBy != "" {
		annotated(federation.PolicyAnnotation, federatedBy)(u)
	}
	return u
}

// generated is what the loop writes for native under p, as read back.
func generated(t *testing.T, native *unstructured.Unstructured, p propagation.Policy) *unstructured.Unstructured {
	t.Helper()
	u, err := propagation.Generate(fedType, native, p)
	if err != nil {
		t.Fatal(err)
	}
	u.SetUID("fed-uid")
	u.SetResourceVersion("20")
	return u
}

// preference is a ReplicaSchedulingPreference of shop/web: generated and owned by owner, or
// (owner nil) written by hand.
func preference(owner *unstructured.Unstructured) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("core.federation.k8s.io/v1alpha1")
	u.SetKind("ReplicaSchedulingPreference")
	u.SetNamespace("shop")
	u.SetName("web")
	u.SetUID("rsp-uid")
	if owner != nil {
		u.SetLabels(map[string]string{federation.GeneratedByLabel: federation.GeneratedByPropagation})
		u.SetOwnerReferences([]metav1.OwnerReference{{Name: owner.GetName(), UID: owner.GetUID()}})
	}
	return u
}

// withAggregate gives a generated object the fleet's counts.
func withAggregate(u *unstructured.Unstructured) {
	_ = unstructured.SetNestedMap(u.Object, map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(2)}, "status", "aggregated")
}

// summary is one line per decision of w: the policy, a read asked for, each write (a
// patch's JSON, the loop's annotations of an object sent, a status sent, a delete's
// preconditions, the event on its answer), whether to decide again, each warning.
func summary(w propagation.Writes) []string {
	var out []string
	if win := w.Policy.Winner.Policy; win.Name != "" {
		s := "policy " + win.Ref()
		if w.Policy.Frozen {
			s += " (frozen)"
		}
		out = append(out, s)
	}
	switch w.Read {
	case propagation.Cached:
		out = append(out, "read the preference (cached)")
	case propagation.Live:
		out = append(out, "read the preference (live)")
	}
	for _, x := range w.Writes {
		s := string(x.Verb) + " " + string(x.Target)
		switch x.Verb {
		case propagation.Patch:
			data, _ := json.Marshal(x.Patch)
			s += " " + string(data)
		case propagation.Create, propagation.Update:
			var anns []string
			for _, k := range []string{federation.PolicyAnnotation, federation.OrphanAnnotation, federation.RemovalAnnotation, federation.RolledBackAnnotation} {
				if v, ok := x.Object.GetAnnotations()[k]; ok {
					anns = append(anns, strings.TrimPrefix(k, "federation.k8s.io/")+"="+v)
				}
			}
			s += " [" + strings.Join(anns, " ") + "]"
		case propagation.UpdateStatus:
			data, _ := json.Marshal(x.Object.Object["status"])
			s += " " + string(data)
		case propagation.Delete:
			if p := x.Preconditions.UID; p != nil {
				s += " uid=" + string(*p)
			}
			if p := x.Preconditions.ResourceVersion; p != nil {
				s += " resourceVersion=" + *p
			}
		}
		if e := x.Event; e != nil {
			s += fmt.Sprintf(" -> %s %s: %s", e.Type, e.Reason, e.Message)
		}
		out = append(out, s)
	}
	if w.Again {
		out = append(out, "again")
	}
	for _, x := range w.Warnings {
		out = append(out, "warn "+x.Reason+": "+x.Message)
	}
	return out
}

// TestDecideWrites is the table of the Propagator's decisions over one native object: which
// policy federates it, and what that writes, each write decided on the answer to the one
// before.
func TestDecideWrites(t *testing.T) {
	fresh := nativeWeb(t, "")
	native := nativeWeb(t, "cluster/web")
	fed := generated(t, native, cppWeb)
	// A template rolled back by sync: the generated object holds nginx:0 and the mark.
	rolledBack := edit(fed, annotated(federation.RolledBackAnnotation, "1"), func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "web", "image": "nginx:0"}}, "spec", "template", "spec", "template", "spec", "containers")
	})
	scheduled := cppWeb
	scheduled.Spec.Scheduling = &federation.PolicyScheduling{}
	invalid := cppWeb
	invalid.Err = errors.New("spec.overrides[0].path: invalid")
	preempting := ppTeam
	preempting.Spec.Preemption = federation.PreemptAlways
	removing := cppWeb
	removing.Spec.Removal = federation.PolicyRemovalDelete

	for _, tc := range []struct {
		name string
		in   propagation.Input
		want []string
	}{
		// Policy match, priority, preemption.
		{name: "the preference is read before anything is decided of a selected object",
			in:   propagation.Input{Native: fresh, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web", "read the preference (cached)"}},
		{name: "the best match federates an object nobody federates: its annotation first",
			in: propagation.Input{Native: fresh, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb, policy("", "low", -1, byKind)}},
			want: []string{"policy cluster/web",
				`patch native {"metadata":{"annotations":{"federation.k8s.io/policy":"cluster/web"}}} -> Normal PolicyChanged: federated by ClusterPropagationPolicy cluster/web (priority 0, selected by labels); also matched: cluster/low (priority -1 is lower than 0)`,
				"again"}},
		{name: "then the generated object, on the annotated native object",
			in:   propagation.Input{Native: native, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web", "create federated [policy=cluster/web]", "again"}},
		{name: "nothing when everything is as decided",
			in:   propagation.Input{Native: native, Federated: fed, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web"}},
		{name: "the fleet's counts go to the native status",
			in: propagation.Input{Native: native, Federated: edit(fed, withAggregate), Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web",
				`updateStatus native {"availableReplicas":1,"readyReplicas":1,"replicas":2,"updatedReplicas":2}`}},
		{name: "a policy of higher priority takes an object nobody federates",
			in:   propagation.Input{Native: native, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb, policy("shop", "high", 5, byKind)}},
			want: []string{"policy shop/high", `patch native {"metadata":{"annotations":{"federation.k8s.io/policy":"shop/high"}}} -> Normal PolicyChanged: federated by PropagationPolicy shop/high (priority 5, selected by kind); was cluster/web; also matched: cluster/web (priority 0 is lower than 5)`, "again"}},
		{name: "but not one another federates, without preemption",
			in:   propagation.Input{Native: native, Federated: fed, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb, policy("shop", "high", 5, byKind)}},
			want: []string{"policy cluster/web"}},
		{name: "a PropagationPolicy with preemption Always takes it from a ClusterPropagationPolicy",
			in:   propagation.Input{Native: native, Federated: fed, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb, preempting}},
			want: []string{"policy shop/team", `patch native {"metadata":{"annotations":{"federation.k8s.io/policy":"shop/team"}}} -> Normal PolicyChanged: federated by PropagationPolicy shop/team (priority 0, selected by name); was cluster/web; also matched: cluster/web (a ClusterPropagationPolicy loses to a PropagationPolicy of equal priority)`, "again"}},
		{name: "the annotated object is rendered from the new winner",
			in:   propagation.Input{Native: nativeWeb(t, "shop/team"), Federated: fed, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb, preempting}},
			want: []string{"policy shop/team", "update federated [policy=shop/team]", "again"}},

		// An invalid policy keeps its last decision.
		{name: "an invalid policy that federates the object freezes it: only the counts are written",
			in: propagation.Input{Native: edit(native, func(u *unstructured.Unstructured) { u.SetGeneration(4) }), Federated: edit(fed, withAggregate), Read: propagation.Cached, Policies: []propagation.Policy{invalid, preempting}},
			want: []string{"policy cluster/web (frozen)",
				`updateStatus native {"availableReplicas":1,"readyReplicas":1,"replicas":2,"updatedReplicas":2}`,
				"warn PolicyInvalid: policy cluster/web is invalid, so FederatedDeployment shop/web keeps its last valid spec: spec.overrides[0].path: invalid"}},
		{name: "an invalid policy selects nothing new",
			in:   propagation.Input{Native: fresh, Policies: []propagation.Policy{invalid}},
			want: nil},

		// Unmatched or deleted policies orphan; spec.removal Delete deletes.
		{name: "no policy selects it any more: the preference is read live before anything goes",
			in:   propagation.Input{Native: native, Federated: fed, Preference: preference(fed), Read: propagation.Cached},
			want: []string{"read the preference (live)"}},
		{name: "its preference goes, and the generated object is marked orphaning",
			in:   propagation.Input{Native: native, Federated: fed, Preference: preference(fed), Read: propagation.Live},
			want: []string{"delete preference uid=rsp-uid", "update federated [policy=cluster/web orphan=true]", "again"}},
		{name: "then the marked version goes, and the native object is let go",
			in: propagation.Input{Native: native, Federated: edit(fed, annotated(federation.OrphanAnnotation, "true")), Read: propagation.Live},
			want: []string{"delete federated uid=fed-uid resourceVersion=20",
				`patch native {"metadata":{"annotations":{"federation.k8s.io/policy":null}}} -> Normal PolicyRemoved: no policy selects it any more (was cluster/web): FederatedDeployment web deleted; its member copies keep running, no longer managed`}},
		{name: "the native object loses the fleet's counts",
			in: propagation.Input{Native: edit(native, unannotated(federation.PolicyAnnotation), func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(2), "status", "replicas")
			}), Read: propagation.Live},
			want: []string{"updateStatus native {}"}},
		{name: "a preference another object owns is not deleted",
			in:   propagation.Input{Native: native, Federated: fed, Preference: preference(fresh), Read: propagation.Live},
			want: []string{"update federated [policy=cluster/web orphan=true]", "again"}},
		{name: "spec.removal Delete: the generated object goes unmarked, and the copies with it",
			in: propagation.Input{Native: native, Federated: generated(t, native, removing), Read: propagation.Live},
			want: []string{"delete federated uid=fed-uid",
				`patch native {"metadata":{"annotations":{"federation.k8s.io/policy":null}}} -> Normal PolicyRemoved: no policy selects it any more (was cluster/web): FederatedDeployment web deleted; its member copies are deleted`}},
		{name: "a deleted native object takes its generated object along, unmarked",
			in:   propagation.Input{Native: edit(native, deleting), Federated: fed, Read: propagation.Live, Policies: []propagation.Policy{cppWeb}},
			want: []string{"delete federated uid=fed-uid"}},
		{name: "a native object that is gone, too",
			in:   propagation.Input{Federated: fed, Read: propagation.Live, Policies: []propagation.Policy{cppWeb}},
			want: []string{"delete federated uid=fed-uid"}},
		{name: "a generated object being deleted is left to sync",
			in:   propagation.Input{Native: native, Federated: edit(fed, deleting), Read: propagation.Live},
			want: []string{`patch native {"metadata":{"annotations":{"federation.k8s.io/policy":null}}} -> Normal PolicyRemoved: no policy selects it any more (was cluster/web): FederatedDeployment web deleted; its member copies are deleted`}},

		// What no policy selects.
		{name: "nothing in a system namespace", in: propagation.Input{Native: edit(fresh, inNamespace("kube-system")), Policies: []propagation.Policy{policy("", "all", 0, byKind)}}},
		{name: "nothing in the control plane's namespace",
			in: propagation.Input{Native: edit(fresh, inNamespace("fedkit-system")), ControlPlaneNamespace: "fedkit-system", Policies: []propagation.Policy{policy("", "all", 0, byKind)}}},
		{name: "a member copy on the host is not selected",
			in: propagation.Input{Native: edit(fresh, func(u *unstructured.Unstructured) {
				u.SetLabels(map[string]string{"app": "web", federation.ManagedByLabel: "fedkit"})
			}), Policies: []propagation.Policy{cppWeb}}},
		{name: "a Federated<Kind> written by hand is left alone",
			in:   propagation.Input{Native: native, Federated: edit(fed, func(u *unstructured.Unstructured) { u.SetLabels(nil) }), Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web", "warn FederatedByHand: FederatedDeployment shop/web exists and was not generated from this Deployment: it is left alone, and so is this object"}},

		// The preference of spec.scheduling.
		{name: "a policy's spec.scheduling is a preference owned by the generated object",
			in:   propagation.Input{Native: native, Federated: generated(t, native, scheduled), Read: propagation.Cached, Policies: []propagation.Policy{scheduled}},
			want: []string{"policy cluster/web", "create preference [policy=cluster/web]"}},
		{name: "one written by hand is left alone",
			in:   propagation.Input{Native: native, Federated: generated(t, native, scheduled), Preference: preference(nil), Read: propagation.Cached, Policies: []propagation.Policy{scheduled}},
			want: []string{"policy cluster/web", "warn PreferenceByHand: ReplicaSchedulingPreference shop/web was not written by policy cluster/web: its spec.scheduling is not applied"}},
		{name: "a generated one the policy no longer asks for is deleted on a live read",
			in:   propagation.Input{Native: native, Federated: fed, Preference: preference(fed), Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web", "read the preference (live)"}},
		{name: "deleted",
			in:   propagation.Input{Native: native, Federated: fed, Preference: preference(fed), Read: propagation.Live, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web", "delete preference uid=rsp-uid"}},

		// Sync's automated rollback.
		{name: "an automated rollback is restored into the native object first",
			in: propagation.Input{Native: native, Federated: rolledBack, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web",
				`patch native {"spec":{"template":{"spec":{"containers":[{"image":"nginx:0","name":"web"}]}}}} -> Warning RolledBack: the rollout of FederatedDeployment web failed and was rolled back (spec.rollout.autoRollback): the template of revision 1 is restored into this Deployment`,
				"again"}},
		{name: "a native object edited since the failed revision wins: the mark goes",
			in:   propagation.Input{Native: edit(native, func(u *unstructured.Unstructured) { u.SetGeneration(4) }), Federated: rolledBack, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}},
			want: []string{"policy cluster/web", "update federated [policy=cluster/web]", "again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Type = fedType
			got, err := propagation.DecideWrites(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
				t.Errorf("DecideWrites (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideWritesIsPure: DecideWrites changes nothing of its Input, even a native object
// whose kind it must fill in (a cache may strip it).
func TestDecideWritesIsPure(t *testing.T) {
	native := nativeWeb(t, "cluster/web")
	native.SetAPIVersion("")
	native.SetKind("")
	fed := generated(t, nativeWeb(t, "cluster/web"), cppWeb)
	withAggregate(fed)
	in := propagation.Input{Type: fedType, Native: native, Federated: fed, Read: propagation.Cached, Policies: []propagation.Policy{cppWeb}}
	before := []*unstructured.Unstructured{native.DeepCopy(), fed.DeepCopy()}
	w, err := propagation.DecideWrites(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, []*unstructured.Unstructured{in.Native, in.Federated}); diff != "" {
		t.Errorf("DecideWrites changed its input (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"policy cluster/web", `updateStatus native {"availableReplicas":1,"readyReplicas":1,"replicas":2,"updatedReplicas":2}`}, summary(w)); diff != "" {
		t.Errorf("DecideWrites (-want +got):\n%s", diff)
	}
}

// TestDecideWritesSettles walks DecideWrites as the driver does, each write's answer the
// object it sent (a patch merged in, a uid for a created object, nothing for a deleted one):
// a policy's object is federated in four rounds, and no policy any more orphans it in three;
// each write is sent once.
func TestDecideWritesSettles(t *testing.T) {
	scheduled := cppWeb
	scheduled.Spec.Scheduling = &federation.PolicyScheduling{}
	for _, tc := range []struct {
		name string
		in   propagation.Input
		want []string
	}{
		{name: "federated", in: propagation.Input{Native: nativeWeb(t, ""), Policies: []propagation.Policy{scheduled}},
			want: []string{"read the preference (cached)", "patch native", "create federated", "create preference"}},
		{name: "orphaned", in: propagation.Input{Native: nativeWeb(t, "cluster/web"), Federated: generated(t, nativeWeb(t, "cluster/web"), scheduled), Preference: preference(nil)},
			want: []string{"read the preference (live)", "update federated", "delete federated", "patch native"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Type = fedType
			var got []string
			for round := 0; round < 10; round++ {
				w, err := propagation.DecideWrites(in)
				if err != nil {
					t.Fatal(err)
				}
				if w.Read != propagation.NotRead {
					got = append(got, summary(propagation.Writes{Read: w.Read})...)
					in.Read = w.Read
					continue
				}
				for _, x := range w.Writes {
					got = append(got, string(x.Verb)+" "+string(x.Target))
					answer(t, &in, x)
				}
				if !w.Again {
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("writes (-want +got):\n%s", diff)
					}
					return
				}
			}
			t.Fatalf("DecideWrites did not settle: %q", got)
		})
	}
}

// answer carries out x on in as a host would answer it, without the host's own rules.
func answer(t *testing.T, in *propagation.Input, x propagation.Write) {
	t.Helper()
	var out *unstructured.Unstructured
	switch x.Verb {
	case propagation.Create:
		out = x.Object.DeepCopy()
		out.SetUID("created-uid")
	case propagation.Update, propagation.UpdateStatus:
		out = x.Object.DeepCopy()
	case propagation.Patch:
		out = in.Native.DeepCopy()
		ann := x.Patch["metadata"].(map[string]any)["annotations"].(map[string]any)
		for k, v := range ann {
			if v == nil {
				unannotated(k)(out)
			} else {
				annotated(k, v.(string))(out)
			}
		}
	}
	switch x.Target {
	case propagation.TargetNative:
		in.Native = out
	case propagation.TargetFederated:
		in.Federated = out
	case propagation.TargetPreference:
		in.Preference = out
	}
}

// TestPolicyStatusTable is the PolicyMonitor's decision for one policy: Valid, Selectable
// (KindNotFederated for a selector of a kind no type federates), Conflict from the objects'
// decisions ([propagation.Decide]), and a status that changes only when one of them does.
func TestPolicyStatusTable(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	types := []federation.TypeConfig{federation.DeploymentType, federation.ConfigMapType}
	web := deployment("shop", "web", map[string]string{"app": "web"})
	misspelt := cppWeb
	misspelt.Spec.ResourceSelectors = []federation.ResourceSelector{byLabel, {APIVersion: "apps/v1", Kind: "Deploymnet"}, {APIVersion: "apps/v1beta1", Kind: "Deployment"}}
	invalid := cppWeb
	invalid.Err = errors.New("ClusterPropagationPolicy.core.federation.k8s.io \"web\" is invalid: spec.overrides[0].path: Invalid value")
	// conds is each condition as "Type=Status Reason: message".
	conds := func(st federation.PolicyStatus) []string {
		var out []string
		for _, c := range st.Conditions {
			out = append(out, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
		for _, c := range st.Conflicts {
			out = append(out, fmt.Sprintf("conflict %s %s/%s: %s over %s (%s)", c.Kind, c.Namespace, c.Name, c.Winner, c.Loser, c.Reason))
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		p         propagation.Policy
		decisions []propagation.ObjectDecision
		want      []string
	}{
		{name: "valid, selectable, alone", p: cppWeb,
			decisions: []propagation.ObjectDecision{{Kind: "Deployment", Namespace: "shop", Name: "web", Decision: propagation.Decide(web, []propagation.Policy{cppWeb}, "")}},
			want: []string{
				"Valid=True Valid: the policy is valid",
				"Selectable=True Selectable: every resource selector names a kind the control plane federates",
				"Conflict=False NoConflict: no other policy selects what this one selects"}},
		{name: "a kind the control plane does not federate", p: misspelt,
			want: []string{
				"Valid=True Valid: the policy is valid",
				"Selectable=False KindNotFederated: spec.resourceSelectors[1]: apps/v1 Deploymnet is not a kind the control plane federates: did you mean Deployment?; spec.resourceSelectors[2]: apps/v1beta1 Deployment is federated as apps/v1 only: use apiVersion apps/v1",
				"Conflict=False NoConflict: no other policy selects what this one selects"}},
		{name: "invalid: Valid only", p: invalid,
			want: []string{`Valid=False InvalidPolicy: ClusterPropagationPolicy.core.federation.k8s.io "web" is invalid: spec.overrides[0].path: Invalid value; it selects nothing new, and what it federates keeps its last valid spec`}},
		{name: "it lost an object to a PropagationPolicy that preempted it", p: cppWeb,
			decisions: []propagation.ObjectDecision{{Kind: "Deployment", Namespace: "shop", Name: "web", Decision: propagation.Decide(web, []propagation.Policy{cppWeb, func() propagation.Policy {
				p := ppTeam
				p.Spec.Preemption = federation.PreemptAlways
				return p
			}()}, "cluster/web")}},
			want: []string{
				"Valid=True Valid: the policy is valid",
				"Selectable=True Selectable: every resource selector names a kind the control plane federates",
				"Conflict=True LowerPrecedence: 1 object(s) also selected by another policy: Deployment shop/web: federated by shop/team, not by this policy (the winner ranks higher)",
				"conflict Deployment shop/web: shop/team over cluster/web (LowerPrecedence)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := propagation.PolicyStatus(tc.p, 2, types, tc.decisions, federation.PolicyStatus{}, now)
			if diff := cmp.Diff(tc.want, conds(got)); diff != "" {
				t.Errorf("PolicyStatus (-want +got):\n%s", diff)
			}
			if !changed {
				t.Error("PolicyStatus from an empty status: changed = false; want true")
			}
			if _, again := propagation.PolicyStatus(tc.p, 2, types, tc.decisions, got, now.Add(time.Hour)); again {
				t.Error("PolicyStatus over its own result: changed = true; want false")
			}
		})
	}
}
