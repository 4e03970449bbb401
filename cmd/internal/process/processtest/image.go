package processtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Image is what the module's Dockerfile and .ko.yaml say about one program.
type Image struct {
	// Built is the Dockerfile's output path of a static build of the package with
	// -X main.version=${VERSION}; "" when there is none.
	Built string
	// Copied says the last stage copies Built to /<its base name>.
	Copied bool
	// Base, User and Entrypoint are the last stage's FROM image, USER and ENTRYPOINT.
	Base, User, Entrypoint string
	// Ko says .ko.yaml builds the package statically with -X main.version= on Base.
	Ko bool
}

// Binary is where the image holds the program: /<base name of Built>.
func (i Image) Binary() string { return "/" + filepath.Base(i.Built) }

var staticBuild = regexp.MustCompile(`^RUN CGO_ENABLED=0 .*go build .*-ldflags "[^"]*-X main\.version=\$\{VERSION\}[^"]*" -o (\S+) (\S+)$`)

// ImageOf reads root's Dockerfile and .ko.yaml for the package pkg ("./cmd/NAME").
func ImageOf(t testing.TB, root, pkg string) Image {
	t.Helper()
	var img Image
	lines := dockerfile(t, root)
	for _, l := range lines {
		if m := staticBuild.FindStringSubmatch(l); m != nil && m[2] == pkg {
			img.Built = m[1]
		}
		if f, ok := strings.CutPrefix(l, "FROM "); ok {
			img.Base = strings.Fields(f)[0]
		}
		if u, ok := strings.CutPrefix(l, "USER "); ok {
			img.User = u
		}
		if e, ok := strings.CutPrefix(l, "ENTRYPOINT "); ok {
			img.Entrypoint = e
		}
	}
	img.Copied = img.Built != "" && slices.Contains(lines, "COPY --from=build "+img.Built+" "+img.Binary())

	var ko struct {
		DefaultBaseImage string `json:"defaultBaseImage"`
		Builds           []struct {
			ID      string   `json:"id"`
			Main    string   `json:"main"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			Ldflags []string `json:"ldflags"`
		} `json:"builds"`
	}
	if err := yaml.UnmarshalStrict(ReadFile(t, root, ".ko.yaml"), &ko); err != nil {
		t.Fatal(err)
	}
	for _, b := range ko.Builds {
		if b.Main == pkg && slices.Contains(b.Env, "CGO_ENABLED=0") && strings.Contains(strings.Join(b.Ldflags, " "), "-X main.version=") {
			img.Ko = ko.DefaultBaseImage == img.Base
		}
	}
	return img
}

// ReadFile reads rel under root, failing the test when it cannot.
func ReadFile(t testing.TB, root, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// dockerfile is root's Dockerfile's instructions, continuation lines joined, comments
// dropped.
func dockerfile(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	joined := strings.ReplaceAll(string(ReadFile(t, root, "Dockerfile")), "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return out
}

// Restricted says whether container c of pod runs as user ("UID:GID") with the restricted
// Pod Security Standard's security: non-root, no privilege escalation, a read-only root
// filesystem, no capabilities, RuntimeDefault seccomp.
func Restricted(pod corev1.PodSpec, c corev1.Container, user string) bool {
	sc := c.SecurityContext
	uid, gid, _ := strings.Cut(user, ":")
	switch {
	case sc == nil, sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot,
		sc.RunAsUser == nil || strconv.FormatInt(*sc.RunAsUser, 10) != uid,
		sc.RunAsGroup == nil || strconv.FormatInt(*sc.RunAsGroup, 10) != gid,
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation,
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem,
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}),
		pod.SecurityContext == nil || pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		return false
	}
	return true
}
