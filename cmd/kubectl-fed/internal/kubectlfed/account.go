package kubectlfed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/config/rbac/member"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/manifest"
)

// JoinedClusterAnnotation, on the member objects join makes, names the Cluster they were
// made for.
const JoinedClusterAnnotation = "federation.k8s.io/joined-cluster"

// account is what join grants in a member for one Cluster of one federation: base is
// config/rbac/member's objects (its Namespace; the ServiceAccount, ClusterRole and
// ClusterRoleBinding called name), secrets is config/rbac/member/secrets.yaml's (the
// ClusterRole and binding called name-secrets).
type account struct {
	name, namespace string
	base, secrets   []*unstructured.Unstructured
}

// accountName is the name of the member account of Cluster cluster in the federation whose
// namespace on the host has uid fed: "fedkit-", the cluster's name (its first 40
// characters), and ten hex digits of a hash of both. Two Clusters on one API server, of two
// federations or under two names, never share an account, so unjoining one never revokes
// another's credentials.
func accountName(cluster string, fed types.UID) string {
	sum := sha256.Sum256([]byte(string(fed) + "/" + cluster))
	base := cluster
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-.")
	}
	return "fedkit-" + base + "-" + hex.EncodeToString(sum[:])[:10]
}

// newAccount is the member account of cluster in the federation fed.
func newAccount(cluster string, fed types.UID) (account, error) {
	a := account{name: accountName(cluster, fed)}
	var err error
	if a.base, err = a.objects(member.Manifest(), "", cluster); err != nil {
		return account{}, fmt.Errorf("config/rbac/member/member.yaml: %w", err)
	}
	if a.secrets, err = a.objects(member.SecretsManifest(), "-secrets", cluster); err != nil {
		return account{}, fmt.Errorf("config/rbac/member/secrets.yaml: %w", err)
	}
	for _, u := range a.base {
		if u.GetKind() == "ServiceAccount" {
			a.namespace = u.GetNamespace()
		}
	}
	if a.namespace == "" {
		return account{}, errors.New("config/rbac/member/member.yaml has no ServiceAccount")
	}
	return a, nil
}

// objects are the objects of the YAML stream data, renamed for the account: its
// ServiceAccount a.name, its roles and bindings a.name+suffix (a binding's roleRef and
// ServiceAccount subjects too), each annotated with the cluster. A Namespace keeps its name.
func (a account) objects(data []byte, suffix, cluster string) ([]*unstructured.Unstructured, error) {
	docs, err := manifest.Split(data)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := d.Object
		switch u.GetKind() {
		case "Namespace":
			out = append(out, u)
			continue
		case "ServiceAccount":
			u.SetName(a.name)
		case "ClusterRole":
			u.SetName(a.name + suffix)
		case "ClusterRoleBinding":
			u.SetName(a.name + suffix)
			if err := unstructured.SetNestedField(u.Object, a.name+suffix, "roleRef", "name"); err != nil {
				return nil, err
			}
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, s := range subjects {
				if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" {
					m["name"] = a.name
				}
			}
			if err := unstructured.SetNestedSlice(u.Object, subjects, "subjects"); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s %s: join knows no such kind", u.GetKind(), u.GetName())
		}
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[JoinedClusterAnnotation] = cluster
		u.SetAnnotations(ann)
		out = append(out, u)
	}
	return out, nil
}

// revocable are the account's objects unjoin deletes, bindings before roles before the
// ServiceAccount: all but the Namespace, which other accounts share.
func (a account) revocable() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, list := range [][]*unstructured.Unstructured{a.secrets, a.base} {
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].GetKind() != "Namespace" {
				out = append(out, list[i])
			}
		}
	}
	return out
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// federationID is the uid of the federation's namespace on the host: what tells one
// federation's member accounts from another's. join creates the namespace (create); unjoin
// needs it to exist.
func federationID(ctx context.Context, h *applier, host federation.Reader, namespace string, create bool) (types.UID, error) {
	if create {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(namespace)
		if err := h.apply(ctx, ns); err != nil {
			return "", fmt.Errorf("host: %w", err)
		}
	}
	u, err := host.Get(ctx, namespacesGVR, "", namespace)
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("host: the federation namespace %s is gone: the member account of this federation cannot be told from others (delete it in the member by hand: annotation %s)", namespace, JoinedClusterAnnotation)
	case err != nil:
		return "", fmt.Errorf("host: namespace %s: %w", namespace, err)
	}
	return u.GetUID(), nil
}
