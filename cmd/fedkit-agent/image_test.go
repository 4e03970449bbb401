package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/cmd/internal/process/processtest"
)

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// pkgPath is this package as the image builds name it.
const pkgPath = "./cmd/fedkit-agent"

// The image holds the agent (the Dockerfile and .ko.yaml build it statically with the
// version linked in), and config/agent's Deployment agrees with the program: it runs
// /fedkit-agent from the image `make image` tags, passes only flags the agent has, with
// --cluster from the Secret the README tells users to create and --hub-kubeconfig where
// that Secret is mounted, probes /healthz on --health-probe-bind-address's port, runs as
// config/rbac/member's ServiceAccount (what the control plane holds in a push member), and
// with the restricted Pod Security Standard's security.
func TestImageAndManifestsAgree(t *testing.T) {
	if wd, err := os.Getwd(); err != nil || filepath.Base(wd) != filepath.Base(pkgPath) {
		t.Fatalf("the test runs in %s (%v); want the package %s", wd, err, pkgPath)
	}
	version = "linked" // the -X target exists: this is main.version
	version = ""
	img := processtest.ImageOf(t, root, pkgPath)
	if img.Built == "" || !img.Copied {
		t.Fatalf("the Dockerfile builds no static %s with -X main.version=${VERSION} into its last stage: %+v", pkgPath, img)
	}
	if !img.Ko {
		t.Errorf(".ko.yaml does not build %s, static, with -X main.version=, on %s", pkgPath, img.Base)
	}

	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(processtest.ReadFile(t, root, "config/agent/agent.yaml"), &d); err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("config/agent's Deployment has %d containers; want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	manager, err := os.ReadFile(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manager), "image: "+c.Image+"\n") || !slices.Equal(c.Command, []string{img.Binary()}) {
		t.Errorf("the agent runs %q from %s; want %s from the image config/manager runs", c.Command, c.Image, img.Binary())
	}

	// Its args, with $(CLUSTER) expanded as the kubelet does from the container's env.
	var cluster *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "CLUSTER" {
			cluster = &c.Env[i]
		}
	}
	if cluster == nil || cluster.ValueFrom == nil || cluster.ValueFrom.SecretKeyRef == nil || cluster.ValueFrom.SecretKeyRef.Name != "fedkit-agent-hub" || cluster.ValueFrom.SecretKeyRef.Key != "cluster" {
		t.Fatalf("env CLUSTER %+v; want it from the Secret fedkit-agent-hub, key cluster", cluster)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, "$(CLUSTER)", "edge")
	}
	var f flags
	fs := newFlagSet(&f)
	fs.SetOutput(&bytes.Buffer{})
	if err := parse(fs, &f, args); err != nil {
		t.Fatalf("config/agent's args %q: %v", c.Args, err)
	}
	if f.cluster != "edge" {
		t.Errorf("--cluster is %q from %q; want the Secret's", f.cluster, c.Args)
	}
	var mounted bool
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "fedkit-agent-hub" && m.ReadOnly &&
				slices.Contains(v.Secret.Items, corev1.KeyToPath{Key: "kubeconfig", Path: "kubeconfig"}) &&
				f.hubKubeconfig == filepath.Join(m.MountPath, "kubeconfig") {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("--hub-kubeconfig %s is not the key kubeconfig of the Secret fedkit-agent-hub, mounted read-only", f.hubKubeconfig)
	}
	_, port, err := net.SplitHostPort(f.probeAddr)
	if err != nil {
		t.Fatal(err)
	}
	probe := c.LivenessProbe
	if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != "/healthz" || len(c.Ports) != 1 || probe.HTTPGet.Port.String() != c.Ports[0].Name || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
		t.Errorf("liveness probe %+v on ports %+v; want GET /healthz on --health-probe-bind-address's port %s", probe, c.Ports, port)
	}

	// The ServiceAccount is config/rbac/member's, which config/agent applies.
	if pod.ServiceAccountName != "fedkit-member" || !strings.Contains(string(processtest.ReadFile(t, root, "config/rbac/member/member.yaml")), "kind: ServiceAccount\nmetadata:\n  name: fedkit-member\n  namespace: "+d.Namespace+"\n") {
		t.Errorf("serviceAccountName %q in %s; want config/rbac/member's fedkit-member", pod.ServiceAccountName, d.Namespace)
	}
	if !processtest.Restricted(pod, c, img.User) {
		t.Errorf("security context %+v (pod %+v); want non-root as %s, no privilege escalation, a read-only root filesystem, no capabilities, RuntimeDefault seccomp", c.SecurityContext, pod.SecurityContext, img.User)
	}
}
