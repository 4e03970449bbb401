package migrate_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/migrate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestConvertGolden converts testdata/kubefed.yaml (one object of each kind, and the cases that
// do not carry over) and compares the fedkit objects, the TypeConfigs and the warnings with
// the golden file.
func TestConvertGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kubefed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := migrate.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	out, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(out)
	b.WriteString("# TypeConfigs:\n")
	for _, tc := range res.TypeConfigs {
		fmt.Fprintf(&b, "#   %s resource=%s namespaced=%v replicas=%q\n", tc, tc.TargetResource, tc.Namespaced, tc.ReplicasPath)
	}
	b.WriteString("# Warnings:\n")
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "#   %s\n", w)
	}
	golden := filepath.Join("testdata", "fedkit.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./migrate -update)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("converted objects differ from %s (-want +got):\n%s", golden, diff)
	}
	// The converted objects are what fedkit's own decoding accepts: every one round-trips
	// through the scheme.
	for _, o := range res.Objects() {
		if _, err := federation.ToUnstructured(o); err != nil {
			t.Errorf("%T: %v", o, err)
		}
	}
}

func TestConvertedPreferenceIsNotDefaultedAway(t *testing.T) {
	// fedkit defaults a missing minReplicas to 1, KubeFed's was 0: the conversion writes each
	// one out, so defaulting on the API server changes no plan.
	objs, err := migrate.Decode(strings.NewReader(`
apiVersion: scheduling.kubefed.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: a, namespace: ns}
spec: {targetKind: FederatedDeployment, totalReplicas: 3, clusters: {x: {weight: 1}, y: {maxReplicas: 0}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	if len(res.Preferences) != 1 {
		t.Fatalf("got %d preferences; want 1 (warnings %v)", len(res.Preferences), res.Warnings)
	}
	before := res.Preferences[0].DeepCopy()
	federation.DefaultReplicaSchedulingPreference(&res.Preferences[0])
	if diff := cmp.Diff(before.Spec.Clusters, res.Preferences[0].Spec.Clusters); diff != "" {
		t.Errorf("defaulting changed the converted clusters (-converted +defaulted):\n%s", diff)
	}
	if got := res.Preferences[0].Spec.Algorithm; got != federation.AlgorithmKubeFed {
		t.Errorf("algorithm = %q; want %q", got, federation.AlgorithmKubeFed)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not yaml", "a: [", "document 1"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "document 1 has no apiVersion or kind"},
		{"second document", "apiVersion: v1\nkind: Secret\n---\nkind: X\n", "document 2 has no apiVersion or kind"},
		// A missing "---": the second object's keys would silently win.
		{"duplicate key", "apiVersion: core.kubefed.io/v1beta1\nkind: KubeFedCluster\nmetadata: {name: a}\napiVersion: v1\nkind: Secret\n", "duplicate key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := migrate.Decode(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode error = %v; want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBadObjectIsAWarningNamingIt(t *testing.T) {
	objs, err := migrate.Decode(strings.NewReader(`
apiVersion: scheduling.kubefed.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: bad, namespace: ns}
spec: {targetKind: FederatedDeployment, totalReplicas: "many"}
`))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	if len(res.Preferences) != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), "ReplicaSchedulingPreference ns/bad: not converted") {
		t.Fatalf("got %d preferences, warnings %v; want none and one warning naming ns/bad", len(res.Preferences), res.Warnings)
	}
}

// TestSameConstantsAsClusterSet: the Secret namespace and key match what federation/kube reads.
func TestSameConstantsAsClusterSet(t *testing.T) {
	if migrate.DefaultSecretNamespace != kube.DefaultNamespace {
		t.Errorf("DefaultSecretNamespace = %q; kube.DefaultNamespace = %q", migrate.DefaultSecretNamespace, kube.DefaultNamespace)
	}
	objs, _ := migrate.Decode(strings.NewReader(`
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: c, namespace: kf}
spec: {apiEndpoint: "https://c", secretRef: {name: s}}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: kf}
data: {token: dA==}
`))
	res := migrate.Convert(objs, migrate.Options{SecretNamespace: "fed"})
	if len(res.Secrets) != 1 {
		t.Fatalf("got %d secrets; warnings %v", len(res.Secrets), res.Warnings)
	}
	s := res.Secrets[0]
	if _, ok := s.Data[kube.TokenKey]; !ok || s.Namespace != "fed" || s.Labels[federation.SecretClusterLabel] != "c" {
		t.Errorf("secret = %s/%s labels %v keys %v; want fed/s labelled %s=c with key %q", s.Namespace, s.Name, s.Labels, s.Data, federation.SecretClusterLabel, kube.TokenKey)
	}
}
