package plan_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/sync/plan"
)

// object decodes one YAML object.
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.UnmarshalStrict([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestOccupant: a namespace sync created is deleted only when nothing but what the federation
// is removing lives in it. Another team's objects of any kind keep it, and so do the
// federation's objects of other federated types still placed there; the member object just
// deleted, the federation's objects being deleted, what those own (transitively), what the API
// server puts in every namespace and Events do not.
func TestOccupant(t *testing.T) {
	var (
		rbac      = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
		netpol    = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
		leases    = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
		widgets   = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
		services  = schema.GroupVersionResource{Version: "v1", Resource: "services"}
		deploys   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
		rsets     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
		pods      = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
		cms       = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
		sas       = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
		secrets   = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
		events    = schema.GroupVersionResource{Version: "v1", Resource: "events"}
		newEvents = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
	)
	deployment := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop, uid: d-1, labels: {federation.k8s.io/managed-by: fedkit}}}`
	replicaSet := `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-1, namespace: shop, uid: rs-1, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-1}]}}`
	pod := `{apiVersion: v1, kind: Pod, metadata: {name: web-1-a, namespace: shop, uid: p-1, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, uid: rs-1}]}}`
	found := func(gvr schema.GroupVersionResource, doc string) plan.NamespaceObject {
		return plan.NamespaceObject{Resource: gvr, Object: object(t, doc)}
	}
	for _, tc := range []struct {
		name    string
		deleted string // the member object the driver just deleted
		objs    []plan.NamespaceObject
		want    string
	}{
		{name: "empty", want: ""},
		{name: "another team's RoleBinding", objs: []plan.NamespaceObject{found(rbac, `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: other-team, namespace: shop}}`)},
			want: "rolebindings.rbac.authorization.k8s.io shop/other-team"},
		{name: "a NetworkPolicy", objs: []plan.NamespaceObject{found(netpol, `{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: other-team, namespace: shop}}`)},
			want: "networkpolicies.networking.k8s.io shop/other-team"},
		{name: "a Lease", objs: []plan.NamespaceObject{found(leases, `{apiVersion: coordination.k8s.io/v1, kind: Lease, metadata: {name: other-team, namespace: shop}}`)},
			want: "leases.coordination.k8s.io shop/other-team"},
		{name: "a custom resource", objs: []plan.NamespaceObject{found(widgets, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: other-team, namespace: shop}}`)},
			want: "widgets.example.com shop/other-team"},
		{name: "an object of the federation still placed there", objs: []plan.NamespaceObject{found(services, `{apiVersion: v1, kind: Service, metadata: {name: other-app, namespace: shop, labels: {federation.k8s.io/managed-by: fedkit}}}`)},
			want: "services shop/other-app"},
		{name: "another federation's object being deleted", objs: []plan.NamespaceObject{found(services, `{apiVersion: v1, kind: Service, metadata: {name: other-app, namespace: shop, deletionTimestamp: "2024-01-01T00:00:00Z", labels: {federation.k8s.io/managed-by: other}}}`)},
			want: "services shop/other-app"},
		{name: "what the object deleted owns: its ReplicaSet and their Pod", deleted: deployment,
			objs: []plan.NamespaceObject{found(pods, pod), found(rsets, replicaSet)}, want: ""},
		{name: "a Pod of a ReplicaSet nothing removes", objs: []plan.NamespaceObject{found(pods, pod), found(rsets, replicaSet)},
			want: "pods shop/web-1-a"},
		{name: "an object with an owner that stays", deleted: deployment,
			objs: []plan.NamespaceObject{found(cms, `{apiVersion: v1, kind: ConfigMap, metadata: {name: both, namespace: shop, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-1}, {apiVersion: v1, kind: Service, name: s, uid: s-1}]}}`)},
			want: "configmaps shop/both"},
		{name: "the federation's object being deleted, and what it owns",
			objs: []plan.NamespaceObject{found(deploys, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop, uid: d-1, deletionTimestamp: "2024-01-01T00:00:00Z", labels: {federation.k8s.io/managed-by: fedkit}}}`), found(rsets, replicaSet)},
			want: ""},
		{name: "what every namespace holds, and events", objs: []plan.NamespaceObject{
			found(cms, `{apiVersion: v1, kind: ConfigMap, metadata: {name: kube-root-ca.crt, namespace: shop}}`),
			found(sas, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: default, namespace: shop}}`),
			found(secrets, `{apiVersion: v1, kind: Secret, type: kubernetes.io/service-account-token, metadata: {name: default-token, namespace: shop}}`),
			found(events, `{apiVersion: v1, kind: Event, metadata: {name: web.1, namespace: shop}}`),
			found(newEvents, `{apiVersion: events.k8s.io/v1, kind: Event, metadata: {name: web.2, namespace: shop}}`),
		}, want: ""},
		{name: "a ServiceAccount of another name", objs: []plan.NamespaceObject{found(sas, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: builder, namespace: shop}}`)},
			want: "serviceaccounts shop/builder"},
		{name: "an opaque Secret", objs: []plan.NamespaceObject{found(secrets, `{apiVersion: v1, kind: Secret, type: Opaque, metadata: {name: default-token, namespace: shop}}`)},
			want: "secrets shop/default-token"},
		{name: "a kube-root-ca.crt of another group", objs: []plan.NamespaceObject{found(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "configmaps"}, `{apiVersion: example.com/v1, kind: ConfigMap, metadata: {name: kube-root-ca.crt, namespace: shop}}`)},
			want: "configmaps.example.com shop/kube-root-ca.crt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var deleted *unstructured.Unstructured
			if tc.deleted != "" {
				deleted = object(t, tc.deleted)
			}
			if got := plan.Occupant("", "shop", deleted, tc.objs); got != tc.want {
				t.Errorf("Occupant() = %q; want %q", got, tc.want)
			}
		})
	}
}

// TestCreatedNamespace: sync deletes again only a namespace it created for its own
// federation, and not one being deleted already.
func TestCreatedNamespace(t *testing.T) {
	for _, tc := range []struct {
		name, doc, identity string
		want                bool
	}{
		{name: "created by sync", doc: `{apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {federation.k8s.io/managed-by: fedkit}, annotations: {federation.k8s.io/created-by-sync: "true"}}}`, want: true},
		{name: "of another federation", identity: "blue", doc: `{apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {federation.k8s.io/managed-by: fedkit}, annotations: {federation.k8s.io/created-by-sync: "true"}}}`},
		{name: "of this identity", identity: "blue", doc: `{apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {federation.k8s.io/managed-by: blue}, annotations: {federation.k8s.io/created-by-sync: "true"}}}`, want: true},
		{name: "labelled but not created by sync", doc: `{apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {federation.k8s.io/managed-by: fedkit}}}`},
		{name: "annotated but unlabelled", doc: `{apiVersion: v1, kind: Namespace, metadata: {name: shop, annotations: {federation.k8s.io/created-by-sync: "true"}}}`},
		{name: "being deleted", doc: `{apiVersion: v1, kind: Namespace, metadata: {name: shop, deletionTimestamp: "2024-01-01T00:00:00Z", labels: {federation.k8s.io/managed-by: fedkit}, annotations: {federation.k8s.io/created-by-sync: "true"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plan.CreatedNamespace(object(t, tc.doc), tc.identity); got != tc.want {
				t.Errorf("CreatedNamespace() = %v; want %v", got, tc.want)
			}
		})
	}
}
