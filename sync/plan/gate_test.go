package plan_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestGateWrite: the write of each change, with the evidence Decide decided it on, and what
// the gate says of it. The Secret creds is placed in ap only. It is created there (placed);
// us holds the federation's copy (deleted: ours); eu holds a Secret of that name nobody
// manages (Decide leaves it alone: no change). Then the user deletes creds: the copy's
// delete carries the owner's deletion.
func TestGateWrite(t *testing.T) {
	var obj federation.FederatedObject
	must(yaml.Unmarshal([]byte(`
metadata: {name: creds, namespace: shop, generation: 1, uid: u1}
spec:
  template: {data: {password: c2VjcmV0}}
  placement: {clusters: [{name: ap}]}
`), &obj))
	federation.DefaultFederatedObject(&obj)
	fleet := fake.NewFleet()
	for _, name := range []string{"ap", "eu", "us"} {
		fleet.Add(name, nil)
	}
	in := plan.Input{
		Type: federation.SecretType, Object: &obj, Clusters: fleet.Clusters(), Revision: 1,
		Members: map[string]plan.MemberState{
			"ap": {},
			"eu": {Object: secret(nil)},
			"us": {Object: secret(map[string]any{federation.ManagedByLabel: federation.ManagedByValue})},
		},
	}
	writes := func() map[string]string {
		d, err := plan.Decide(in)
		must(err)
		got := map[string]string{}
		for _, ch := range d.Changes {
			w, ok := plan.GateWrite(in, d, ch)
			if !ok {
				got[ch.Cluster] = string(ch.Action) + ": not the gate's"
				continue
			}
			verdict := "allowed"
			if r := gate.New(gate.Options{}).Check(w); r != nil {
				verdict = "refused: " + r.Invariant
			}
			e := w.Evidence
			got[ch.Cluster] = fmt.Sprintf("%s placed=%v ownerDeleted=%v %s", w.Verb, e.Placed, e.OwnerDeleted, verdict)
		}
		return got
	}
	want := map[string]string{
		"ap": "Place placed=true ownerDeleted=false allowed",
		"us": "Delete placed=false ownerDeleted=false allowed",
	}
	if diff := cmp.Diff(want, writes()); diff != "" {
		t.Errorf("placed in ap (-want +got):\n%s", diff)
	}

	// A forged change: a Secret created in us, where its placement does not place it.
	d, err := plan.Decide(in)
	must(err)
	forged := plan.Change{Cluster: "us", Action: plan.ActionCreate, Desired: secret(nil)}
	w, _ := plan.GateWrite(in, d, forged)
	if r := gate.New(gate.Options{}).Check(w); r == nil || r.Invariant != gate.InvariantSecretPlacement {
		t.Errorf("a Secret created where its placement does not place it: got %v, want refused by %s", r, gate.InvariantSecretPlacement)
	}

	now := obj.CreationTimestamp
	obj.DeletionTimestamp = &now
	in.Members["ap"] = plan.MemberState{Object: secret(map[string]any{federation.ManagedByLabel: federation.ManagedByValue})}
	want = map[string]string{
		"ap": "Delete placed=false ownerDeleted=true allowed",
		"us": "Delete placed=false ownerDeleted=true allowed",
	}
	if diff := cmp.Diff(want, writes()); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}
