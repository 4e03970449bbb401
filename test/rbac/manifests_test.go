// Package rbac_test checks the RBAC manifests of config/rbac against what the loops do: each
// loop runs on the fake host behind a client that records every request, and every recorded
// request (verb, group, resource, subresource, namespace) must be granted by that loop's roles.
// A loop that starts to need a verb its roles lack fails here, not in a production cluster.
// TestControlPlaneAsItsServiceAccount (test/controlplane) runs the whole control plane on a
// real host as a ServiceAccount bound to these roles only.
package rbac_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// manifestDir is config/rbac, from this package's directory.
var manifestDir = filepath.Join("..", "..", "config", "rbac")

// Namespace is where the control plane keeps its Secrets and Leases, and where its
// ServiceAccount lives (kube.DefaultNamespace).
const Namespace = "fedkit-system"

// ServiceAccount is the account the manifests bind every role to.
const ServiceAccount = "fedkit-controlplane"

// manifests are the roles and bindings of config/rbac.
type manifests struct {
	clusterRoles        map[string]rbacv1.ClusterRole
	roles               map[string]rbacv1.Role // all in Namespace
	clusterRoleBindings []rbacv1.ClusterRoleBinding
	roleBindings        []rbacv1.RoleBinding
	files               []string // every YAML file, for applying them
}

// loadManifests reads every YAML document of config/rbac.
func loadManifests(t testing.TB) manifests {
	t.Helper()
	m := manifests{clusterRoles: map[string]rbacv1.ClusterRole{}, roles: map[string]rbacv1.Role{}}
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no manifests in %s", manifestDir)
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		m.files = append(m.files, f)
		for _, doc := range documents(t, f) {
			var meta struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			require.NoError(t, yaml.Unmarshal(doc, &meta), f)
			switch meta.Kind {
			case "ClusterRole":
				var r rbacv1.ClusterRole
				require.NoError(t, yaml.UnmarshalStrict(doc, &r), f)
				m.clusterRoles[r.Name] = r
			case "Role":
				var r rbacv1.Role
				require.NoError(t, yaml.UnmarshalStrict(doc, &r), f)
				require.Equal(t, Namespace, r.Namespace, "%s: Role %s", f, r.Name)
				m.roles[r.Name] = r
			case "ClusterRoleBinding":
				var b rbacv1.ClusterRoleBinding
				require.NoError(t, yaml.UnmarshalStrict(doc, &b), f)
				m.clusterRoleBindings = append(m.clusterRoleBindings, b)
			case "RoleBinding":
				var b rbacv1.RoleBinding
				require.NoError(t, yaml.UnmarshalStrict(doc, &b), f)
				require.Equal(t, Namespace, b.Namespace, "%s: RoleBinding %s", f, b.Name)
				m.roleBindings = append(m.roleBindings, b)
			}
		}
	}
	return m
}

// documents splits a YAML file into its documents.
func documents(t testing.TB, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, file)
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			out = append(out, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.Bytes()
}

// request is what RBAC authorizes: a verb on a group's resource (and subresource), in a
// namespace ("" for cluster-scoped resources and requests across all namespaces).
type request struct {
	Verb, Group, Resource, Subresource, Namespace string
	// Name is the object a get names ("" for other verbs): a rule limited to resourceNames
	// grants only those.
	Name string
	// URL is the path of a non-resource request (/readyz); the fields above but Verb are
	// then empty.
	URL string
}

func (r request) String() string {
	if r.URL != "" {
		return r.Verb + " " + r.URL
	}
	res := r.Resource
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	if r.Group != "" {
		res += "." + r.Group
	}
	where := "all namespaces (or cluster-scoped)"
	if r.Namespace != "" {
		where = "namespace " + r.Namespace
	}
	return fmt.Sprintf("%s %s in %s", r.Verb, res, where)
}

// roles names the ClusterRoles and Roles (in Namespace) a subject holds.
type roles struct {
	cluster, namespaced []string
}

// boundTo returns the roles bound to the ServiceAccount Namespace/name.
func (m manifests) boundTo(name string) roles {
	var out roles
	is := func(s rbacv1.Subject) bool {
		return s.Kind == rbacv1.ServiceAccountKind && s.Name == name && s.Namespace == Namespace
	}
	for _, b := range m.clusterRoleBindings {
		if slices.ContainsFunc(b.Subjects, is) && b.RoleRef.Kind == "ClusterRole" {
			out.cluster = append(out.cluster, b.RoleRef.Name)
		}
	}
	for _, b := range m.roleBindings {
		if !slices.ContainsFunc(b.Subjects, is) {
			continue
		}
		switch b.RoleRef.Kind {
		case "Role":
			out.namespaced = append(out.namespaced, b.RoleRef.Name)
		case "ClusterRole": // a ClusterRole bound in one namespace grants there only
			out.namespaced = append(out.namespaced, "ClusterRole:"+b.RoleRef.Name)
		}
	}
	return out
}

// allows reports whether the roles r grant req, as the RBAC authorizer decides it.
func (m manifests) allows(r roles, req request) bool {
	for _, name := range r.cluster {
		if rulesAllow(m.clusterRoles[name].Rules, req) {
			return true
		}
	}
	if req.Namespace != Namespace {
		return false
	}
	for _, name := range r.namespaced {
		var rules []rbacv1.PolicyRule
		if cr, ok := strings.CutPrefix(name, "ClusterRole:"); ok {
			rules = m.clusterRoles[cr].Rules
		} else {
			rules = m.roles[name].Rules
		}
		if rulesAllow(rules, req) {
			return true
		}
	}
	return false
}

