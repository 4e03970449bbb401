package kubectlfed

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// now is the fake clock of run (cli_test.go).
var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// clusters lists a Cluster per row, by name: readiness and why not, region and zones as
// placement reads them (spec, status, labels), the version, every taint, CPU and memory
// (available/allocatable), age; a Cluster the monitor has not seen yet shows dashes.
func TestClustersOutput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "clusters.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var clusters []federation.Cluster
	if err := yaml.UnmarshalStrict(data, &clusters); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printClusters(&out, clusters, now); err != nil {
		t.Fatal(err)
	}
	out.WriteString("--- no Clusters\n")
	if err := printClusters(&out, nil, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "clusters.txt", out.String())
}

// version names the versions of the Leases held now, and lists every Lease that carries one:
// a leader's, a shard whose holder crashed (expired), one released on a graceful stop.
func TestVersionOutput(t *testing.T) {
	lease := func(name, holder, version string, renewed time.Duration) coordinationv1.Lease {
		l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "fedkit-system", Name: name,
			Annotations: map[string]string{federation.ControlPlaneVersionAnnotation: version}}}
		seconds := int32(15)
		at := metav1.NewMicroTime(now.Add(-renewed))
		l.Spec = coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &at}
		return l
	}
	var out bytes.Buffer
	if err := printControlPlane(&out, "fedkit-system", []coordinationv1.Lease{
		lease("fedkit-shard-1", "pod-b_5e6f7a8b", "v0.4.0", 40*time.Second),
		lease("fedkit-shard-0", "pod-a_1a2b3c4d", "v0.5.0", 2*time.Second),
		lease("fedkit-shard-2", "", "v0.4.0", 3*time.Second),
	}, now); err != nil {
		t.Fatal(err)
	}
	out.WriteString("--- only a released Lease\n")
	if err := printControlPlane(&out, "fedkit-system", []coordinationv1.Lease{lease("fedkit-controlplane", "", "v0.4.0", time.Second)}, now); err != nil {
		t.Fatal(err)
	}
	out.WriteString("--- no Lease\n")
	if err := printControlPlane(&out, "platform", nil, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "version.txt", out.String())

	if got := pluginVersion("v9.9.9"); got != "v9.9.9" {
		t.Errorf("pluginVersion(v9.9.9) = %q; want the linked version", got)
	}
}
