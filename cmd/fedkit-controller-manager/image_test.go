package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/cmd/internal/process/processtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// pkgPath is this package as the image builds name it.
const pkgPath = "./cmd/fedkit-controller-manager"

// managerDeployment is config/manager's Deployment.
func managerDeployment(t *testing.T) appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(processtest.ReadFile(t, root, "config/manager/manager.yaml"), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The image builds (the Dockerfile, .ko.yaml, make image) and config/manager's Deployment
// agree with the binary: they build this package with the version linked into main.version,
// statically, on the same non-root base; the Deployment runs the image `make image` tags,
// passes only flags the binary has (its --help lists them), probes the endpoints those flags
// serve, and runs as the image's user with the security the restricted Pod Security
// Standard asks for.
func TestImageBuildAndManifestsAgree(t *testing.T) {
	if wd, err := os.Getwd(); err != nil || filepath.Base(wd) != filepath.Base(pkgPath) {
		t.Fatalf("the test runs in %s (%v); want the package %s", wd, err, pkgPath)
	}
	version = "linked" // the -X target exists: this is main.version
	version = ""

	// The Dockerfile: a static build of this package with the version linked in, copied
	// onto distroless's static image, run as its nonroot user; .ko.yaml builds the same.
	img := processtest.ImageOf(t, root, pkgPath)
	if img.Built == "" {
		t.Fatalf("no static go build with -X main.version=${VERSION} -o OUT %s in the Dockerfile", pkgPath)
	}
	binary, user := img.Binary(), img.User
	if !img.Copied || img.Entrypoint != `["`+binary+`"]` {
		t.Errorf("the Dockerfile's last stage does not copy %s to %s and run it: %+v", img.Built, binary, img)
	}
	if img.Base != "gcr.io/distroless/static:nonroot" {
		t.Errorf("the image's base is %s; want gcr.io/distroless/static:nonroot", img.Base)
	}
	if user != "65532:65532" {
		t.Errorf("the image's USER is %q; want 65532:65532 (distroless's nonroot)", user)
	}
	if !img.Ko {
		t.Errorf(".ko.yaml does not build %s, static, with -X main.version=, on %s", pkgPath, img.Base)
	}

	// The Deployment.
	d := managerDeployment(t)
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers; want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if img := regexp.MustCompile(`(?m)^IMG +\?= (\S+)$`).FindSubmatch(processtest.ReadFile(t, root, "Makefile")); img == nil || string(img[1]) != c.Image {
		t.Errorf("the Deployment runs %s; want the image `make image` tags (Makefile's IMG: %q)", c.Image, img)
	}
	help := helpText(t)
	var f flags
	fs := newFlagSet(&f)
	fs.SetOutput(&bytes.Buffer{})
	if err := parseFlags(fs, &f, c.Args); err != nil {
		t.Fatalf("the Deployment's args %q: %v", c.Args, err)
	}
	for _, a := range c.Args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.Contains(help, "  -"+name+" ") && !strings.Contains(help, "  -"+name+"\n") {
			t.Errorf("the Deployment passes --%s, which --help does not list", name)
		}
	}
	if len(c.Command) > 0 {
		t.Errorf("the Deployment sets command %q: the image's ENTRYPOINT is the binary", c.Command)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if got, want := ports["metrics"], portOf(t, f.metricsAddr); got != want {
		t.Errorf("containerPort metrics %d; --metrics-bind-address %s serves %d", got, f.metricsAddr, want)
	}
	probes := portOf(t, f.probeAddr)
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || ports[p.probe.HTTPGet.Port.String()] != probes {
			t.Errorf("probe of %s: %+v; want GET %s on the port of --health-probe-bind-address (%d)", p.path, p.probe, p.path, probes)
		}
	}
	if pod.TerminationGracePeriodSeconds == nil || time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= f.gracefulShutdown {
		t.Errorf("terminationGracePeriodSeconds %v; want more than --graceful-shutdown-timeout %s", pod.TerminationGracePeriodSeconds, f.gracefulShutdown)
	}
	if !f.leaderElect || d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v with --leader-elect=%t; want 2 replicas electing a leader", d.Spec.Replicas, f.leaderElect)
	}
	if pod.ServiceAccountName != "fedkit-controlplane" {
		t.Errorf("serviceAccountName %q; want config/rbac's fedkit-controlplane", pod.ServiceAccountName)
	}
	if !processtest.Restricted(pod, c, user) {
		t.Errorf("security context %+v (pod %+v); want non-root as %s, no privilege escalation, a read-only root filesystem, no capabilities, RuntimeDefault seccomp", c.SecurityContext, pod.SecurityContext, user)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v; want CPU and memory", c.Resources.Requests)
	}

	// The PodDisruptionBudget keeps one of the Deployment's Pods.
	var pdb policyv1.PodDisruptionBudget
	if err := yaml.UnmarshalStrict(processtest.ReadFile(t, root, "config/manager/pdb.yaml"), &pdb); err != nil {
		t.Fatal(err)
	}
	sel := labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels)
	if pdb.Namespace != d.Namespace || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("PodDisruptionBudget %s/%s %+v; want minAvailable 1 of the Deployment's Pods", pdb.Namespace, pdb.Name, pdb.Spec)
	}
}

// portOf is the port of a listen address such as ":8080".
func portOf(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return int32(n)
}
