package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// TestOwnedDiffAsStored: the comparison with the member type's schema sees what a real server
// does to what it stores (quantities canonical, empty fields dropped) and what a webhook adds
// (a sidecar in containers), and still sees a hand edit of what the federation owns.
func TestOwnedDiffAsStored(t *testing.T) {

	for _, tc := range []struct {
		name          string
		desired, live string
		want          []string
	}{
		{"cpu as a number is the quantity the server stores",
			`spec: {template: {spec: {containers: [{name: app, resources: {requests: {cpu: 1, memory: 512Mi}, limits: {cpu: 0.5}}}]}}}`,
			`spec: {template: {spec: {containers: [{name: app, resources: {requests: {cpu: "1", memory: 512Mi}, limits: {cpu: 500m}}}]}}}`, nil},
		{"a changed quantity is drift",
			`spec: {template: {spec: {containers: [{name: app, resources: {requests: {cpu: 1}}}]}}}`,
			`spec: {template: {spec: {containers: [{name: app, resources: {requests: {cpu: 1500m}}}]}}}`,
			[]string{"/spec/template/spec/containers/0/resources/requests/cpu"}},
		{"empty fields the server drops are not drift",
			`spec: {paused: false, template: {spec: {nodeSelector: {}, serviceAccountName: "", hostNetwork: false, containers: [{name: app, args: [], env: [], workingDir: ""}]}}}`,
			`spec: {template: {spec: {containers: [{name: app}]}}}`, nil},
		{"an empty list the server stores as null is not drift",
			`spec: {template: {spec: {containers: [{name: app, command: []}]}}}`,
			`spec: {template: {spec: {containers: [{name: app, command: null}]}}}`, nil},
		{"a pointer's zero value is kept, so its absence is drift",
			`spec: {replicas: 0}`, `spec: {}`, []string{"/spec/replicas"}},
		{"a struct is kept when empty", `spec: {template: {spec: {containers: [{name: app, resources: {}}]}}}`,
			`spec: {template: {spec: {containers: [{name: app}]}}}`, []string{"/spec/template/spec/containers/0/resources"}},
		{"a webhook's sidecar is not drift",
			`spec: {template: {spec: {containers: [{name: app, image: "app:1"}]}}}`,
			`spec: {template: {spec: {containers: [{name: app, image: "app:1"}, {name: istio-proxy, image: "proxy:1"}]}}}`, nil},
		{"a sidecar before the federation's container is not drift",
			`spec: {template: {spec: {containers: [{name: app, image: "app:1", ports: [{containerPort: 80}]}]}}}`,
			`spec: {template: {spec: {containers: [{name: proxy, image: "proxy:1"}, {name: app, image: "app:1", ports: [{containerPort: 80, protocol: TCP}]}]}}}`, nil},
		{"a hand-edited image next to a sidecar is drift",
			`spec: {template: {spec: {containers: [{name: app, image: "app:1"}]}}}`,
			`spec: {template: {spec: {containers: [{name: proxy, image: "proxy:1"}, {name: app, image: "evil:1"}]}}}`,
			[]string{"/spec/template/spec/containers/0/image"}},
		{"a removed container is drift",
			`spec: {template: {spec: {containers: [{name: app}, {name: log}]}}}`,
			`spec: {template: {spec: {containers: [{name: app}]}}}`, []string{"/spec/template/spec/containers/1"}},
		{"env by name, a webhook's variable left alone",
			`spec: {template: {spec: {containers: [{name: app, env: [{name: A, value: "1"}]}]}}}`,
			`spec: {template: {spec: {containers: [{name: app, env: [{name: INJECTED, value: x}, {name: A, value: "2"}]}]}}}`,
			[]string{"/spec/template/spec/containers/0/env/0/value"}},
		{"volumes by name", `spec: {template: {spec: {volumes: [{name: data, emptyDir: {sizeLimit: 1Gi}}]}}}`,
			`spec: {template: {spec: {volumes: [{name: token, projected: {}}, {name: data, emptyDir: {sizeLimit: "1073741824"}}]}}}`, nil},
		{"an atomic list keeps its length", `spec: {template: {spec: {containers: [{name: app, args: [a]}]}}}`,
			`spec: {template: {spec: {containers: [{name: app, args: [a, b]}]}}}`, []string{"/spec/template/spec/containers/0/args"}},
		{"tolerations are atomic", `spec: {template: {spec: {tolerations: [{key: a}]}}}`,
			`spec: {template: {spec: {tolerations: [{key: a}, {key: b}]}}}`, []string{"/spec/template/spec/tolerations"}},
		{"elements without their key are compared by position",
			`spec: {template: {spec: {containers: [{image: a}]}}}`,
			`spec: {template: {spec: {containers: [{image: a}, {name: b}]}}}`, []string{"/spec/template/spec/containers"}},
		{"a field the type does not have is pruned", `spec: {replicaz: 3, template: {spec: {containers: [{name: app, imagePullPolizy: Always}]}}}`,
			`spec: {template: {spec: {containers: [{name: app}]}}}`, nil},
		{"a field the type does not have, kept by a newer server, is compared", `spec: {replicaz: 3}`,
			`spec: {replicaz: 4}`, []string{"/spec/replicaz"}},
		{"metadata as stored", `metadata: {name: a, labels: {}}`, `metadata: {name: a}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {

			var d, l map[string]any
			if err := yaml.Unmarshal([]byte(tc.desired), &d); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.live), &l); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ownedDiff(d, l, SchemaFor(deploymentGVK))); diff != "" {
				t.Errorf("ownedDiff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnedDiff(t *testing.T) {
	for _, tc := range []struct {
		name          string
		desired, live string
		want          []string
	}{
		{"equal", `spec: {replicas: 3}`, `spec: {replicas: 3}`, nil},
		{"server defaults are not drift", `spec: {replicas: 3, template: {spec: {containers: [{name: a, image: x}]}}}`,
			`spec: {replicas: 3, strategy: {type: RollingUpdate}, template: {spec: {containers: [{name: a, image: x, terminationMessagePath: /dev/termination-log}]}}}`, nil},
		{"changed scalar", `spec: {replicas: 3}`, `spec: {replicas: 4}`, []string{"/spec/replicas"}},
		{"removed field", `spec: {replicas: 3, paused: true}`, `spec: {replicas: 3}`, []string{"/spec/paused"}},
		{"list element added", `spec: {ports: [{port: 80}]}`, `spec: {ports: [{port: 80}, {port: 81}]}`, []string{"/spec/ports"}},
		{"list element changed", `spec: {ports: [{port: 80}]}`, `spec: {ports: [{port: 81}]}`, []string{"/spec/ports/0/port"}},
		{"type changed", `spec: {selector: {app: a}}`, `spec: {selector: x}`, []string{"/spec/selector"}},
		{"quantities in another notation", `spec: {cpu: "0.5", mem: 1Gi}`, `spec: {cpu: 500m, mem: "1073741824"}`, nil},
		{"different quantities", `spec: {cpu: "0.5"}`, `spec: {cpu: 600m}`, []string{"/spec/cpu"}},
		{"ints and floats", `spec: {a: 1}`, `spec: {a: 1.0}`, nil},
		{"explicit null", `spec: {a: null}`, `spec: {}`, nil},
		{"status is the member's", `status: {ready: 3}`, `status: {ready: 0}`, nil},
		{"member labels and annotations are retained", `metadata: {labels: {app: a}, annotations: {x: "1"}}`,
			`metadata: {labels: {app: a, team: t}, annotations: {x: "1", y: "2"}}`, nil},
		{"label changed", `metadata: {labels: {app: a}}`, `metadata: {labels: {app: b}}`, []string{"/metadata/labels/app"}},
		{"annotation removed", `metadata: {annotations: {x: "1"}}`, `metadata: {}`, []string{"/metadata/annotations/x"}},
		{"revision annotation alone is not drift", `metadata: {annotations: {federation.k8s.io/revision: "2"}}`,
			`metadata: {annotations: {federation.k8s.io/revision: "1"}}`, nil},
		{"server metadata is ignored", `metadata: {resourceVersion: "5", finalizers: [a]}`, `metadata: {resourceVersion: "9"}`, nil},
		{"escaped keys", `metadata: {labels: {a/b: x}}`, `metadata: {labels: {a/b: y}}`, []string{"/metadata/labels/a~1b"}},
		{"escaped keys deep", `spec: {a~b: [{c/d: 1}, {x: 2}]}`, `spec: {a~b: [{c/d: 1}, {x: 3}]}`, []string{"/spec/a~0b/1/x"}},
		{"missing child of a list element", `spec: {l: [{a: 1}, {b: {c: 2}}]}`, `spec: {l: [{a: 1}, {b: {}}]}`, []string{"/spec/l/1/b/c"}},
		{"missing metadata field", `metadata: {name: a, namespace: n}`, `metadata: {name: a}`, []string{"/metadata/namespace"}},
		{"deeper than the held tokens", `a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {k: {l: {m: {nn: {o: {p: {q: [{r: 1}, {r: 1}]}}}}}}}}}}}}}}}}`,
			`a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {k: {l: {m: {nn: {o: {p: {q: [{r: 2}, {r: 3}]}}}}}}}}}}}}}}}}`,
			[]string{"/a/b/c/d/e/f/g/h/i/j/k/l/m/nn/o/p/q/0/r", "/a/b/c/d/e/f/g/h/i/j/k/l/m/nn/o/p/q/1/r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d, l map[string]any
			if err := yaml.Unmarshal([]byte(tc.desired), &d); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.live), &l); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ownedDiff(d, l, nil)); diff != "" {
				t.Errorf("ownedDiff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnedDiffIsBounded(t *testing.T) {
	d, l := map[string]any{}, map[string]any{}
	for i := range 100 {
		k := string(rune('a'+i%26)) + string(rune('a'+i/26))
		d[k], l[k] = int64(1), int64(2)
	}
	if got := len(ownedDiff(d, l, nil)); got != maxDiffPaths {
		t.Errorf("len(ownedDiff) = %d; want %d", got, maxDiffPaths)
	}
}

// TestOwnedDiffOfEqualObjectsAllocatesLittle: the check every write and every changed member
// object goes through allocates nothing when nothing differs (it built a path string for
// every field it walked).
func TestOwnedDiffOfEqualObjectsAllocatesLittle(t *testing.T) {
	var d map[string]any
	doc := `
metadata: {name: web, namespace: bench, labels: {app: web, a: b}, annotations: {x: "1", y: "2"}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "web:1", ports: [{containerPort: 8080}]}]}
`
	if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	if got := testing.AllocsPerRun(100, func() { _ = ownedDiff(d, d, nil) }); got != 0 {
		t.Errorf("ownedDiff of equal objects: %v allocations; want none", got)
	}
	fs := SchemaFor(deploymentGVK)
	if got := testing.AllocsPerRun(100, func() { _ = ownedDiff(d, d, fs) }); got != 0 {
		t.Errorf("ownedDiff of equal objects with the schema: %v allocations; want none", got)
	}
}
