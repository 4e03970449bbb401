package gate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	claims      = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	leases      = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// object is a namespace/name object with the federation's label (managed) and, when
// available > 0, a status saying it runs that many available replicas.
func object(ns, name string, managed bool, available int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name}}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	if managed {
		u.SetLabels(map[string]string{federation.ManagedByLabel: federation.ManagedByValue})
	}
	if available > 0 {
		u.Object["status"] = map[string]any{"availableReplicas": available}
	}
	return u
}

var ours = gate.ManagedBy("")

// TestCheck is the table of the built-in invariants: what each refuses, and the evidence
// that lets the same write through.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    gate.Write
		want string // the invariant that refuses, "" when allowed
	}{
		{"ours: a managed copy", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: object("app", "c", true, 0), Evidence: gate.Evidence{Mark: ours}}, ""},
		{"ours: someone else's", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: object("app", "c", false, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantOurs},
		{"ours: another federation's", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: object("app", "c", true, 0), Evidence: gate.Evidence{Mark: gate.ManagedBy("other")}}, gate.InvariantOurs},
		{"ours: orphaning someone else's", gate.Write{Verb: gate.Orphan, Cluster: "eu", Resource: configMaps, Object: object("app", "c", false, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantOurs},
		{"ours: adoption not asked", gate.Write{Verb: gate.Adopt, Cluster: "eu", Resource: configMaps, Object: object("app", "c", false, 0)}, gate.InvariantOurs},
		{"ours: adoption asked", gate.Write{Verb: gate.Adopt, Cluster: "eu", Resource: configMaps, Object: object("app", "c", false, 0), Evidence: gate.Evidence{Adopted: true}}, ""},
		{"ours: no evidence at all", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: object("app", "c", true, 0)}, gate.InvariantOurs},
		{"reserved: kube-system", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: object("kube-system", "coredns", true, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantReservedNamespace},
		{"reserved: kube-node-lease", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: object("kube-node-lease", "c", true, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantReservedNamespace},
		{"reserved: the control plane's", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: secrets, Object: object("fedkit-system", "token", true, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantReservedNamespace},
		{"reserved: adopting in kube-public", gate.Write{Verb: gate.Adopt, Cluster: "eu", Resource: configMaps, Object: object("kube-public", "c", false, 0), Evidence: gate.Evidence{Adopted: true}}, gate.InvariantReservedNamespace},
		{"reserved: orphaning there takes only our labels off", gate.Write{Verb: gate.Orphan, Cluster: "eu", Resource: configMaps, Object: object("kube-system", "c", true, 0), Evidence: gate.Evidence{Mark: ours}}, ""},
		{"reserved: the namespace kube-system", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: namespaces, Object: object("", "kube-system", true, 0), Evidence: gate.Evidence{Mark: ours, NamespaceEmpty: true}}, gate.InvariantReservedNamespace},
		{"reserved: the namespace default", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: namespaces, Object: object("", "default", true, 0), Evidence: gate.Evidence{Mark: ours, NamespaceEmpty: true}}, gate.InvariantReservedNamespace},
		{"reserved: adopting the namespace kube-system", gate.Write{Verb: gate.Adopt, Cluster: "eu", Resource: namespaces, Object: object("", "kube-system", false, 0), Evidence: gate.Evidence{Adopted: true}}, ""},
		{"reserved: the control plane's own Lease", gate.Write{Verb: gate.Delete, Resource: leases, Object: object("fedkit-system", "shard-0", true, 0), Evidence: gate.Evidence{Mark: ours}}, ""},
		{"claim: moved away", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: claims, Object: object("app", "data", true, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantClaim},
		{"claim: owner deleted", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: claims, Object: object("app", "data", true, 0), Evidence: gate.Evidence{Mark: ours, OwnerDeleted: true}}, ""},
		{"claim: removal asked", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: claims, Object: object("app", "data", true, 0), Evidence: gate.Evidence{Mark: ours, RemovalAsked: true}}, ""},
		{"claim: released, not deleted", gate.Write{Verb: gate.Orphan, Cluster: "eu", Resource: claims, Object: object("app", "data", true, 0), Evidence: gate.Evidence{Mark: ours}}, ""},
		{"last copy: running, no replacement", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: deployments, Object: object("app", "web", true, 3), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantLastCopy},
		{"last copy: a replacement runs in us", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: deployments, Object: object("app", "web", true, 3), Evidence: gate.Evidence{Mark: ours, Replacement: "us"}}, ""},
		{"last copy: the user deleted it", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: deployments, Object: object("app", "web", true, 3), Evidence: gate.Evidence{Mark: ours, OwnerDeleted: true}}, ""},
		{"last copy: placed nowhere", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: deployments, Object: object("app", "web", true, 3), Evidence: gate.Evidence{Mark: ours, Unplaced: true}}, ""},
		{"last copy: not running", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: deployments, Object: object("app", "web", true, 0), Evidence: gate.Evidence{Mark: ours}}, ""},
		{"namespace: not shown empty", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: namespaces, Object: object("", "app", true, 0), Evidence: gate.Evidence{Mark: ours}}, gate.InvariantNamespaceEmpty},
		{"namespace: shown empty", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: namespaces, Object: object("", "app", true, 0), Evidence: gate.Evidence{Mark: ours, NamespaceEmpty: true}}, ""},
		{"secret: its placement excludes the cluster", gate.Write{Verb: gate.Place, Cluster: "eu", Resource: secrets, Object: object("app", "token", true, 0)}, gate.InvariantSecretPlacement},
		{"secret: placed there", gate.Write{Verb: gate.Place, Cluster: "eu", Resource: secrets, Object: object("app", "token", true, 0), Evidence: gate.Evidence{Placed: true}}, ""},
		{"no object read", gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps}, "evidence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if r := gate.New(gate.Options{}).Check(tc.w); r != nil {
				got = r.Invariant
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refused by (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeleteSendsOnlyWhatCheckAllows: a refused delete never reaches the client, and its
// error names the object, the cluster and the invariant, and wraps ErrRefused.
func TestDeleteSendsOnlyWhatCheckAllows(t *testing.T) {
	ctx := context.Background()
	c := fake.NewCluster("eu")
	for _, name := range []string{"mine", "theirs"} {
		u := object("default", name, name == "mine", 0)
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		if _, err := c.Create(ctx, configMaps, u); err != nil {
			t.Fatal(err)
		}
	}
	g := gate.New(gate.Options{})
	for _, name := range []string{"mine", "theirs"} {
		live, err := c.Get(ctx, configMaps, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		err = g.Delete(ctx, c, gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: live, Evidence: gate.Evidence{Mark: ours}}, metav1.DeleteOptions{})
		_, gerr := c.Get(ctx, configMaps, "default", name)
		got := fmt.Sprintf("err=%v, still there=%v", err, gerr == nil)
		want := map[string]string{
			"mine":   "err=<nil>, still there=false",
			"theirs": "err=delete configmaps default/theirs in cluster eu: it does not carry the federation's mark (label federation.k8s.io/managed-by=fedkit) (invariant ours): refused by the gate, still there=true",
		}[name]
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if name == "theirs" && (!errors.Is(err, gate.ErrRefused) || !gate.Refused(fmt.Errorf("wrapped: %w", errors.Join(err, err)))) {
			t.Errorf("%v does not wrap ErrRefused, or Refused does not see it", err)
		}
	}
	if gate.Refused(errors.Join(errors.New("other"), &gate.Refusal{})) {
		t.Error("Refused of a refusal joined with another error: want false")
	}
}