func rulesAllow(rules []rbacv1.PolicyRule, req request) bool {
	resource := req.Resource
	if req.Subresource != "" {
		resource += "/" + req.Subresource
	}
	for _, rule := range rules {
		if req.URL != "" {
			if matches(rule.Verbs, req.Verb) && slices.Contains(rule.NonResourceURLs, req.URL) {
				return true
			}
			continue
		}
		if len(rule.NonResourceURLs) > 0 || (len(rule.ResourceNames) > 0 && (req.Name == "" || !slices.Contains(rule.ResourceNames, req.Name))) {
			continue
		}
		if matches(rule.Verbs, req.Verb) && matches(rule.APIGroups, req.Group) && matches(rule.Resources, resource) {
			return true
		}
	}
	return false
}

func matches(list []string, s string) bool {
	return slices.Contains(list, s) || slices.Contains(list, rbacv1.VerbAll)
}

// TestManifestsAreConsistent: every binding names a role the manifests define and binds the
// control plane's ServiceAccount, and every role is bound (an unbound role grants nothing).
func TestManifestsAreConsistent(t *testing.T) {
	m := loadManifests(t)
	bound := map[string]bool{}
	for _, b := range m.clusterRoleBindings {
		require.Equal(t, "ClusterRole", b.RoleRef.Kind, b.Name)
		require.Contains(t, m.clusterRoles, b.RoleRef.Name, "ClusterRoleBinding %s", b.Name)
		require.Equal(t, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccount, Namespace: Namespace}}, b.Subjects, b.Name)
		bound["ClusterRole/"+b.RoleRef.Name] = true
	}
	for _, b := range m.roleBindings {
		require.Equal(t, "Role", b.RoleRef.Kind, b.Name)
		require.Contains(t, m.roles, b.RoleRef.Name, "RoleBinding %s", b.Name)
		require.Equal(t, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccount, Namespace: Namespace}}, b.Subjects, b.Name)
		bound["Role/"+b.RoleRef.Name] = true
	}
	for name := range m.clusterRoles {
		require.True(t, bound["ClusterRole/"+name], "ClusterRole %s is bound to nothing", name)
	}
	for name := range m.roles {
		require.True(t, bound["Role/"+name], "Role %s is bound to nothing", name)
	}
}

// TestKustomizationListsEveryManifest: `kubectl apply -k config/rbac` applies every file.
func TestKustomizationListsEveryManifest(t *testing.T) {
	m := loadManifests(t)
	var k struct {
		Resources []string `json:"resources"`
	}
	data, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &k))
	var files []string
	for _, f := range m.files {
		files = append(files, filepath.Base(f))
	}
	slices.Sort(files)
	slices.Sort(k.Resources)
	require.Equal(t, files, k.Resources)
}

// TestClusterPolicyCoversEverySpecField: the admission policy that keeps the control plane's
// account from redirecting a Cluster checks every field of spec but taints (which the monitor
// writes), so a field added to federation.ClusterSpec is not left writable by accident.
func TestClusterPolicyCoversEverySpecField(t *testing.T) {
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	docs := documents(t, filepath.Join(manifestDir, "cluster-monitor-policy.yaml"))
	require.NoError(t, yaml.UnmarshalStrict(docs[0], &policy))
	checked := map[string]bool{}
	for _, v := range policy.Spec.Validations {
		for _, f := range []string{".spec.", ".spec.?"} {
			if rest, ok := strings.CutPrefix(v.Expression, "object"+f); ok {
				field, _, _ := strings.Cut(rest, " ")
				require.Equal(t, "object"+f+field+" == oldObject"+f+field, v.Expression)
				checked[field] = true
			}
		}
	}
	typ := reflect.TypeFor[federation.ClusterSpec]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "taints" {
			require.False(t, checked[name], "the policy must let the monitor write spec.taints")
			continue
		}
		require.True(t, checked[name], "the policy does not check spec.%s", name)
	}
}

// memberRole is the ClusterRole of config/rbac/member, what the control plane needs in a
// member cluster.
func memberRole(t testing.TB) rbacv1.ClusterRole {
	t.Helper()
	for _, doc := range documents(t, filepath.Join(manifestDir, "member", "member.yaml")) {
		var meta metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal(doc, &meta))
		if meta.Kind == "ClusterRole" {
			var r rbacv1.ClusterRole
			require.NoError(t, yaml.UnmarshalStrict(doc, &r))
			return r
		}
	}
	t.Fatal("no ClusterRole in config/rbac/member/member.yaml")
	return rbacv1.ClusterRole{}
}

// memberRequest is the request RBAC sees for a call the fake recorded.
func memberRequest(a fake.Action) request {
	switch a.Verb {
	case fake.VerbHealth:
		return request{Verb: "get", URL: "/readyz"}
	case fake.VerbVersion:
		return request{Verb: "get", URL: "/version"}
	case fake.VerbUpdateStatus:
		return request{Verb: "update", Group: a.Resource.Group, Resource: a.Resource.Resource, Subresource: "status", Namespace: a.Namespace}
	}
	return request{Verb: string(a.Verb), Group: a.Resource.Group, Resource: a.Resource.Resource, Subresource: a.Subresource, Namespace: a.Namespace}
}
