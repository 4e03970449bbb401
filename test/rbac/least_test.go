package rbac_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// secretRoles are the only roles that may grant anything on Secrets or FederatedSecrets (whose
// templates hold Secret data), each bound only where they are needed: the cluster set's
// credentials in fedkit-system, and fedkit-secrets for the loops of FederatedSecrets and the
// dependencies loop (a Secret a workload refers to, got by name).
var secretRoles = map[string][]string{
	"Role/fedkit-cluster-set":    {"get", "list", "watch"},
	"ClusterRole/fedkit-secrets": {"get"},
}

// grantsSecrets returns the verbs rules grant on core Secrets, and whether they grant anything
// on FederatedSecrets.
func grantsSecrets(rules []rbacv1.PolicyRule) (verbs []string, federated bool) {
	for _, r := range rules {
		for _, res := range r.Resources {
			switch {
			case matches(r.APIGroups, "") && (res == "secrets" || res == rbacv1.ResourceAll):
				verbs = append(verbs, r.Verbs...)
			case matches(r.APIGroups, "types.federation.k8s.io") && (strings.HasPrefix(res, "federatedsecrets") || res == rbacv1.ResourceAll):
				federated = true
			}
		}
	}
	slices.Sort(verbs)
	return slices.Compact(verbs), federated
}

// TestSecretsOnlyThroughTheirOwnRoles: the host's Secrets are read in fedkit-system (the
// cluster set's Role) and, cluster-wide, only through fedkit-secrets, which gets a Secret by
// name (never lists or watches one) and holds every right on FederatedSecrets; no loop's own
// role grants either. So a control plane that federates no Secrets binds no cluster-wide
// access to them.
func TestSecretsOnlyThroughTheirOwnRoles(t *testing.T) {
	m := loadManifests(t)
	check := func(kind, name string, rules []rbacv1.PolicyRule) {
		verbs, federated := grantsSecrets(rules)
		want, ok := secretRoles[kind+"/"+name]
		switch {
		case !ok && (len(verbs) > 0 || federated):
			t.Errorf("%s %s grants %v on Secrets (FederatedSecrets: %v): only %v may", kind, name, verbs, federated, secretRoles)
		case ok && !slices.Equal(verbs, want):
			t.Errorf("%s %s grants %v on Secrets; want %v", kind, name, verbs, want)
		}
	}
	for name, r := range m.clusterRoles {
		check("ClusterRole", name, r.Rules)
	}
	for name, r := range m.roles {
		check("Role", name, r.Rules)
	}
	_, federated := grantsSecrets(m.clusterRoles["fedkit-secrets"].Rules)
	require.True(t, federated, "fedkit-secrets grants the FederatedSecrets")
}

// TestMemberSecretsOnlyThroughTheirOwnRole: in a member, config/rbac/member's role grants
// nothing on Secrets; secrets.yaml's role, which `kubectl fed join --secrets` applies where
// FederatedSecrets go, grants what sync and the collector do with them.
func TestMemberSecretsOnlyThroughTheirOwnRole(t *testing.T) {
	verbs, _ := grantsSecrets(memberRole(t).Rules)
	require.Empty(t, verbs, "config/rbac/member/member.yaml's ClusterRole grants Secrets")
	secrets := memberSecretsRole(t)
	verbs, _ = grantsSecrets(secrets.Rules)
	require.Equal(t, []string{"create", "delete", "get", "list", "patch", "update", "watch"}, verbs, "ClusterRole %s", secrets.Name)
}

// TestReadmeNamesEveryRole: the README's least-privilege section names every role of
// config/rbac and config/rbac/member, so what an operator binds is what the README explains.
func TestReadmeNamesEveryRole(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Least privilege\n")
	require.True(t, ok, "README.md has no section ## Least privilege")
	section, _, _ = strings.Cut(section, "\n## ")
	m := loadManifests(t)
	names := []string{memberRole(t).Name, memberSecretsRole(t).Name}
	for name := range m.clusterRoles {
		names = append(names, name)
	}
	for name := range m.roles {
		names = append(names, name)
	}
	for _, name := range names {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("README.md's least-privilege section does not name role `%s`", name)
		}
	}
}

// memberSecretsRole is the ClusterRole of config/rbac/member/secrets.yaml.
func memberSecretsRole(t testing.TB) rbacv1.ClusterRole {
	t.Helper()
	for _, doc := range documents(t, filepath.Join(manifestDir, "member", "secrets.yaml")) {
		var r rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal(doc, &r))
		if r.Kind == "ClusterRole" {
			require.NoError(t, yaml.UnmarshalStrict(doc, &r))
			return r
		}
	}
	t.Fatal("no ClusterRole in config/rbac/member/secrets.yaml")
	return rbacv1.ClusterRole{}
}

// TestPropagationWritesNativeObjectsOnlyThroughPatch: the propagation loop writes the user's
// own objects on the host (Deployments, Services, ...) through the narrowest verbs it needs:
// a merge patch of its one annotation (patch), and the fleet's counts through the status
// subresource (update .../status). It never updates such an object whole, so its role grants
// no update on one; TestEachLoopNeedsOnlyItsRoles checks the loop keeps to that.
func TestPropagationWritesNativeObjectsOnlyThroughPatch(t *testing.T) {
	m := loadManifests(t)
	for _, r := range m.clusterRoles["fedkit-propagation"].Rules {
		if slices.ContainsFunc(r.APIGroups, func(g string) bool { return strings.HasSuffix(g, "federation.k8s.io") }) {
			continue
		}
		for _, res := range r.Resources {
			allowed := []string{"get", "list", "watch", "patch"}
			if strings.HasSuffix(res, "/status") {
				allowed = []string{"update"}
			}
			for _, v := range r.Verbs {
				if !slices.Contains(allowed, v) {
					t.Errorf("fedkit-propagation grants %s on %s (groups %v); on the user's objects it needs only %v", v, res, r.APIGroups, allowed)
				}
			}
		}
	}
}
